"""A rewriter registered for several methods (`if name not in ("a", "b"): return src`) seeks
its texts in whichever of them it is given: each regex is one `any_of` check over the methods
some release defines, and a method of a class moved elsewhere is reached through the stand-in
subclass left at the old path (trl 1.0-1.15's `trl.trainer.kto_trainer.KTOTrainer`)."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from commands import canary
from servers import make_wheel, publish_releases, serving

from canary.scan.upstream.stand_ins import is_stand_in

OLD = """\
class KTOTrainer:
    def get_batch_logps(self, logits):
        return logits
"""
STAND_IN = '''\
import warnings
from ..experimental.kto import KTOTrainer as _KTOTrainer


class KTOTrainer(_KTOTrainer):
    """Moved to ktoup.experimental.kto."""

    def __init__(self, *args, **kwargs):
        warnings.warn("KTOTrainer moved to ktoup.experimental", FutureWarning)
        super().__init__(*args, **kwargs)
'''
REAL = """\
class KTOTrainer:
    def compute_ref(self, logits, inputs):
        shift_logits = logits[:, :-1, :]{tail}
        return shift_logits

    def _compute_kl(self, kl_logits):
        shift_kl = kl_logits[:, :-1, :]{tail}
        return shift_kl
"""


def release(version: str) -> dict[str, bytes]:
    """1.0.0: no method the rewriter selects; 1.1.0: the class moved to experimental (a
    stand-in left behind), its texts as the client expects; 1.2.0: `.contiguous()` dropped;
    2.0.0: the class back in the trainer module, still without it."""
    files = {"ktoup/__init__.py": b"", "ktoup/trainer/__init__.py": b""}
    if version == "1.0.0":
        return {**files, "ktoup/trainer/kto.py": OLD.encode()}
    real = REAL.format(tail=".contiguous()" if version == "1.1.0" else "").encode()
    if version == "2.0.0":
        return {**files, "ktoup/trainer/kto.py": real}
    return {
        **files,
        "ktoup/trainer/kto.py": STAND_IN.encode(),
        "ktoup/experimental/__init__.py": b"",
        "ktoup/experimental/kto/__init__.py": b"from .kto import KTOTrainer\n",
        "ktoup/experimental/kto/kto.py": real,
    }


@pytest.fixture(scope="module")
def wheels():
    return {v: make_wheel("ktoup", v, release(v)) for v in ("1.0.0", "1.1.0", "1.2.0", "2.0.0")}


@pytest.fixture
def index(tmp_path, monkeypatch, wheels):
    with serving() as server:
        publish_releases(server, "ktoup", wheels)
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        yield server


REWRITER = """\
import re
from collections import defaultdict

RL_FUNCTIONS = defaultdict(list)  # canary: rewrites ktoup.trainer.{{key}}

_LOGITS_RE = re.compile(r"shift_logits = logits\\[:, :-1, :\\]\\.contiguous\\(\\)")
_KL_RE = re.compile(r"shift_kl = kl_logits\\[:, :-1, :\\]\\.contiguous\\(\\)")


def clamp(function_name, function):
    if function_name {test}:
        return function
    function = _LOGITS_RE.sub("shift_logits = clamped(logits)", function)
    return _KL_RE.sub("shift_kl = clamped(kl_logits)", function)


