"""`attributes:` and `assignable:`: what a class binds (or a base, in C3 order), never what it
merely mentions; on a fixture tree with each case and its near miss."""

from __future__ import annotations

from judging import judge_inline

from canary.engine.outcomes import Status

BASE = """
class Base:
    model_accepts_loss_kwargs = True
    supports_gradient_checkpointing: bool

    def __init__(self, config):
        self.config = config
        self.final_logit_softcapping: float | None = config.final_logit_softcapping
"""
LAYER = '''
from dataclasses import dataclass
from functools import cached_property

from up.base import Base


class Attention(Base):
    """Mentions self.not_bound_in_docstring = 1 only in text."""

    __slots__ = ("slot_name",)

    def __init__(self, config):
        super().__init__(config)
        # self.commented_out = 1
        message = "self.in_a_string = 2"
        self.attn_logit_softcapping = config.attn_logit_softcapping
        self.first, (self.second, *self.rest) = 1, (2, 3)
        self.counter += 1

    def later(self):
        self.set_later: int = 0

    @staticmethod
    def static(self):
        self.not_an_instance = 1

    @property
    def read_only(self):
        return 1

    @property
    def writable(self):
        return self._writable

    @writable.setter
    def writable(self, value):
        self._writable = value

    @cached_property
    def cached(self):
        return 1


@dataclass
class Options:
    beta: float = 0.1
'''
TREE = {"up/__init__.py": "", "up/base.py": BASE, "up/layer.py": LAYER}


def line(source: str, text: str) -> int:
    """The line of `text` in the module written from `source`."""
    return source[: source.index(text)].count("\n") + 1


def judge(tmp_path, checks_yaml):
    return judge_inline(tmp_path, "up", TREE, checks_yaml, "1.0.0")


def test_each_way_a_class_binds_an_attribute(tmp_path):
    (result,) = judge(
        tmp_path,
        """
        - id: a
          module: up.layer
          class: Attention
          attributes: [attn_logit_softcapping, first, second, rest, set_later, read_only,
                       writable, cached, slot_name, config, final_logit_softcapping,
                       model_accepts_loss_kwargs, supports_gradient_checkpointing]
        """,
    )
    assert result.status is Status.PASS, result.detail
    soft, first = line(LAYER, "self.attn_logit_softcapping ="), line(LAYER, "self.first,")
    config, final = line(BASE, "self.config ="), line(BASE, "self.final_logit")
    flag, annotated = line(BASE, "model_accepts"), line(BASE, "supports_gradient")
    assert result.detail.split("; ") == [
        f"attn_logit_softcapping: self.attn_logit_softcapping set in __init__ (line {soft})",
        f"first: self.first set in __init__ (line {first})",
        f"second: self.second set in __init__ (line {first})",
        f"rest: self.rest set in __init__ (line {first})",
        f"set_later: self.set_later set in later (line {line(LAYER, 'self.set_later')})",
        "read_only: a property without a setter",
        "writable: a property with a setter",
        "cached: a cached_property",
        "slot_name: in __slots__",
        f"config: self.config set in __init__ (line {config}) of up.base.Base",
        f"final_logit_softcapping: self.final_logit_softcapping set in __init__ (line {final}) of "
        "up.base.Base",
        f"model_accepts_loss_kwargs: class attribute (line {flag}) of up.base.Base",
        f"supports_gradient_checkpointing: annotated in the class body (line {annotated}) of "
        "up.base.Base",
    ]


def test_a_mention_is_not_a_binding(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: comment, module: up.layer, class: Attention, attributes: [commented_out]}
        - {id: string, module: up.layer, class: Attention, attributes: [in_a_string]}
        - {id: docstring, module: up.layer, class: Attention, attributes: [not_bound_in_docstring]}
        - {id: augmented, module: up.layer, class: Attention, attributes: [counter]}
        - {id: static, module: up.layer, class: Attention, attributes: [not_an_instance]}
        - {id: near, module: up.layer, class: Attention, attributes: [attn_softcapping]}
        """,
    )
    assert [r.status for r in results] == [Status.FAIL] * 6
    assert results[0].detail == "Attention binds no attribute commented_out"
    assert results[5].detail == (
        "Attention binds no attribute attn_softcapping (has attn_logit_softcapping, "
        "final_logit_softcapping)"
    )


def test_own_and_assignable(tmp_path):
    results = judge(
        tmp_path,
        """
        - {id: own, module: up.layer, class: Attention, own: true, attributes: [config]}
        - {id: own-here, module: up.layer, class: Attention, own: true, attributes: [first]}
        - {id: ro, module: up.layer, class: Attention, assignable: [read_only]}
        - {id: rw, module: up.layer, class: Attention, assignable: [writable, cached, first]}
        - {id: field, module: up.layer, class: Options, attributes: [beta]}
        """,
    )
    assert [(r.status, r.detail) for r in results] == [
        (Status.FAIL, "Attention binds no attribute config in its own body"),
        (Status.PASS, f"first: self.first set in __init__ (line {line(LAYER, 'self.first,')})"),
        (
            Status.FAIL,
            "read_only of up.layer.Attention is a property without a setter: it cannot be assigned",
        ),
        (
            Status.PASS,
            "writable: a property with a setter; cached: a cached_property; first: self.first "
            f"set in __init__ (line {line(LAYER, 'self.first,')})",
        ),
        (Status.PASS, f"beta: a dataclass field in the class body (line {line(LAYER, 'beta:')})"),
    ]


ODD = """
class Odd:
    def parenthesized(self):
        (self).wrapped = 1

    def spaced(this):
        this . spaced_out = 1

    def continued(self):
        self.\\
            continued = 1

    def listed(self):
        [self.listed_name] = [1]

    def commented(self):
        (self.commented  # why
         ) = 1

    def reads(self):
        return self.only_read == 1
"""


def test_a_body_is_read_for_every_spelling_of_a_target(tmp_path):
    # bodies with no `self.NAME` target are not parsed: none of these may be taken for one
    (bound, read) = judge_inline(
        tmp_path,
        "up",
        {"up/__init__.py": "", "up/odd.py": ODD},
        """
        - id: bound
          module: up.odd
          class: Odd
          attributes: [wrapped, spaced_out, continued, listed_name, commented]
        - {id: read, module: up.odd, class: Odd, attributes: [only_read]}
        """,
        "1.0.0",
    )
    assert bound.status is Status.PASS, bound.detail
    assert read.status is Status.FAIL


def test_a_method_met_again_on_other_lines_names_its_own_lines(tmp_path):
    # the second tree's methods are the first's, four lines lower: their targets are read by
    # their text once, and each tree's detail names its own lines
    moved = "import os\nimport sys\n\n\n" + LAYER
    details = []
    for layer in (LAYER, moved):
        tree = {**TREE, "up/layer.py": layer}
        (result,) = judge_inline(
            tmp_path / str(len(details)),
            "up",
            tree,
            "- {id: a, module: up.layer, class: Attention, attributes: [first, set_later]}",
            "1.0.0",
        )
        details.append(result.detail)
    assert details == [
        f"first: self.first set in __init__ (line {line(layer, 'self.first,')}); "
        f"set_later: self.set_later set in later (line {line(layer, 'self.set_later')})"
        for layer in (LAYER, moved)
    ]
