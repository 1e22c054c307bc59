"""One error base: every exception canary defines is a CanaryError carrying an exit status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import canary
from canary.errors import CanaryError, ExitCode


def defined_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(canary.__path__, "canary."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            mine = value.__module__ == info.name
            if mine and issubclass(value, Exception) and not issubclass(value, Warning):
                found.append(value)
    return found


def test_every_exception_canary_defines_is_a_canary_error_with_an_exit_status():
    exceptions = defined_exceptions()
    assert len(exceptions) >= 17
    assert [e.__name__ for e in exceptions if not issubclass(e, CanaryError)] == []
    assert {e.exit_code for e in exceptions} <= set(ExitCode)


def test_the_exit_statuses_are_those_the_help_documents():
    from canary.cli.help import EXIT_CODES

    documented = [int(line.split()[0]) for line in EXIT_CODES.splitlines()[1:]]
    assert documented == [ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE_ERROR]
