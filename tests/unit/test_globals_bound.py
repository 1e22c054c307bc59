"""`globals_bound:` on a fixture upstream: a method whose source a client compiles in the
module it found the class in (peft 0.18.0's `Linear.forward` reading `VARIANT_KWARG_KEYS`,
which peft.tuners.lora.inc does not bind), with Python's scoping for what counts as a read."""

from __future__ import annotations

import textwrap

import pytest
from judging import judge_inline

from canary.analysis import ModuleCache
from canary.engine.became import explain
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Status
from canary.engine.reuse import VerdictReuse
from canary.matrix.model import MatrixError, load_matrix
from canary.matrix.targets import Target
from canary.sources.local import LocalTree

LAYER = """
from typing import Any

import torch

from .consts import KEYS
from up.other import helper

LIMIT = 3
STATE = 0


def tool(x):
    return x + LIMIT


class Base:
    DEFAULT = 1

    def forward(self, x: Any, *, n=LIMIT) -> torch.Tensor:
        keys = [k for k in KEYS if k]
        def inner(y):
            return y + x
        total = sum(inner(k) for k in keys)
        return helper(total) + undefined_name

    def reset(self, v=DEFAULT, f=lambda: 0):
        global STATE
        STATE = v
        return len([i for i in range(f())])

    def bump(self):
        global STATE
        STATE += 1


class Linear(Base):
    pass
"""

MODULES = {
    "up/__init__.py": "",
    "up/consts.py": "KEYS = ('a',)\n",
    "up/other.py": "def helper(x):\n    return x\n",
    "up/layer.py": LAYER,
    "up/inc.py": "from .layer import Linear, tool\n",
    "up/full.py": (
        "from .layer import *\nfrom .layer import KEYS, Linear\nfrom up.other import helper\n"
    ),
}


def judge(tmp_path, checks_yaml, modules=MODULES):
    return judge_inline(tmp_path, "up", modules, checks_yaml, "1.0.0")


def outcomes(results):
    return [(r.status, r.detail) for r in results]


def test_a_name_the_home_module_binds_must_be_bound_where_the_class_is_found(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: a, module: up.inc, function: Linear.forward, globals_bound: true}
        - {id: b, module: up.full, function: Linear.forward, globals_bound: true}
        """,
    )
    assert outcomes(results) == [
        (
            Status.FAIL,
            "Base.forward (defined in up.layer) reads KEYS (imported in up.layer from "
            "up.consts), LIMIT (bound in up.layer), helper (imported in up.layer from "
            "up.other), which up.inc does not bind",
        ),
        (
            Status.PASS,
            "forward inherited from up.layer.Base; Base.forward (up.layer) reads 3 of up's "
            "names, all bound in up.full; not required: Any, torch (from outside up), "
            "undefined_name (not bound in up.layer)",
        ),
    ]


def test_the_home_module_itself_binds_them_all(tmp_path):
    results = judge(
        tmp_path,
        "- {id: a, module: up.layer, function: Base.forward, globals_bound: true}",
    )
    assert outcomes(results) == [
        (
            Status.PASS,
            "Base.forward (up.layer) reads 3 of up's names, all bound in up.layer; not "
            "required: Any, torch (from outside up), undefined_name (not bound in up.layer)",
        )
    ]


def test_names_the_compiling_code_gives_are_not_required(tmp_path):
    results = judge(
        tmp_path,
        """
        - id: a
          module: up.inc
          function: Linear.forward
          globals_bound: true
          globals_given: [KEYS, LIMIT, helper]
        """,
    )
    assert outcomes(results) == [
        (
            Status.PASS,
            "forward inherited from up.layer.Base; Base.forward (up.layer) reads none of up's "
            "names; given: KEYS, LIMIT, helper; not required: Any, torch (from outside up), "
            "undefined_name (not bound in up.layer)",
        )
    ]


def test_class_body_names_locals_and_global_assignments_are_not_reads(tmp_path):
    # reset: a default from the class body, a lambda, a comprehension variable, a global
    # only assigned; bump: `STATE += 1` reads the global it declares
    results = judge(
        tmp_path,
        """
        - {id: a, module: up.inc, function: Linear.reset, globals_bound: true}
        - {id: b, module: up.inc, function: Linear.bump, globals_bound: true}
        """,
    )
    assert outcomes(results) == [
        (
            Status.PASS,
            "reset inherited from up.layer.Base; Base.reset (up.layer) reads none of up's names",
        ),
        (
            Status.FAIL,
            "Base.bump (defined in up.layer) reads STATE (bound in up.layer), which up.inc "
            "does not bind",
        ),
    ]


def test_an_imported_function_is_judged_where_it_is_defined(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: a, module: up.inc, function: tool, globals_bound: true}
        - {id: b, module: up.layer, function: tool, globals_bound: true}
        - {id: c, module: up.inc, function: tool, params: [x]}
        - {id: d, module: up.inc, function: Linear.forward, params: [x]}
        """,
    )
    assert outcomes(results) == [
        (
            Status.FAIL,
            "tool (defined in up.layer) reads LIMIT (bound in up.layer), which up.inc does "
            "not bind",
        ),
        (Status.PASS, "tool (up.layer) reads 1 of up's names, all bound in up.layer"),
        # without globals_bound, a function or class must be defined in the module, as before
        (Status.FAIL, "function tool is imported here, defined in up.layer"),
        (Status.FAIL, "class Linear is imported here, defined in up.layer"),
    ]