RL_FUNCTIONS["kto"].append(clamp)
"""
SEVERAL = 'not in ("_compute_logps", "compute_ref", "_compute_kl")'


def scanned(tmp_path, requirement: str, test: str = SEVERAL) -> tuple[str, dict[str, dict]]:
    project = tmp_path / "client"
    (project / "client").mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(f'[project]\ndependencies = ["{requirement}"]\n')
    (project / "client" / "rl.py").write_text(REWRITER.format(test=test))
    status, text = canary("scan", str(project / "client"), "--upstream", "ktoup")
    assert status == 0, text
    checks = yaml.safe_load(text.split("---\n", 1)[1])["checks"] or []
    return text, {c["id"]: c for c in checks}


def alternatives(check: dict) -> list[tuple[str, str, list[str]]]:
    return [(a["module"], a["function"], a["matches"]) for a in check.get("any_of", [])]


def test_each_regex_is_one_check_over_the_methods_it_may_be_in(index, tmp_path):
    text, checks = scanned(tmp_path, "ktoup>=1.0")
    regexes = [check for check in checks.values() if "any_of" in check]
    assert len(regexes) == 2
    logits, kl = regexes
    # no release has _compute_logps: no alternative of either check
    assert alternatives(logits) == [
        (
            "ktoup.trainer.kto",
            "KTOTrainer.compute_ref",
            [r"shift_logits = logits\[:, :-1, :\]\.contiguous\(\)"],
        ),
        (
            "ktoup.trainer.kto",
            "KTOTrainer._compute_kl",
            [r"shift_logits = logits\[:, :-1, :\]\.contiguous\(\)"],
        ),
    ]
    assert [a[2] for a in alternatives(kl)] == [
        [r"shift_kl = kl_logits\[:, :-1, :\]\.contiguous\(\)"]
    ] * 2
    # held only on 1.1.0: gated from there, red from the release that dropped the text
    assert logits["since"] == kl["since"] == "1.1.0"
    assert text.count("# FAILS from 1.2.0 on (newest in range 2.0.0), held before") == 2
    assert "module: ktoup.trainer.kto\n    matches:" not in text  # never the module's source


def test_one_selected_method_stays_a_plain_check_of_that_method(index, tmp_path):
    text, checks = scanned(tmp_path, "ktoup>=1.0", test='!= "compute_ref"')
    texts = [c for c in checks.values() if "matches" in c]
    assert {(c["module"], c["function"]) for c in texts} == {
        ("ktoup.trainer.kto", "KTOTrainer.compute_ref")
    }
    assert not any("any_of" in c for c in checks.values())
    # each regex judged alone: the logits one holds on 1.1.0 and is gated there; the KL one,
    # never in compute_ref, no longer keeps it failing on every release: a warning of its own
    logits, kl = sorted(texts, key=lambda c: "shift_kl" in c["matches"][0])
    assert logits["since"] == "1.1.0" and "shift_logits" in logits["matches"][0]
    assert "shift_kl" in kl["matches"][0] and kl["severity"] == "info" and "since" not in kl
    said = "# scan: broken on every release in range (1.0.0 to 2.0.0): no match for /shift_kl"
    assert said in text and "closest now on 2.0.0: `shift_logits = logits[:, :-1, :]`" in text


def test_a_stand_in_at_the_newest_release_is_followed_to_the_class_that_defines_it(index, tmp_path):
    # 2.0.0 excluded: the newest release read holds only the stand-in
    text, checks = scanned(tmp_path, "ktoup>=1.0,!=2.0.0")
    regexes = [check for check in checks.values() if "any_of" in check]
    assert [[a[:2] for a in alternatives(c)] for c in regexes] == [
        [
            ("ktoup.trainer.kto", "KTOTrainer.compute_ref"),
            ("ktoup.trainer.kto", "KTOTrainer._compute_kl"),
        ]
    ] * 2
    assert text.count("# FAILS from 1.2.0 on (newest in range 1.2.0), held before") == 2


def test_a_subclass_with_a_body_of_its_own_is_no_stand_in():
    stand_in = textwrap.dedent(STAND_IN.split("\n\n\n", 1)[1])
    assert is_stand_in(stand_in)
    assert is_stand_in("class A(B):\n    pass\n")
    assert not is_stand_in("class A:\n    pass\n")  # no base to stand in for
    own = stand_in + "\n    def compute_ref(self, logits, inputs):\n        return logits\n"
    assert not is_stand_in(own)
    setup = stand_in.replace("super().__init__(*args, **kwargs)", "self.beta = 0.1")
    assert not is_stand_in(setup)
