"""The suite's rule for missing data: a test without its Debian data skips, naming the package;
in CI it fails, and so does any other skip (tests/debian_data.py, tests/conftest.py)."""

import os
import subprocess
import sys

import pytest

from tests import debian_data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A test file run by pytester with the suite's hooks: one test whose package is "missing",
# one that skips for another reason, one that passes.
HOOKS = """
from tests.conftest import (
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_runtest_setup,
)


def pytest_configure(config):
    config.addinivalue_line("markers", "debian_data: reads Debian data")
"""
TESTS = """
import pytest

from tests import debian_data

debian_data.PROBES["fortunes"] = lambda: False  # before the first probe: as if not installed


@debian_data.needs("fortunes", "wamerican")
def test_reads_fortunes():
    pass


def test_skips_for_an_extra():
    pytest.skip("gensim comes with the bench extra")


def test_runs():
    pass
"""
# A module that skips itself whole, at collection.
SKIPPED_MODULE = """
import pytest

pytest.importorskip("no_such_module_of_ours")


def test_never_collected():
    pass
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", ROOT)
    monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest(HOOKS)
    pytester.makepyfile(test_data=TESTS, test_skipped_module=SKIPPED_MODULE)
    return pytester


def test_outside_ci_missing_data_skips_with_the_package_named(suite):
    result = suite.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*missing Debian data: install fortunes*(`make data`)*"])


@pytest.mark.parametrize("value", ["true", "1"])
def test_in_ci_missing_data_and_any_skip_fail(suite, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "test_data.py")
    # The missing data fails the test's setup (an error), the other skip its report.
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*missing Debian data: install fortunes*(`make data`)*",
            "*skipped in CI, which must run every test: *gensim comes with the bench extra*",
        ],
        consecutive=False,
    )
    assert result.ret == 1
    # A module skipped whole fails its collection, which stops the run.
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "test_skipped_module.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*skipped in CI, which must run every test: *no_such_module*"])
    assert result.ret != 0


def test_ci_values_that_mean_no(monkeypatch):
    for value, expected in (("", False), ("0", False), ("False", False), ("true", True)):
        monkeypatch.setenv("CI", value)
        assert debian_data.in_ci() is expected, value
    monkeypatch.delenv("CI")
    assert debian_data.in_ci() is False


def test_a_misspelt_package_is_refused_when_the_marker_is_made():
    with pytest.raises(ValueError, match="no probe for the Debian package 'fortune'"):
        debian_data.needs("fortune")


def test_the_check_names_each_missing_package():
    code = (
        "import sys; from tests import debian_data\n"
        "debian_data.PROBES['wamerican'] = lambda: False\n"
        "sys.exit(debian_data.main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "missing Debian package: wamerican (`make data` installs it)" in done.stdout
