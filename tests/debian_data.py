"""The Debian data `make data` installs, probed in one place for the tests that read it.

Each package has one probe, which looks where keras_adl itself looks. A test that needs a
package asks for it with ``@debian_data.needs("fortunes", ...)`` (a marker that conftest.py
reads before the test runs) or ``debian_data.require(...)`` (inside a test or a fixture).
Outside CI a missing package skips the test with one line naming it; in CI (``CI=true``, which
``.ci/run`` sets) it fails the test with that line, so a run without the data cannot pass.

``python -m tests.debian_data`` prints one line per missing package and exits 1 if any is
missing: ``.ci/run`` runs it after ``make data``.
"""

import functools
import os
import shutil
import subprocess
import sys

import pytest

# The manual page of WordNet's lexicographer files (tests/data/test_english_tags.py).
LEXNAMES_MANUAL = "/usr/share/man/man5/lexnames.5WN.gz"
WAMERICAN = "/usr/share/dict/american-english"


def _fortunes():
    from keras_adl.data.fortunes import FORTUNE_TOPICS, find_fortunes

    directory = find_fortunes()
    return directory is not None and all(
        os.path.isfile(os.path.join(directory, topic)) for topic in FORTUNE_TOPICS
    )


def _wordnet():
    from keras_adl.data.text_corpora import WORDNET_DIR

    return os.path.isfile(os.path.join(WORDNET_DIR, "cntlist.rev")) and os.path.isfile(
        LEXNAMES_MANUAL
    )


def _tagger():
    if shutil.which("perl") is None:
        return False
    done = subprocess.run(["perl", "-MLingua::EN::Tagger", "-e", "1"], capture_output=True)
    return done.returncode == 0


def _fashion_mnist():
    from keras_adl.data.image_sources import find_fashion_mnist

    return find_fashion_mnist() is not None


# Debian package → its probe (what the tests read of it).
PROBES = {
    "fortunes": _fortunes,
    "wordnet-base": _wordnet,
    "liblingua-en-tagger-perl": _tagger,
    "wamerican": lambda: os.path.isfile(WAMERICAN),
    "dataset-fashion-mnist": _fashion_mnist,
    "man-db": lambda: shutil.which("man") is not None,
    "manpages-dev": lambda: os.path.isdir("/usr/share/man/man2"),
    "gettext": lambda: shutil.which("msgfmt") is not None,  # translate's msgfmt checks
}


def in_ci():
    """Whether this is a CI run (``CI`` set to anything but empty, 0 or false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@functools.cache
def installed(package):
    """Whether the Debian package's data is where the tests read it (probed once)."""
    if package not in PROBES:
        raise ValueError(f"no probe for the Debian package {package!r}; known: {sorted(PROBES)}")
    return bool(PROBES[package]())


def missing(*packages):
    """The packages of ``packages`` whose data is not installed, in the order given."""
    return [p for p in packages if not installed(p)]


def message(packages):
    """The one line a test without its data says."""
    names = ", ".join(packages)
    return f"missing Debian data: install {names} (`make data`)"


def require(*packages):
    """Skips the calling test (fails it in CI) unless every package's data is installed."""
    absent = missing(*packages)
    if absent:
        if in_ci():
            pytest.fail(message(absent), pytrace=False)
        pytest.skip(message(absent))


def needs(*packages):
    """A marker: the test runs only with these packages' data (conftest.py calls `require`)."""
    for package in packages:  # a misspelt name fails at collection, not as missing data
        if package not in PROBES:
            raise ValueError(
                f"no probe for the Debian package {package!r}; known: {sorted(PROBES)}"
            )
    return pytest.mark.debian_data(*packages)


def main():
    absent = missing(*PROBES)
    for package in absent:
        print(f"missing Debian package: {package} (`make data` installs it)")
    if not absent:
        print(f"Debian data: all {len(PROBES)} packages the tests read are installed")
    return 1 if absent else 0


if __name__ == "__main__":
    sys.exit(main())
