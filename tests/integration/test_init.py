"""`canary init` in a downstream repository (tests/fixtures/adopter) whose upstream, a small trl,
is served on loopback: what it writes, that `canary check` then gives the expected verdicts,
that it is idempotent and never overwrites an edit, and that its workflows pass actionlint."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from adopter import downstream_copy, upstream_index
from test_workflows import ROOT, assert_least_privilege_and_bounded, run_actionlint

from canary.cli.main import main
from canary.init.workflows import ACTION, ACTION_REF, NIGHTLY_WORKFLOW, PR_WORKFLOW

WRITTEN = ["canary/trl.yaml", "canary/trl.lock", PR_WORKFLOW, NIGHTLY_WORKFLOW]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    with upstream_index(monkeypatch, tmp_path / "cache") as server:
        yield downstream_copy(tmp_path / "patchwork"), server


def init(repo: Path, capsys, *args: str) -> tuple[int, str]:
    code = main(["init", str(repo), "--upstream", "trl", *args])
    return code, capsys.readouterr().out


def snapshot(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()}


def check_of(matrix: Path, function: str) -> str:
    """The id scan gave the check of `function` (ids are scan's to choose)."""
    checks = yaml.safe_load(matrix.read_text())["checks"]
    return next(c["id"] for c in checks if c.get("function") == function)


def verdicts(matrix: str) -> tuple[int, dict[tuple[str, str], str]]:
    code = main(["check", matrix, "--format", "json", "--output", "r.json"])
    results = json.loads(Path("r.json").read_text())["results"]
    return code, {(r["check"], r["version"]): r["status"] for r in results}


def test_init_then_check_gives_the_expected_verdicts(repo, capsys, monkeypatch):
    """scan judges its proposals on the releases: a contract gone in 1.1.0 comes either red or
    gated `until: "1.1.0"` with a comment to review. The reviewer, whose patch still needs it,
    drops the gate, and canary reports the break."""
    repo, _ = repo
    code, out = init(repo, capsys)
    assert code == 0, out
    for path in WRITTEN:
        assert (repo / path).is_file(), out
        assert f"wrote {path}" in out
    assert "wrote canary/trl.lock: 3 versions (1.0.0, 1.1.0, main)" in out
    assert 'wrote pyproject.toml: [tool.canary] matrices = ["canary"]' in out
    pyproject = (repo / "pyproject.toml").read_text()
    original = (ROOT / "tests/fixtures/adopter/pyproject.toml").read_text()
    assert pyproject == original + '\n[tool.canary]\nmatrices = ["canary"]\n'
    assert "Next:" in out and "canary check canary` and read" in out
    assert re.search(r"The nightly runs every night at 05:\d\d UTC; ahead of the releases", out)
    assert "the newest pre-release and from GitHub trl main:\n" in out
    monkeypatch.chdir(repo)
    matrix = Path("canary/trl.yaml")
    swapped = check_of(matrix, "disable_gradient_checkpointing")
    wrapped = check_of(matrix, "GRPOTrainer.compute_loss")
    checks = {c["id"]: c for c in yaml.safe_load(matrix.read_text())["checks"]}
    gated = checks[swapped].get("until") == "1.1.0"
    code, cells = verdicts(str(matrix))
    assert cells == {
        (swapped, "1.0.0"): "pass",
        (swapped, "1.1.0"): "skip" if gated else "fail",
        (wrapped, "1.0.0"): "pass",
        (wrapped, "1.1.0"): "pass",
    }
    assert code == (0 if gated else 1)
    matrix.write_text(re.sub(r'\n *until: "1\.1\.0"', "", matrix.read_text()))
    code, cells = verdicts(str(matrix))
    assert code == 1
    assert cells[(swapped, "1.1.0")] == "fail" and cells[(wrapped, "1.1.0")] == "pass"
    assert main(["validate", str(matrix)]) == 0


def test_a_second_run_writes_nothing(repo, capsys):
    repo, _ = repo
    assert init(repo, capsys)[0] == 0
    before = snapshot(repo)
    code, out = init(repo, capsys)
    assert code == 0
    assert snapshot(repo) == before
    assert "wrote" not in out
    assert out.count("(up to date)") == 3 and "kept canary/trl.lock" in out
    assert "kept pyproject.toml (has [tool.canary]; left as it is)" in out
    assert "nothing missing: 1 matrices in canary/, both workflows" in out


def test_edits_are_kept_and_only_what_is_missing_is_added(repo, capsys):
    repo, _ = repo
    assert init(repo, capsys)[0] == 0
    matrix, pr = repo / "canary/trl.yaml", repo / PR_WORKFLOW
    matrix.write_text(matrix.read_text() + "# reviewed\n")
    pr.write_text(pr.read_text().replace("timeout-minutes: 30", "timeout-minutes: 12"))
    (repo / "canary/trl.lock").unlink()
    (repo / NIGHTLY_WORKFLOW).unlink()
    edited = {p: (repo / p).read_text() for p in ("canary/trl.yaml", PR_WORKFLOW)}
    code, out = init(repo, capsys)
    assert code == 0, out
    assert {p: (repo / p).read_text() for p in edited} == edited
    assert "kept canary/trl.yaml (exists; left as it is)" in out
    assert f"kept {PR_WORKFLOW} (exists; left as it is)" in out
    assert "wrote canary/trl.lock: 3 versions (1.0.0, 1.1.0, main)" in out
    assert f"wrote {NIGHTLY_WORKFLOW}" in out


def test_dry_run_writes_nothing(repo, capsys):
    repo, _ = repo
    before = snapshot(repo)
    code, out = init(repo, capsys, "--dry-run")
    assert code == 0
    assert snapshot(repo) == before
    for path in WRITTEN:
        assert f"would write {path}" in out


def test_an_unreadable_index_is_reported_and_the_rest_written(repo, capsys):
    repo, server = repo
    del server.routes["/simple/trl/"]
    code, out = init(repo, capsys)
    assert code == 1
    assert "canary init: canary/trl.lock: not written:" in out
    assert not (repo / "canary/trl.lock").exists()
    assert (repo / "canary/trl.yaml").is_file() and (repo / PR_WORKFLOW).is_file()


def test_the_trees_file_names_are_printed_escaped(repo, capsys):
    repo, _ = repo
    (repo / "canary").mkdir()
    (repo / "canary" / "x\n::add-mask::\x1b[2J.yaml").write_text("upstream: [\n")
    code, out = init(repo, capsys)
    assert code == 1
    assert "canary init: canary/x\\n::add-mask::\\x1b[2J.lock: not written:" in out
    assert "\x1b" not in out and not any(line.startswith("::") for line in out.splitlines())


def test_nothing_to_adopt_says_how_to_name_the_upstreams(repo, capsys):
    repo, _ = repo
    code = main(["init", str(repo), "--upstream", "peft"])
    out = capsys.readouterr().out
    assert code == 1
    assert "name the upstreams you patch with --upstream" in out
    assert not (repo / ".github").exists()


def test_bad_paths_are_usage_errors(repo, capsys, tmp_path):
    repo, _ = repo
    assert main(["init", str(tmp_path / "nowhere")]) == 2
    assert main(["init", str(repo), "--dir", "../outside"]) == 2
    assert "give a folder inside" in capsys.readouterr().err


def test_the_written_workflows_pass_actionlint_against_this_action(repo, capsys, tmp_path):
    """As written (the Action by reference), and with the reference pointed at this
    repository's action.yml, so that actionlint checks every input given to it."""
    repo, _ = repo
    assert main(["init", str(repo), "--upstream", "trl", "--dir", "ci/canary"]) == 0
    local = tmp_path / "local"
    (local / ".github" / "workflows").mkdir(parents=True)
    (local / ".git").mkdir()  # actionlint resolves `./` in the project a .git folder marks
    shutil.copy(ROOT / "action.yml", local / "action.yml")
    for name in (PR_WORKFLOW, NIGHTLY_WORKFLOW):
        text = (repo / name).read_text()
        assert f"uses: {ACTION_REF}\n" in text and "matrices: ci/canary\n" in text
        (local / name).write_text(text.replace(ACTION_REF, "./"))
        assert_least_privilege_and_bounded(repo / name)
        for path in (repo / name, local / name):
            result = run_actionlint(path)
            findings = (result.stdout + result.stderr).strip()
            assert result.returncode == 0 and not findings, f"{path}:\n{findings}"


def test_the_docs_and_the_project_urls_name_the_same_action():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    uses = {line.strip() for line in text.splitlines() if f"uses: {ACTION}" in line}
    assert uses == {f"- uses: {ACTION_REF}"}
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.findall(r'^Source = "(.*)"$', pyproject, flags=re.M) == [
        f"https://github.com/{ACTION}"
    ]


def test_workflows_follow_the_repositorys_yaml_spelling(repo, capsys):
    """A repository whose workflows end in `.yaml` gets canary's as `.yaml` too, and a
    second run keeps them rather than writing `.yml` twins."""
    repo, _ = repo
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for name in ("tests.yaml", "lint.yaml", "release.yml"):
        (workflows / name).write_text("name: theirs\n")
    code, out = init(repo, capsys)
    assert code == 0, out
    assert "wrote .github/workflows/canary.yaml\n" in out
    assert "wrote .github/workflows/canary-nightly.yaml\n" in out
    assert sorted(p.name for p in workflows.iterdir()) == [
        "canary-nightly.yaml", "canary.yaml", "lint.yaml", "release.yml", "tests.yaml"
    ]  # fmt: skip
    again = init(repo, capsys)[1]
    assert "kept .github/workflows/canary.yaml (up to date)" in again
    assert "kept .github/workflows/canary-nightly.yaml (up to date)" in again
    assert not (workflows / "canary.yml").exists()


def test_a_yml_repository_and_an_earlier_canary_workflow_keep_their_names(repo, capsys):
    repo, _ = repo
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "tests.yaml").write_text("name: theirs\n")
    (workflows / "canary.yml").write_text("name: canary, as an earlier init wrote it\n")
    code, out = init(repo, capsys)
    assert code == 0, out
    assert "kept .github/workflows/canary.yml (exists; left as it is)" in out
    assert "wrote .github/workflows/canary-nightly.yaml\n" in out
    assert not (workflows / "canary.yaml").exists()


def test_pytest_given_the_matrix_folder_runs_the_checks_not_the_repositorys_tests(repo, capsys):
    """The closing lines name `pytest canary -k trl`: given the folder, pytest collects the
    checks alone, where a bare `pytest -k trl` collects the repository's own tests from its
    root (one that needs a package not installed here is a collection error)."""
    repo, _ = repo
    code, out = init(repo, capsys)
    assert code == 0, out
    assert "     `pytest canary -k trl` runs the checks as tests: given the matrix folder,\n" in out
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "test_heavy.py").write_text("import torch_is_not_installed_here\n")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "trl"]
    bare = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    assert "1 error" in bare.stdout, bare.stdout  # the motivation: the repository's own tests
    given = subprocess.run([*command, "canary"], cwd=repo, capture_output=True, text=True)
    assert given.returncode in (0, 1), given.stdout + given.stderr  # 1: a check is red
    assert "error" not in given.stdout.splitlines()[-1] and "test_heavy" not in given.stdout
    assert re.search(r"\b[1-9]\d* passed\b", given.stdout.splitlines()[-1]), given.stdout
