"""The benchmark's tables as Markdown (readable in a terminal, pasted into the README as is),
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
    """One measured quantity: its samples (one per repetition) and maybe a target."""

    what: str
    samples: list[float]
    render: Callable[[float], str]
    target: Target | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def cells(self) -> list[str]:
        value = self.render(self.median)
        if len(self.samples) > 1:
            low, high = self.render(min(self.samples)), self.render(max(self.samples))
            value += f" ({low} to {high})"
        target = str(self.target) if self.target else ""
        verdict = self.target.verdict(self.median) if self.target else ""
        return [self.what, value, str(len(self.samples)), target, verdict, self.note]


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)

    def render(self) -> str:
        header = ["measure", "median (min to max)", "runs", "target", "verdict", "note"]
        return f"### {self.title}\n\n" + table(header, [row.cells() for row in self.rows])


#: The targets of issue 8, on the 2-core machine, as medians.
COLD_WALL = Target(30.0, seconds)
SHARE_OF_WHEELS = Target(0.05, percent)
OVER_FLOOR = Target(1.5, ratio)
WARM_CHECK = Target(2.0, seconds)
PEAK_RSS = Target(300 * 1024 * 1024, lambda v: f"{v / 1024 / 1024:.0f} MiB")
WARM_PYTEST_2 = Target(15.0, seconds)
MIN_RESULTS = 1500


def mebibytes(value: float) -> str:
    return f"{value / 1024 / 1024:.0f} MiB"
