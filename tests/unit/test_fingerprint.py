"""What the remembered verdicts are keyed by: the code that judges, never a front end's (a
report format, a renderer fixed, the command line, scan), so no such change re-judges
anything (issue 51). The layer contract (test_layers.py) keeps the judging code from importing
a front end; here every part of the package is placed on one side or the other."""

from __future__ import annotations

from paths import ROOT

from canary.cache.fingerprint import JUDGING_CODE, code_fingerprint

#: what only asks for verdicts or shows them
FRONT_ENDS = {
    "__init__.py",
    "__main__.py",
    "api.py",
    "action",
    "cli",
    "init",
    "pytest_plugin",
    "reports",
    "scan",
}


def test_every_part_of_the_package_judges_or_is_a_front_end():
    package = ROOT / "canary"
    parts = {
        path.name
        for path in package.iterdir()
        if path.suffix == ".py" or (path / "__init__.py").is_file()
    }
    assert not set(JUDGING_CODE) & FRONT_ENDS
    assert parts == set(JUDGING_CODE) | FRONT_ENDS


def test_the_judging_fingerprint_is_not_the_whole_packages():
    assert code_fingerprint(JUDGING_CODE) != code_fingerprint()
