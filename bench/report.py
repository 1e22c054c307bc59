"""The benchmark's tables as Markdown (readable in a terminal, pasted into docs/benchmark.md as is),
with the issue's targets and a pass/miss marker beside each number they apply to."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

MB = 1_000_000


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def megabytes(value: float) -> str:
    return f"{value / MB:.1f} MB"


def count(value: float) -> str:
    return f"{value:,.0f}"


def percent(value: float) -> str:
    return f"{value:.1%}"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


@dataclass(frozen=True)
class Target:
    """`value <= limit`, as the issue states it."""

    limit: float
    render: Callable[[float], str]

    def verdict(self, value: float) -> str:
        return "pass" if value <= self.limit else "**MISS**"

    def __str__(self) -> str:
        return f"<= {self.render(self.limit)}"


@dataclass
class Row:
    """One measured quantity: its samples (one per repetition), maybe the same measured on the
    code before the change (side by side, in the same run), and maybe a target."""

    what: str
    samples: list[float]
    render: Callable[[float], str]
    target: Target | None = None
    note: str = ""
    before: list[float] | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def spread(self, samples: list[float]) -> str:
        value = self.render(statistics.median(samples))
        if len(samples) > 1:
            low, high = self.render(min(samples)), self.render(max(samples))
            value += f" ({low} to {high})"
        return value

    def cells(self, compared: bool = False) -> list[str]:
        target = str(self.target) if self.target else ""
        verdict = self.target.verdict(self.median) if self.target else ""
        value = self.spread(self.samples)
        if not compared:
            return [self.what, value, str(len(self.samples)), target, verdict, self.note]
        before, change = "", ""
        if self.before:
            before = self.spread(self.before)
            old = statistics.median(self.before)
            change = f"{self.median / old:.2f}x" if old else ""
        runs = str(len(self.samples))
        return [self.what, before, value, change, runs, target, verdict, self.note]


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)

    def render(self) -> str:
        compared = any(row.before is not None for row in self.rows)
        header = ["measure", "median (min to max)", "runs", "target", "verdict", "note"]
        if compared:
            header = ["measure", "before", "after", "after / before", *header[2:]]
        cells = [row.cells(compared) for row in self.rows]
        return f"### {self.title}\n\n" + table(header, cells)


#: The targets of issue 18 (and 15.8), on the 2-core machine, as medians.
COLD_WALL = Target(12.0, seconds)
SHARE_OF_WHEELS = Target(0.05, percent)
OVER_FLOOR = Target(1.3, ratio)
WARM_CHECK = Target(1.0, seconds)
WARM_ONE_MATRIX = Target(0.3, seconds)
PEAK_RSS = Target(300 * 1024 * 1024, lambda v: f"{v / 1024 / 1024:.0f} MiB")
WARM_PYTEST_1 = Target(3.0, seconds)
NO_SLOWER = Target(1.0, ratio)  # `-n 2` against 1 worker
PYTEST_VS_CHECK = Target(1.5, ratio)  # the pytest path against `canary check`, same selection
MIN_RESULTS = 1500


def mebibytes(value: float) -> str:
    return f"{value / 1024 / 1024:.0f} MiB"
