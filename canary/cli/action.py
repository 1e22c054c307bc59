"""`canary action STEP`: one step of the GitHub Action (action.yml runs them in turn)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from canary.action.command import STEPS

    parser.add_argument("step", choices=list(STEPS), help="the step to run, as action.yml names it")


def run(args: argparse.Namespace) -> int:
    from canary.action.command import run_step

    return run_step(args.step)
