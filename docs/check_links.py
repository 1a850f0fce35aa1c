"""Checks the internal links of the built site, offline: every relative ``href`` and ``src``
points at a file of the site, and every ``#fragment`` at an ``id`` of its page.

    python docs/check_links.py docs/_build/html

Prints one line per broken link and exits 1 if there is any. Links to other sites (``http:``,
``https:``, ``mailto:``) are not followed: the build machine has no network.
"""

import argparse
import os
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key) and (key == "id" or tag == "a"):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def broken_links(site):
    """``[(page, link, why)]`` of every broken internal link under the folder ``site``."""
    site = os.path.abspath(site)
    cache, broken = {}, []
    for folder, _, files in os.walk(site):
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            page_path = os.path.join(folder, name)
            for link in _parse(page_path, cache).links:
                parts = urlsplit(link)
                if parts.scheme or link.startswith("//"):
                    continue  # another site, or a data: / javascript: URL
                target = page_path
                if parts.path:
                    target = os.path.normpath(os.path.join(folder, unquote(parts.path)))
                    if os.path.isdir(target):
                        target = os.path.join(target, "index.html")
                page = os.path.relpath(page_path, site)
                if not target.startswith(site):
                    broken.append((page, link, "outside the site"))
                elif not os.path.isfile(target):
                    broken.append((page, link, "no such file"))
                elif parts.fragment and target.endswith(".html"):
                    if unquote(parts.fragment) not in _parse(target, cache).ids:
                        broken.append((page, link, "no such anchor"))
    return broken


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", help="the built site, e.g. docs/_build/html")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.site, "index.html")):
        print(f"check_links: {args.site} holds no index.html; run `make docs` first")
        return 2
    broken = broken_links(args.site)
    for page, link, why in broken:
        print(f"{page}: {link} ({why})")
    print(f"check_links: {len(broken)} broken internal link(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
