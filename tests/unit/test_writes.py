"""safety.writes: the reader's check `inside` and the writer's error, each saying why apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from canary.safety.reads import Refused
from canary.safety.writes import WriteError, inside, write_new


def refusal(folder: Path, path: Path) -> str:
    with pytest.raises(Refused) as caught:
        inside(folder, path)
    return str(caught.value)


def test_inside_refuses_a_link_at_the_path_itself_and_on_the_way(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    missing = tmp_path / "real" / "missing.yaml"
    assert inside(tmp_path, tmp_path) == tmp_path
    assert inside(tmp_path, missing) == missing
    assert refusal(tmp_path, tmp_path / "linked") == "it is a symbolic link"
    linked = tmp_path / "linked"
    assert refusal(tmp_path, linked / "x.yaml") == f"{linked} is a symbolic link"
    assert refusal(tmp_path / "real", linked) == f"outside {tmp_path / 'real'}"


def test_inside_refuses_a_file_on_the_way_but_not_at_the_end(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    assert inside(tmp_path, plain) == plain
    assert refusal(tmp_path, plain / "under") == f"{plain} is not a folder"


def test_a_write_error_carries_the_path_and_the_reason(tmp_path):
    (tmp_path / "there.yaml").write_text("theirs\n")
    with pytest.raises(WriteError) as caught:
        write_new(tmp_path, tmp_path / "there.yaml", "mine\n")
    assert caught.value.path == tmp_path / "there.yaml"
    assert caught.value.reason == "already there"
    assert str(caught.value) == f"{tmp_path / 'there.yaml'}: not written: already there"
