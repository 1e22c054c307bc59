"""Run action.yml's steps the way a GitHub runner would, on this machine.

`run:` steps execute with bash in the repository, with the step's `env:` and the variables a
runner sets (GITHUB_OUTPUT per step, GITHUB_STEP_SUMMARY, GITHUB_ACTIONS=true, RUNNER_TEMP).
`uses:` steps (setup-python, cache, upload-artifact) are recorded with their resolved inputs
instead of run: they are GitHub's, and the tests check what they are given. `${{ }}`
expressions and `if:` conditions are evaluated for the subset of the expression language that
action.yml uses (contexts, literals, ==, !=, &&, ||, !, status functions); anything else raises.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
_CONTEXT = re.compile(r"\b(?:inputs|steps|runner|github|env)(?:\.[A-Za-z_][\w-]*)+")
_STATUS = re.compile(r"\b(cancelled|always|success|failure)\(\)")
_ALLOWED = re.compile(
    r"^(?:\s|\(|\)|==|!=|&&|\|\||!|'[^']*'|true|false|ctx\[\d+\]|status\[\d+\])*$"
)


@dataclass
class Run:
    """What one invocation of the action did."""

    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    used: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    stdout: str = ""
    failed: list[str] = field(default_factory=list)


def read_outputs(path: Path) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines()) if path.exists() else iter([])
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delimiter = line.split("<<", 1)
            value = []
            for more in lines:
                if more == delimiter:
                    break
                value.append(more)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


class ActionRunner:
    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str], env: dict[str, str]):
        self.workspace, self.temp = workspace, temp
        self.spec = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
        declared = self.spec["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"action.yml has no inputs {unknown}"
        self.inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        self.inputs["token"] = env.get("GITHUB_TOKEN_FOR_TEST", "test-token")
        self.inputs.update(inputs)
        self.summary = temp / "summary.md"
        self.env = {
            **os.environ,
            **env,
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(temp),
            "RUNNER_OS": "Linux",
            # `python` is the interpreter running the tests, where canary is installed
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        self.run = Run()
        self._failed = False

    # -- expressions ---------------------------------------------------------------------

    def context(self, dotted: str) -> str:
        parts = dotted.split(".")
        if parts[0] == "inputs":
            return self.inputs[parts[1]]
        if parts[0] == "steps":
            if parts[2] == "outcome":
                return self.run.outcomes.get(parts[1], "")
            return self.run.outputs.get(parts[1], {}).get(parts[3], "")
        if dotted == "runner.temp":
            return str(self.temp)
        if dotted == "github.action_path":
            return str(ROOT)
        if dotted == "github.token":
            return self.inputs["token"]
        raise AssertionError(f"action.yml uses {dotted}, which this runner does not model")

    def evaluate(self, expression: str) -> object:
        values: list[str] = []
        statuses: list[bool] = []

        def context(match: re.Match[str]) -> str:
            values.append(self.context(match.group(0)))
            return f"ctx[{len(values) - 1}]"

        def status(match: re.Match[str]) -> str:
            name = match.group(1)
            statuses.append(
                {"cancelled": False, "always": True}.get(name, (name == "success") != self._failed)
            )
            return f"status[{len(statuses) - 1}]"

        def literal(match: re.Match[str]) -> str:
            values.append(match.group(1))
            return f"ctx[{len(values) - 1}]"

        code = re.sub(r"'([^']*)'", literal, expression)
        code = _STATUS.sub(status, _CONTEXT.sub(context, code))
        assert _ALLOWED.match(code), f"expression outside the modelled subset: {expression}"
        code = code.replace("&&", " and ").replace("||", " or ")
        code = re.sub(r"!(?!=)", " not ", code).replace("true", "True").replace("false", "False")
        return eval(code, {"ctx": values, "status": statuses})  # our own action.yml, checked above

    def interpolate(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(self.evaluate(m.group(1))), str(text))

    def condition(self, step: dict) -> bool:
        expression = str(step.get("if", "success()")).strip()
        if expression.startswith("${{"):
            expression = expression[3:-2]
        if not _STATUS.search(expression):
            expression = f"success() && ({expression})"
        return bool(self.evaluate(expression))

    # -- steps ---------------------------------------------------------------------------

    def execute(self, skip: tuple[str, ...] = ()) -> Run:
        for number, step in enumerate(self.spec["runs"]["steps"]):
            step_id = step.get("id", f"step{number}")
            if not self.condition(step):
                self.run.outcomes[step_id] = "skipped"
                continue
            if step.get("name") in skip:
                self.run.outcomes[step_id] = "success"
                continue
            if "uses" in step:
                inputs = {k: self.interpolate(v) for k, v in (step.get("with") or {}).items()}
                self.run.used.append((step["uses"], inputs))
                self.run.outcomes[step_id] = "success"
                continue
            self.run_step(step_id, step)
        return self.run

    def run_step(self, step_id: str, step: dict) -> None:
        output = self.temp / f"output-{step_id}"
        env = {k: self.interpolate(v) for k, v in (step.get("env") or {}).items()}
        cwd = self.interpolate(step.get("working-directory", str(self.workspace)))
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=cwd,
            env={**self.env, **env, "GITHUB_OUTPUT": str(output)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.run.stdout += done.stdout
        sys.stdout.write(f"--- step {step_id}\n{done.stdout}")  # shown by pytest on a failure
        sys.stderr.write(done.stderr)
        self.run.outputs[step_id] = read_outputs(output)
        ok = done.returncode == 0
        self.run.outcomes[step_id] = "success" if ok else "failure"
        if not ok:
            self._failed = True
            self.run.failed.append(step.get("name", step_id))