def test_a_name_star_imported_or_bound_only_for_type_checkers(tmp_path):
    modules = {
        **MODULES,
        "up/helpers.py": "CONST = 1\n",
        "up/layer.py": "from up.helpers import *\n\ndef f():\n    return CONST + HIDDEN\n",
        "up/inc.py": "from typing import TYPE_CHECKING\nfrom .layer import f\n"
        "if TYPE_CHECKING:\n    from up.helpers import CONST\n",
    }
    results = judge(
        tmp_path, "- {id: a, module: up.inc, function: f, globals_bound: true}", modules
    )
    assert outcomes(results) == [
        (
            Status.FAIL,
            "f (defined in up.layer) reads CONST (bound in up.helpers, star-imported into "
            "up.layer), which up.inc does not bind",
        )
    ]


def test_a_verdict_is_reused_only_while_both_modules_are_unchanged(tmp_path):
    path = tmp_path / "up.yaml"
    path.write_text(
        "upstream: up\nchecks:\n"
        "  - {id: a, module: up.inc, function: Linear.forward, globals_bound: true}\n"
    )
    up = load_matrix(path)
    reuse, cache = VerdictReuse(), ModuleCache()
    inc = "from .layer import Linear\n"
    old = "class Linear:\n    def forward(self):\n        return 1\n"
    new = "KEYS = 1\n\nclass Linear:\n    def forward(self):\n        return KEYS\n"
    statuses = []
    for version, layer in (("1.0", old), ("1.1", old), ("1.2", new)):
        tree = tmp_path / version
        for name, text in {"up/__init__.py": "", "up/inc.py": inc, "up/layer.py": layer}.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_text(textwrap.dedent(text))
        run = VersionRun(up, Target.parse(version), LocalTree(tree, "up", ""), cache, reuse=reuse)
        statuses.append(run.result(up.checks[0]).status)
    assert statuses == [Status.PASS, Status.PASS, Status.FAIL]
    assert (reuse.judged, reuse.reused) == (2, 1)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("    globals_bound: true\n", ":5: check 'c': globals_bound: needs `function`"),
        (
            "    function: f\n    globals_bound: 'yes'\n",
            ":6: check 'c': globals_bound: must be true or false, not a string",
        ),
        (
            "    function: f\n    globals_given: [A]\n",
            ":6: check 'c': globals_given: needs `globals_bound` in the same check",
        ),
        (
            "    function: f\n    globals_bound: true\n    globals_given: ['a b']\n",
            ":7: check 'c': globals_given: 'a b' is not a name",
        ),
        (
            "    any_of:\n      - {function: f, globals_bound: 1}\n      - {function: g}\n",
            ":6: check 'c': globals_bound: must be true or false, not a number",
        ),
    ],
)
def test_misuse_is_a_load_error_naming_file_line_check_and_key(tmp_path, lines, message):
    path = tmp_path / "m.yaml"
    path.write_text(f"upstream: up\nchecks:\n  - id: c\n    module: up\n{lines}")
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    assert str(caught.value).startswith(f"{path}{message}")


def test_an_alternative_may_state_it(tmp_path):
    results = judge(
        tmp_path,
        """
        - id: a
          module: up.inc
          any_of:
            - {function: Linear.forward, globals_bound: true}
            - {function: tool, globals_bound: true, globals_given: [LIMIT]}
        """,
    )
    assert outcomes(results) == [
        (Status.PASS, "tool (up.layer) reads none of up's names; given: LIMIT")
    ]


def test_explain_diffs_the_function_the_check_found_through_the_import(tmp_path):
    # without following the import, explain took the class for gone and sent the reader to
    # another module's Linear
    path = tmp_path / "up.yaml"
    path.write_text(
        "upstream: up\nchecks:\n"
        "  - {id: a, module: up.inc, function: Linear.forward, globals_bound: true}\n"
    )
    up = load_matrix(path)
    layers = {
        "1.0": "class Linear:\n    def forward(self):\n        return 1\n",
        "2.0": "KEYS = 1\n\nclass Linear:\n    def forward(self):\n        return KEYS\n",
    }
    runs = []
    for version, layer in layers.items():
        tree = tmp_path / version
        files = {
            "up/__init__.py": "",
            "up/inc.py": "from .layer import Linear\n",
            "up/layer.py": layer,
            "up/other.py": "class Linear:\n    pass\n",
        }
        for name, text in files.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_text(text)
        runs.append(VersionRun(up, Target.parse(version), LocalTree(tree, "up", ""), ModuleCache()))
    assert up.checks[0].contract is not None
    told = explain(up.checks[0].contract, runs[0], runs[1])
    assert told.became is None
    assert told.new is not None and (told.new.path, told.new.name) == (
        "up/layer.py",
        "Linear.forward",
    )
    assert "-        return 1\n+        return KEYS" in told.diff
