"""`canary action STEP`: one step of action.yml (see canary/action/__init__.py)."""

from __future__ import annotations

from canary.action import nightly, steps
from canary.action.runner import command
from canary.errors import CanaryError

STEPS = {  # `canary action STEP` offers these names
    "plan": steps.plan,
    "lock": steps.lock,
    "check": steps.check,
    "compare": nightly.compare,
    "propose-locks": nightly.propose_locks,
    "verdict": steps.verdict,
}


def run_step(name: str) -> int:
    step = STEPS[name]
    try:
        return step() or 0
    except CanaryError as exc:  # a step's own (ActionError) or canary's
        for line in exc.lines():
            command("error", f"canary: {line}")
        return exc.exit_code
