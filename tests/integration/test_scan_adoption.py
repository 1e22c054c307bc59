"""What scan reads and what a review keeps: excluded folders, `ignore:`, edited checks, every
matrix of a merge folder, `init --dry-run` printing the matrices."""

from __future__ import annotations

import io
import shutil

import pytest
import yaml
from commands import scan as scanned
from paths import FIXTURES

from canary.init.command import init_main
from canary.matrix.model import MatrixError, load_matrix

FIXTURE = FIXTURES / "downstream"
TEST_USE = "import trl\n\ntrl.only_a_test_uses_this = 1\n"


# Nothing here reads the package index: scan places by names alone.
pytestmark = pytest.mark.usefixtures("no_index")


@pytest.fixture
def repository(tmp_path):
    """The fixture downstream as a repository with tests, scripts and docs folders that reach
    for upstream names the package itself never uses."""
    tree = tmp_path / "repo"
    shutil.copytree(FIXTURE, tree)
    for folder in ("tests", "scripts", "docs", "fakesloth/tests"):
        (tree / folder).mkdir()
        (tree / folder / "test_use.py").write_text(TEST_USE)
    (tree / "fakesloth" / "legacy.py").write_text("import trl\n\ntrl.legacy_name = 1\n")
    return tree


def test_a_repository_s_tests_scripts_and_docs_are_not_scanned(repository):
    status, text = scanned(str(repository), ["trl"], None, None)
    assert status == 0
    assert "only_a_test_uses_this" not in text and "legacy_name" in text
    assert "not scanned: docs/ (1 file), scripts/ (1 file), tests/ (2 files)" in text
    header = text.split("upstream: trl")[0]
    assert "# not scanned: docs/ (1 file), scripts/ (1 file), tests/ (2 files)" in header


def test_a_folder_that_is_no_repository_is_scanned_whole(repository):
    (repository / "pyproject.toml").unlink()
    _, text = scanned(str(repository), ["trl"], None, None)
    assert "only_a_test_uses_this" in text and "not scanned" not in text


@pytest.mark.parametrize("glob", ["legacy.py", "fakesloth/legacy.py", "leg*", "fakesloth/l*.py"])
def test_exclude_adds_to_the_default(repository, glob):
    _, text = scanned(str(repository), ["trl"], None, None, exclude=[glob])
    assert "legacy_name" not in text and "only_a_test_uses_this" not in text
    assert f"--exclude {glob} (1 file)" in text


def test_an_exclude_matching_nothing_leaves_everything_in(repository):
    _, text = scanned(str(repository), ["trl"], None, None, exclude=["nothing*"])
    assert "legacy_name" in text and "--exclude" not in text


def written_checks(folder, name="trl.yaml") -> list[dict]:
    return yaml.safe_load((folder / name).read_text())["checks"]


def test_an_ignored_id_is_never_proposed_again(tmp_path):
    out = tmp_path / "m"
    scanned(str(FIXTURE), ["trl"], str(out), None)
    checks = written_checks(out)
    dropped = checks[1]["id"]
    text = (out / "trl.yaml").read_text()
    start = text.index(f"  - id: {dropped}")
    end = text.index("  - id: ", start + 1)
    declined = text[:start] + text[end:] + f"ignore:\n  - {{id: {dropped}, reason: dead code}}\n"
    (out / "trl.yaml").write_text(declined)
    assert [e.id for e in load_matrix(out / "trl.yaml").ignored] == [dropped]
    status, said = scanned(str(FIXTURE), ["trl"], None, str(out))
    assert status == 0 and "0 new checks" in said
    assert (out / "trl.yaml").read_text() == declined


def test_a_deleted_check_not_ignored_comes_back(tmp_path):
    out = tmp_path / "m"
    scanned(str(FIXTURE), ["trl"], str(out), None)
    text = (out / "trl.yaml").read_text()
    dropped = written_checks(out)[1]["id"]
    start = text.index(f"  - id: {dropped}")
    end = text.index("  - id: ", start + 1)
    (out / "trl.yaml").write_text(text[:start] + text[end:])
    _, said = scanned(str(FIXTURE), ["trl"], None, str(out))
    assert "1 new checks" in said and dropped in [c["id"] for c in written_checks(out)]


