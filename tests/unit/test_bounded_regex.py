"""`matches` with bounded work: a catastrophic pattern is an error, not a hang, and Ctrl-C works."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

import pytest
from interruptible import interruptible
from judging import judge_inline

from canary.engine import bounded_regex
from canary.engine.outcomes import Status

#: nested quantifiers over a long run with no final match: exponential backtracking in `re`
CATASTROPHIC = r"(x+x+)+y"


def test_a_catastrophic_pattern_is_an_error_after_its_limit():
    with pytest.raises(bounded_regex.RegexError, match=r"went over its 0.2 s limit"):
        bounded_regex.search(re.compile(CATASTROPHIC), "x" * 5000, timeout=0.2)


@pytest.mark.parametrize(
    ("pattern", "flags", "text"),
    [
        (r"def \w+\(self", 0, "class A:\n    def run(self, x):\n        pass\n"),
        (r"^\s+return model$", re.M, "def f(model):\n    return model\n"),
        (r"RETURN", re.I, "return 1"),
        (r"a.b", re.S, "a\nb"),
        (r"\w+", re.A, "é"),
        (r"(?x) model \s* =", 0, "model = 1"),
        (r"num_items_in_batch(?!=)", 0, "num_items_in_batch=None"),
        (r"(?<=\.)replace\(", 0, "x.replace('a', 'b')"),
    ],
)
def test_answers_agree_with_re(pattern, flags, text):
    compiled = re.compile(pattern, flags)
    assert bounded_regex.search(compiled, text) == bool(compiled.search(text))


def test_a_catastrophic_matches_check_is_an_error_and_the_others_are_judged(tmp_path):
    upstream = {"up/__init__.py": "def run(model):\n    " + "x" * 5000 + " = 1\n"}
    checks = f"""\
        - {{id: hopeless, module: up, function: run, matches: ['{CATASTROPHIC}']}}
        - {{id: fine, module: up, function: run, matches: ['x+ = 1']}}
    """
    hopeless, fine = judge_inline(tmp_path, "up", upstream, checks, "1.0")
    assert hopeless.status is Status.ERROR and "went over its" in hopeless.detail
    assert fine.status is Status.PASS, fine


def test_ctrl_c_stops_a_hopeless_match_in_the_main_thread(tmp_path):
    """`re` holds the interpreter until the match ends: the interrupt would wait for it."""
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            import faulthandler, re, sys
            # The watchdog: should the interrupt not end the match, every thread's stack goes
            # to stderr (and the child exits) well before the test's own wait gives up.
            faulthandler.dump_traceback_later(120, exit=True)
            from canary.engine import bounded_regex
            try:
                print("matching", flush=True)
                bounded_regex.search(re.compile({CATASTROPHIC!r}), "x" * 5000, timeout=600)
            except KeyboardInterrupt:
                sys.exit(3)
            """
        )
    )
    child = subprocess.Popen(
        interruptible([sys.executable, str(script)]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "matching\n"
        child.send_signal(signal.SIGINT)
        # A hang detector, not a timing: the match would run for 600 s; an interrupted one
        # exits in milliseconds. A hang shows the child's stacks (the watchdog's dump).
        _, stacks = child.communicate(timeout=240)
        assert child.returncode == 3, stacks
    finally:
        child.kill()
        child.wait()
