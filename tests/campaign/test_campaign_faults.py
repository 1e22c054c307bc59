"""Fault campaign: the real Runner against a fake index whose server injects faults at random.

The promise under test: a verdict is either the one a fault-free run gives, or `error`; and a
fault that clears after a few tries never ends in `error`. Each test prints its tally.
CANARY_CAMPAIGN_SIZE=large runs more releases, modules and seeds (the nightly).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from campaign_faults import ALL, FaultPlan, FaultServer, directory_entry
from campaign_upstream import publish, run_checks, scaled, tell, verdicts
from servers import serving

TRANSIENT = tuple(k for k in ALL if k != "flip-cd")


@dataclass
class Tally:
    """What a campaign measured over all its seeds."""

    runs: int = 0
    verdicts: int = 0
    wrong: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    #: verdicts that need no source at all (a gate decides them first)
    gated: int = 0

    def line(self, name: str) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.faults.items()))
        return (
            f"campaign {name}: runs: {self.runs}, verdicts: {self.verdicts}, "
            f"faults injected: {sum(self.faults.values())}, verdicts wrong: {len(self.wrong)}, "
            f"errors: {sum(self.errors.values())} ({kinds})"
        )


def campaign(
    upstream, server: FaultServer, folder: Path, plans: list[FaultPlan], tally: Tally | None = None
) -> Tally:
    """Run every plan on an empty cache and compare each verdict with the fault-free run."""
    index_url = publish(server, upstream.files)
    server.arm(None)
    expected = verdicts(run_checks(upstream, index_url, folder / "baseline"))
    tally = tally or Tally()
    for plan in plans:
        server.arm(plan)
        before = server.injected.copy()
        got = verdicts(run_checks(upstream, index_url, folder / f"seed-{plan.seed}"))
        tally.runs += 1
        tally.faults += server.injected - before
        assert got.keys() == expected.keys()
        for key, (status, detail) in got.items():
            tally.verdicts += 1
            if status == "error":
                tally.errors[detail.split(": ", 1)[-1][:60]] += 1
            elif status == "skip":
                tally.gated += 1
            elif (status, detail) != expected[key]:
                tally.wrong.append(
                    f"seed {plan.seed} {key}: {status} {detail!r}, not {expected[key]}"
                )
    return tally


def test_random_faults_give_the_fault_free_verdict_or_error(upstream, server, tmp_path, capsys):
    planned = scaled(8, 80)
    tally = campaign(upstream, server, tmp_path, [FaultPlan(s, ALL, 0.4) for s in range(planned)])
    # Which ranges a run requests depends on what its earlier reads learned (tail sizes), so a
    # seed's faults vary between runs: draw more seeds (at most as many again, three times)
    # until every kind was injected.
    for more in range(1, 4):
        if set(tally.faults) == set(ALL):
            break
        seeds = range(more * planned, (more + 1) * planned)
        campaign(upstream, server, tmp_path, [FaultPlan(s, ALL, 0.4) for s in seeds], tally)
    tell(capsys, tally.line("random faults"))
    assert not tally.wrong, "\n".join(tally.wrong[:10])
    assert set(tally.faults) == set(ALL), "every fault kind must be exercised"


@pytest.mark.parametrize("kind", ["503", "reset", "truncate", "slow"])
def test_faults_that_never_clear_surface_as_error(upstream, server, tmp_path, capsys, kind):
    """Retries are bounded: a transport fault on every try ends in `error`, never in a verdict.
    (A member fault leaves verdicts that need no member, such as an absent module, standing.)"""
    tally = campaign(upstream, server, tmp_path, [FaultPlan(1, (kind,), rate=1.0)])
    tell(capsys, tally.line(f"permanent {kind}"))
    assert not tally.wrong, "\n".join(tally.wrong[:10])
    assert tally.faults[kind] > 0
    assert tally.gated < tally.verdicts
    assert sum(tally.errors.values()) == tally.verdicts - tally.gated, "all but gates are errors"


def test_transient_faults_never_end_in_error(upstream, server, tmp_path, capsys):
    plans = [FaultPlan(seed, TRANSIENT, burst=2) for seed in range(100, 100 + scaled(4, 40))]
    tally = campaign(upstream, server, tmp_path, plans)
    tell(capsys, tally.line("transient faults"))
    assert not tally.wrong, "\n".join(tally.wrong[:10])
    assert set(tally.faults) == set(TRANSIENT)
    assert not tally.errors, f"transient faults ended in error: {dict(tally.errors)}"


def test_transient_central_directory_flips_never_end_in_error(upstream, server, tmp_path, capsys):
    plans = [FaultPlan(seed, ("flip-cd",), burst=1) for seed in range(200, 200 + scaled(30, 150))]
    tally = campaign(upstream, server, tmp_path, plans)
    tell(capsys, tally.line("transient directory flips"))
    assert not tally.wrong, "\n".join(tally.wrong[:10])
    assert tally.faults["flip-cd"] > 0
    assert not tally.errors, f"transient faults ended in error: {dict(tally.errors)}"


def test_a_directory_corrupted_once_is_not_believed_by_later_runs(upstream, tmp_path):
    """Minimal reproduction: one response with a flipped CRC32 field, then a healthy server."""
    version = upstream.versions[0]
    path = upstream.wheel_path(version)
    wheel = upstream.wheels[version]
    corrupt = bytearray(wheel)
    corrupt[directory_entry(wheel, "fakepkg/core.py") + 16] ^= 0x01  # its CRC32 in the directory
    with serving() as server:
        index_url = publish(server, upstream.files)
        expected = verdicts(run_checks(upstream, index_url, tmp_path / "baseline"))
        server.routes[path].body = bytes(corrupt)
        run_checks(upstream, index_url, tmp_path / "cache")
        server.routes[path].body = wheel
        assert verdicts(run_checks(upstream, index_url, tmp_path / "cache")) == expected