def test_an_edited_text_check_is_not_proposed_again_under_any_id(tmp_path):
    out = tmp_path / "m"
    scanned(str(FIXTURE), ["trl"], str(out), None)
    text = (out / "trl.yaml").read_text()
    trimmed = text.replace('"self._step += 1", ', "").replace(
        "id: grpo-trainer-prepare-inputs-source\n", "id: my-own-name\n"
    )
    assert trimmed != text
    (out / "trl.yaml").write_text(trimmed)
    _, said = scanned(str(FIXTURE), ["trl"], None, str(out))
    assert "0 new checks" in said and (out / "trl.yaml").read_text() == trimmed


def test_a_hand_written_name_list_gains_the_names_newly_used(tmp_path):
    out = tmp_path / "m"
    scanned(str(FIXTURE), ["transformers"], str(out), None)
    matrix = out / "transformers.yaml"
    text = matrix.read_text()
    check_id = "id: trainer-init-accepts\n"
    assert check_id in text and 'accepts: ["model", "args", "processing_class"]' in text
    edited = text.replace('"model", "args", "processing_class"', '"model"')
    matrix.write_text(edited.replace(check_id, "id: mine\n"))
    _, said = scanned(str(FIXTURE), ["transformers"], None, str(out))
    assert "1 new checks" in said
    assert written_checks(out, "transformers.yaml")[-1]["accepts"] == ["args", "processing_class"]
    matrix.write_text(edited)  # the proposal's own id: the maintainer's decision
    _, said = scanned(str(FIXTURE), ["transformers"], None, str(out))
    assert "0 new checks" in said


def test_merge_goes_into_every_matrix_of_the_folder(tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "peft-contracts.yaml").write_text("upstream: peft\nchecks: []\n")
    (out / "trl.yaml").write_text("upstream: trl\nchecks: []\n")
    (out / "trl.lock").write_text("not a matrix\n")
    (out / "notes.yaml").write_text("- just a list\n")
    status, said = scanned(str(FIXTURE), ["trl"], None, str(out))
    assert status == 0
    assert f"merged into {out / 'peft-contracts.yaml'}" in said
    assert written_checks(out, "peft-contracts.yaml")
    assert not (out / "peft.yaml").exists()


def test_what_another_matrix_of_the_upstream_states_is_not_proposed(tmp_path):
    out = tmp_path / "m"
    scanned(str(FIXTURE), ["trl"], str(out), None)
    checks = written_checks(out)
    moved = checks[0]
    (out / "trl-extra.yaml").write_text(
        "upstream: trl\nchecks:\n  - {id: " + moved["id"] + ", module: trl.other}\n"
    )
    text = (out / "trl.yaml").read_text()
    start = text.index(f"  - id: {moved['id']}")
    end = text.index("  - id: ", start + 1)
    (out / "trl.yaml").write_text(text[:start] + text[end:])
    _, said = scanned(str(FIXTURE), ["trl"], None, str(out))
    assert f"merged into {out / 'trl.yaml'}: 0 new checks" in said


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("ignore: x\n", "ignore: must be a list"),
        ("ignore:\n  - Bad Id\n", "is not a check id"),
        ("ignore:\n  - {id: x, why: y}\n", "why: unknown key"),
        ("ignore:\n  - x\n  - {id: x}\n", "x is listed twice .first on line 5"),
        ("ignore:\n  - a\n", "a is also a check of this file"),
        ("ignore:\n  - {id: x, reason: [1]}\n", "reason must be text"),
    ],
)
def test_the_loader_refuses_a_malformed_ignore_list(tmp_path, entries, message):
    path = tmp_path / "trl.yaml"
    path.write_text("upstream: trl\nchecks:\n  - {id: a, module: trl}\n" + entries)
    with pytest.raises(MatrixError, match=message) as caught:
        load_matrix(path)
    assert str(caught.value).startswith(f"{path}:")


def test_init_dry_run_prints_the_matrices_it_would_write(tmp_path):
    tree = tmp_path / "repo"
    shutil.copytree(FIXTURE, tree)
    out = io.StringIO()
    status = init_main(str(tree), "canary", ["trl"], "o/r@v1", True, out)
    text = out.getvalue()
    # offline, the lock cannot be resolved: the dry run fails where init would, and says why
    assert status == 1 and not (tree / "canary").exists()
    assert "canary init: canary/trl.lock: not written: " in text
    printed = [d for d in yaml.safe_load_all(text.split("would write")[0]) if d]
    assert printed[0]["upstream"] == "trl" and len(printed[0]["checks"]) == 5
    assert "# canary/trl.yaml" in text and "nothing written (--dry-run)" in text
