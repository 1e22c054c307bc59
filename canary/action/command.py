"""`canary action STEP`: one step of action.yml (see canary/action/__init__.py).

Each step runs in its own process, so a step imports only its own module: the verdict and the
plan never load the engine, the HTTP client or the reports (pip's command table does the same).
"""

from __future__ import annotations

from importlib import import_module

from canary.action.runner import command
from canary.errors import CanaryError

STEPS = {  # `canary action STEP` offers these names: the module and function of each
    "plan": ("canary.action.steps", "plan"),
    "lock": ("canary.action.steps", "lock"),
    "check": ("canary.action.steps", "check"),
    "compare": ("canary.action.nightly", "compare"),
    "propose-locks": ("canary.action.nightly", "propose_locks"),
    "verdict": ("canary.action.steps", "verdict"),
}


def run_step(name: str) -> int:
    module, function = STEPS[name]
    step = getattr(import_module(module), function)
    try:
        return step() or 0
    except CanaryError as exc:  # a step's own (ActionError) or canary's
        for line in exc.lines():
            command("error", f"canary: {line}")
        return exc.exit_code
