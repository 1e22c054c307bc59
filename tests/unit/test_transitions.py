"""Transitions found in a row of results, closest lines, the subject's diff and its short form."""

from __future__ import annotations

from canary.engine.became import SubjectText, closest_lines, logical_lines, unified_diff
from canary.engine.outcomes import Became, Place, Result, RunReport, Status
from canary.engine.transitions import find_transitions, latest, with_transitions
from canary.reports.jsonio import load_json, to_json
from canary.reports.transition import markdown_notes, short_diff

P, F, S, X, E, W = Status.PASS, Status.FAIL, Status.SKIP, Status.XFAIL, Status.ERROR, Status.WARN


def row(*statuses: Status, versions: tuple[str, ...] = ()) -> list[Result]:
    versions = versions or tuple(f"1.{i}.0" for i in range(len(statuses)))
    return [
        Result("up", "c", v, s, "gone" if s is F else "")
        for v, s in zip(versions, statuses, strict=True)
    ]


def spans(results: list[Result]) -> list[tuple[str, str, tuple[str, ...]]]:
    order = {"up": [r.version for r in results]}
    return [(t.last_pass, t.first_fail, t.failing) for t in find_transitions(results, order)]


def test_a_failing_run_after_a_hold_is_a_transition_skips_and_errors_stepped_over():
    assert spans(row(P, P, F, F)) == [("1.1.0", "1.2.0", ("1.2.0", "1.3.0"))]
    assert spans(row(P, S, E, F, W)) == [("1.0.0", "1.3.0", ("1.3.0", "1.4.0"))]
    assert spans(row(F, F, P)) == []  # never held before failing: no transition
    assert spans(row(P, X, P)) == []  # a known break is excused
    assert spans(row(P, F, P, F)) == [
        ("1.0.0", "1.1.0", ("1.1.0",)),
        ("1.2.0", "1.3.0", ("1.3.0",)),
    ]


def test_a_branch_after_the_releases_can_be_where_it_broke():
    results = row(P, P, F, versions=("1.0.0", "2.0.0", "main"))
    assert spans(results) == [("2.0.0", "main", ("main",))]


def test_only_the_latest_transition_of_a_check_is_explained():
    results = row(P, F, P, F)
    asked = []

    def explain(transitions):
        asked.extend(t.first_fail for t in transitions)
        return [(Became("line", (Place("x = 1", "m.py", 3),)), "--- a\n+++ b")] * len(asked)

    out = with_transitions(results, {"up": [r.version for r in results]}, explain)
    assert asked == ["1.3.0"]
    assert [(r.last_pass, r.first_fail) for r in out] == [
        ("", ""),
        ("1.0.0", "1.1.0"),
        ("", ""),
        ("1.2.0", "1.3.0"),
    ]
    assert out[1].became is None and out[3].became is not None
    assert len(latest(find_transitions(results, {"up": [r.version for r in results]}))) == 1


def test_what_it_became_goes_to_json_and_back():
    became = Became("line", (Place("a = 1", "m.py", 3), Place("a = 2", "m.py", 9)))
    result = Result("up", "c", "2.0", F, "gone", "index", "1.0", "2.0", became, "--- x\n+++ y")
    data = result.to_json()
    assert data["closest"] == {
        "what": "line",
        "text": "a = 1",
        "path": "m.py",
        "line": 3,
        "also": [{"text": "a = 2", "path": "m.py", "line": 9}],
    }
    back = load_json(to_json(RunReport([result], {}, {}))).results[0]
    assert back == result


def test_logical_lines_join_a_statement_written_over_several_lines():
    text = "x = call(\n    a,\n    b,\n)\n# note\ny = 2\n"
    assert logical_lines(text) == [(0, "x = call( a, b, )"), (5, "y = 2")]
    assert logical_lines("    def f(:\n") == [(0, "def f(:")]  # does not tokenize: as written


def test_closest_lines_prefer_the_rewritten_line_and_say_nothing_when_nothing_is_alike():
    subject = SubjectText(
        "f",
        "m.py",
        10,
        "def f(self):\n    self.rate = args.rate\n    self.enabled = has(cfg) and self.rate != 0\n",
    )
    found = closest_lines("self.enabled = is_moe and args.rate != 0", subject)
    assert found == (Place("self.enabled = has(cfg) and self.rate != 0", "m.py", 12),)
    assert closest_lines("import torch.distributed", subject) == ()


def test_the_diff_carries_the_upstream_lines_of_both_sides_and_says_when_it_is_cut():
    old = SubjectText("f", "a.py", 40, "def f():\n    return 1\n")
    new = SubjectText("f", "b.py", 7, "def f():\n    return 2\n")
    diff = unified_diff(old, new, "1.0", "2.0", limit=100).splitlines()
    assert diff == [
        "--- a.py (1.0)",
        "+++ b.py (2.0)",
        "@@ -40,2 +7,2 @@",
        " def f():",
        "-    return 1",
        "+    return 2",
    ]
    cut = unified_diff(old, new, "1.0", "2.0", limit=3).splitlines()
    assert cut[-1] == "... 3 more diff lines cut"
    gone = unified_diff(old, None, "1.0", "2.0", limit=100).splitlines()
    assert gone[:3] == ["--- a.py (1.0)", "+++ /dev/null (2.0)", "@@ -40,2 +0,0 @@"]


def test_markdown_folds_the_diff_in_a_fence_longer_than_its_backticks_and_notes_a_cut():
    diff = "\n".join(
        ["--- a.py (1.0)", "+++ a.py (2.0)", "@@ -1,70 +1,70 @@"]
        + [f"-x = '```{i}'" for i in range(70)]
    )
    result = Result("up", "c", "2.0", F, "gone", "", "1.0", "2.0", None, diff)
    notes = "\n".join(markdown_notes([result], str))
    assert "  - broke in 2.0 (held on 1.0)" in notes
    assert "  ````diff" in notes and "```diff" not in notes.replace("````diff", "")
    assert "diff cut at 60 of 73 lines; `canary explain` shows all of it" in notes
    assert short_diff("a\nb", 5) == ("a\nb", "")
