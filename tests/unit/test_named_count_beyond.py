"""`named:`, `count:` and `no_methods_beyond:` on a fixture tree, each with its near miss."""

from __future__ import annotations

import pytest
from judging import judge_inline

from canary.engine.outcomes import Status
from canary.matrix.model import MatrixError, load_matrix

SOURCE = """
def deprecate_kwarg(*args, **kwargs):
    return lambda f: f


class Base:
    def shared(self):
        pass

    def _private(self):
        pass


class LoRAManager(Base):
    @deprecate_kwarg("num_logits_to_keep", "4.50", new_name="logits_to_keep")
    def renamed(self, input_ids, logits_to_keep=0):
        pass

    def absorbed(self, input_ids, **kwargs):
        if peft_config is not None:
            pass
        if peft_config is not None:
            pass
        once = 1

    def add_adapter(self):
        pass

    def __len__(self):
        return 0
"""


def judge(tmp_path, checks_yaml):
    return judge_inline(tmp_path, "up", {"up/__init__.py": SOURCE}, checks_yaml, "1.0.0")


def test_named_refuses_mere_absorption(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: a, module: up, function: LoRAManager.renamed, named: [input_ids, num_logits_to_keep]}
        - {id: b, module: up, function: LoRAManager.absorbed, named: [num_logits_to_keep]}
        - {id: c, module: up, function: LoRAManager.absorbed, accepts: [num_logits_to_keep]}
        """,
    )
    assert [(r.status, r.detail) for r in results] == [
        (Status.PASS, "num_logits_to_keep renamed to logits_to_keep by @deprecate_kwarg"),
        (
            Status.FAIL,
            "LoRAManager.absorbed(self, input_ids, **kwargs) has no parameter num_logits_to_keep "
            "(only absorbed by **kwargs)",
        ),
        (Status.PASS, "num_logits_to_keep absorbed by **kwargs"),
    ]


def test_count_states_how_often_an_anchor_occurs(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: a, module: up, function: LoRAManager.absorbed, contains: ["once = 1"], count: 1}
        - id: b
          module: up
          function: LoRAManager.absorbed
          contains: ["if peft_config is not None:"]
          count: 1
        """,
    )
    assert results[0].status is Status.PASS
    assert results[1].status is Status.FAIL
    assert results[1].detail == (
        "source of LoRAManager.absorbed has 'if peft_config is not None:' 2 times "
        "(its lines 2, 4), not 1"
    )


def test_no_public_method_beyond_a_list(tmp_path):
    results = judge(
        tmp_path,
        """
        - id: a
          module: up
          class: LoRAManager
          no_methods_beyond: [renamed, absorbed, add_adapter, shared]
        - {id: b, module: up, class: LoRAManager, no_methods_beyond: [renamed, absorbed]}
        """,
    )
    assert [(r.status, r.detail) for r in results] == [
        (Status.PASS, ""),
        (Status.FAIL, "LoRAManager has public methods beyond the list: add_adapter, shared"),
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("    function: f\n    named: ['a b']\n", "named: 'a b' is not a name"),
        ("    class: A\n    named: [a]\n", "named: needs `function` in the same check"),
        (
            "    function: f\n    contains: [x]\n    count: 0\n",
            "count: must be a count (1 or more), not 0",
        ),
        ("    function: f\n    count: 2\n", "count: needs `contains` in the same check"),
        (
            "    function: f\n    no_methods_beyond: [a]\n",
            "no_methods_beyond: needs `class` in the same check",
        ),
    ],
)
def test_bad_keys_are_load_errors(tmp_path, lines, message):
    path = tmp_path / "m.yaml"
    path.write_text(f"upstream: up\nchecks:\n  - id: c\n    module: up\n{lines}")
    with pytest.raises(MatrixError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_matrix(path)
