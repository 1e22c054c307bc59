"""`--source DIR` is upstream's folder: read only inside it, and no more than a wheel member."""

from __future__ import annotations

import json

import pytest
from commands import canary

from canary.sources.limits import Limits
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError


def checkout(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "credentials").write_text("token = 'x'\n")
    pkg = tmp_path / "site" / "trl"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .core import A\n")
    (pkg / "core.py").write_text("class A:\n    pass\n")
    return tmp_path / "site", pkg


def test_a_link_inside_the_folder_is_read_and_one_out_of_it_is_refused(tmp_path):
    site, pkg = checkout(tmp_path)
    (pkg / "same.py").symlink_to("core.py")
    (pkg / "leak.py").symlink_to(tmp_path / "outside" / "credentials")
    tree = LocalTree(site, "trl")
    assert tree.read("trl/same.py") == b"class A:\n    pass\n"
    with pytest.raises(SourceError, match=r"trl/leak\.py: a link out of .*site.*: not read"):
        tree.read("trl/leak.py")
    assert tree.read("trl/absent.py") is None


def test_a_file_over_a_members_cap_is_refused(tmp_path):
    site, pkg = checkout(tmp_path)
    (pkg / "huge.py").write_bytes(b"x = 1\n" * 100)
    tree = LocalTree(site, "trl", limits=Limits(max_member=500))
    assert tree.read("trl/core.py") == b"class A:\n    pass\n"
    with pytest.raises(SourceError, match=r"trl/huge\.py: not read: 600 bytes, over 500"):
        tree.read("trl/huge.py")


def test_check_says_error_for_a_module_read_through_a_link_out(tmp_path):
    site, pkg = checkout(tmp_path)
    (pkg / "core.py").unlink()
    (pkg / "core.py").symlink_to(tmp_path / "outside" / "credentials")
    matrix = tmp_path / "trl.yaml"
    matrix.write_text("upstream: trl\nchecks:\n  - {id: a, module: trl.core, symbol: A}\n")
    status, out = canary("check", str(matrix), "--source", str(site), "--format", "json")
    assert status == 1
    (result,) = json.loads(out)["results"]
    assert result["status"] == "error" and "a link out of" in result["detail"], result
