"""`python -m bench.runtime --venv DIR [--venv DIR ...] [MATRIX ...]`: canary's verdicts against
CPython itself.

Each `--venv` is a throwaway virtual environment holding real releases of upstreams the
matrices check (made by hand: `python -m venv DIR; DIR/bin/pip install torch==2.13.0
transformers==X trl==Y peft==Z`). For every matrix whose distribution is installed there,
canary judges the installed version (`canary check --versions V --format json`), twice: the
matrix as shipped, and the matrix with every gate and acknowledgement stripped, so each contract
is also judged where it is expected to break. The environment's own Python judges the same
contracts with `import`, `getattr` and `inspect` (bench/probe.py, in a subprocess: upstream
code runs there only). Each cell is then: agreed, a false pass (canary green, Python says the
contract fails), a false fail (the reverse), canary's `error`, or undecided by Python (an
optional backend missing, or a question only an instance or a compile could answer: said why).

Prints a Markdown table of the figures and every disagreement; `--output FILE` writes each
cell as JSON. Not part of the test run: it installs nothing itself, but imports upstreams.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from canary.matrix.files import find_matrices, load_matrices
from canary.matrix.model import ClassSubject, Contract, FunctionSubject, Matrix, SymbolSubject

PROBE = Path(__file__).with_name("probe.py")
ROOT = Path(__file__).resolve().parent.parent
HOLDING = {"pass", "xpass"}
#: a `warn` holds when it is a keyword absorbed by **kwargs; else it is a `severity: info` failure
ABSORBED = "absorbed by **"
#: how canary's `error` says a verdict turns on what it does not read (a base outside the
#: upstream, a value computed at run time): undecided by canary, said so, not a wrong verdict
UNDECIDED_BY_CANARY = (
    "not known for ",
    " are not read",
    "canary does not follow",
    "canary does not read",
)
#: how canary's `warn` says a contract holds or not as the upstream runs (a name a function
#: binds with `global`, an attribute a `__getattr__` may serve): undecided by canary, said so
RUNTIME = ("once it runs", "which canary does not evaluate")
#: how canary's `error` says a module cannot be imported: what Python says too
UNCOMPILED = "does not compile, so it cannot be imported"
_GATES = ("since", "until", "versions", "broken")


def contract_json(contract: Contract) -> dict:
    """The contract as bench/probe.py reads it."""
    subject = contract.subject
    kind = {SymbolSubject: "symbol", ClassSubject: "class", FunctionSubject: "function"}
    out: dict = {
        "module": contract.module,
        "kind": kind[type(subject)] if subject is not None else None,
        "name": subject.name if subject is not None else None,
        "own": contract.own,
        "globals_bound": contract.globals_bound,
        "count": contract.count,
        "matches": [p.pattern for p in contract.matches],
        "call": None
        if contract.call is None
        else {"args": contract.call.args, "keywords": list(contract.call.keywords)},
        "signature": None
        if contract.signature is None
        else [
            {"name": p.name, "kind": p.kind, "default": p.default}
            for p in contract.signature.params
        ],
    }
    for key in (
        "methods",
        "bases",
        "attributes",
        "assignable",
        "params",
        "accepts",
        "named",
        "contains",
        "not_contains",
    ):
        out[key] = list(getattr(contract, key))
    if contract.no_methods_beyond is not None:
        out["no_methods_beyond"] = list(contract.no_methods_beyond)
    return out


def installed(python: Path, distributions: list[str]) -> dict[str, str]:
    """The installed version of each distribution found in the environment."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "found = {}\n"
        "for d in sys.argv[1:]:\n"
        "    try: found[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(found))\n"
    )
    out = subprocess.run(
        [str(python), "-c", code, *distributions], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def truths(python: Path, matrices: list[Matrix]) -> dict[str, dict[str, str]]:
    """Python's answer for every check of the matrices, keyed `upstream::id`."""
    checks = [
        {
            "key": f"{m.upstream}::{c.id}",
            "alternatives": [contract_json(x) for x in (c.any_of or (c.contract,)) if x],
        }
        for m in matrices
        for c in m.checks
    ]
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(
            [str(python), "-I", str(PROBE)],
            input=json.dumps(checks),
            capture_output=True,
            text=True,
            check=True,
            cwd=scratch,  # nothing of this checkout on the probe's path
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def stripped(matrix: Matrix, folder: Path) -> Path:
    """A copy of the matrix (and its lock) without gates or acknowledgements."""
    data = yaml.safe_load(matrix.path.read_text())
    data.get("versions", {}).pop("broken", None)
    for check in data["checks"]:
        for key in _GATES:
            check.pop(key, None)
    path = folder / matrix.path.name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    lock = matrix.path.with_suffix(".lock")
    if lock.exists():
        path.with_suffix(".lock").write_text(lock.read_text())
    return path


def canary_results(path: Path, version: str) -> list[dict]:
    """`canary check PATH --versions VERSION --format json`, this checkout's canary."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "canary", "check", str(path), "--versions", version]
        command += ["--format", "json", "--output", out.name, "-q"]
        subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
        text = Path(out.name).read_text()
    if not text:
        raise SystemExit(f"canary check {path} --versions {version} wrote no results")
    return json.loads(text)["results"]


@dataclass(frozen=True)
class Cell:
    venv: str
    mode: str
    upstream: str
    check: str
    version: str
    status: str
    detail: str
    truth: str
    why: str

    @property
    def outcome(self) -> str:
        if self.status == "skip":
            return "gated"
        if self.truth == "undecided":
            return "undecided"
        if self.status == "error" and UNCOMPILED in self.detail:
            return "agree" if self.truth == "fails" else "false fail"
        if self.status == "error":
            said = any(words in self.detail for words in UNDECIDED_BY_CANARY)
            return "said undecided" if said else "canary error"
        if self.status == "warn" and any(words in self.detail for words in RUNTIME):
            return "said undecided"
        holds = self.status in HOLDING or (self.status == "warn" and ABSORBED in self.detail)
        if holds == (self.truth == "holds"):
            return "agree"
        return "false pass" if holds else "false fail"


def compare(venv: Path, matrices: list[Matrix]) -> list[Cell]:
    python = venv / "bin" / "python"
    versions = installed(python, sorted({m.pypi for m in matrices}))
    chosen = [m for m in matrices if m.pypi in versions]
    truth = truths(python, chosen)
    cells = []
    with tempfile.TemporaryDirectory() as scratch:
        for matrix in chosen:
            version = versions[matrix.pypi]
            for mode, path in (("shipped", matrix.path), ("ungated", None)):
                path = path or stripped(matrix, Path(scratch))
                for r in canary_results(path, version):
                    said = truth[f"{r['upstream']}::{r['check']}"]
                    cells.append(
                        Cell(
                            venv.name,
                            mode,
                            r["upstream"],
                            r["check"],
                            r["version"],
                            r["status"],
                            r["detail"],
                            said["truth"],
                            said["why"],
                        )
                    )
    return cells


_COLUMNS = (
    "agree",
    "false pass",
    "false fail",
    "canary error",
    "said undecided",
    "undecided",
    "gated",
)


def summary(cells: list[Cell]) -> list[str]:
    rows = ["| release | matrix | cells | " + " | ".join(_COLUMNS) + " |"]
    rows.append("|" + " --- |" * (len(_COLUMNS) + 3))
    groups: dict[tuple[str, str, str], Counter[str]] = {}
    for cell in cells:
        key = (f"{cell.upstream} {cell.version}", cell.mode, cell.venv)
        groups.setdefault(key, Counter())[cell.outcome] += 1
    total: dict[str, Counter[str]] = {}
    for (release, mode, _), counts in groups.items():
        total.setdefault(mode, Counter()).update(counts)
        figures = " | ".join(str(counts[c]) for c in _COLUMNS)
        rows.append(f"| {release} | {mode} | {sum(counts.values())} | {figures} |")
    for mode, counts in total.items():
        figures = " | ".join(f"**{counts[c]}**" for c in _COLUMNS)
        rows.append(f"| all | {mode} | **{sum(counts.values())}** | {figures} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runtime", description=__doc__)
    parser.add_argument("matrices", nargs="*", metavar="MATRIX")
    parser.add_argument("--venv", action="append", type=Path, required=True)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    matrices = load_matrices(find_matrices(args.matrices or [ROOT / "matrices"]))
    cells = [cell for venv in args.venv for cell in compare(venv, matrices)]
    print("\n".join(summary(cells)))
    differ = [c for c in cells if c.outcome in ("false pass", "false fail", "canary error")]
    said = [c for c in cells if c.outcome == "said undecided"]
    undecided = Counter(c.why.split(":")[0] for c in cells if c.outcome == "undecided")
    print(f"\n{len(differ)} disagreements")
    for c in differ:
        print(f"  {c.outcome}: {c.mode} {c.upstream}::{c.check}[{c.version}] {c.status}")
        print(f"      canary: {c.detail[:300]}")
        print(f"      python: {c.truth} {c.why[:300]}")
    print(f"\n{len(said)} said undecided by canary (Python's answer after the colon)")
    for c in said:
        print(f"  {c.mode} {c.upstream}::{c.check}[{c.version}]: {c.detail[:160]}: {c.truth}")
    print("\nundecided by Python, by reason:")
    for why, count in undecided.most_common():
        print(f"  {count:5d}  {why}")
    if args.output:
        args.output.write_text(json.dumps([c.__dict__ for c in cells], indent=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
