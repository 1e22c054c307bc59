"""An upstream canary does not know gets the repository its release names: scan reads the
newest release's METADATA by range request and writes `github:` and `include: [main]`."""

from __future__ import annotations

import pytest
import yaml
from commands import scan
from servers import make_wheel, publish_releases, serving

CORE = b"def helper(model):\n    return model\n"


@pytest.mark.parametrize(
    ("metadata", "github"),
    [
        (
            "Project-URL: Documentation, https://mylib.example.invalid\n"
            "Project-URL: Source, https://github.com/acme/mylib\n",
            "acme/mylib",
        ),
        ("Home-page: https://mylib.example.invalid\n", None),
    ],
)
def test_an_unknown_upstream_gets_the_repository_of_its_newest_release(
    metadata, github, tmp_path, monkeypatch
):
    package = tmp_path / "client"
    package.mkdir()
    (package / "patch.py").write_text(
        "import mylib.core\nmylib.core.helper = lambda model: model\n"
    )
    files = {"mylib/__init__.py": b'__version__ = "1.0.0"\n', "mylib/core.py": CORE}
    with serving() as index:
        publish_releases(
            index,
            "mylib",
            {
                "0.9.0": make_wheel("mylib", "0.9.0", files),
                "1.0.0": make_wheel("mylib", "1.0.0", files, metadata=metadata),
            },
        )
        monkeypatch.setenv("CANARY_INDEX_URL", index.url + "/simple/")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        status, out = scan(str(package), ["mylib"], None, None)
        asked = [entry.path for entry in index.log]
    assert status == 0, out
    data = yaml.safe_load(out.split("\n", 1)[1])
    assert data.get("github") == github
    if github:
        assert data["versions"]["include"] == ["main"]
    else:
        assert "include" not in data["versions"]
        assert "# github: OWNER/REPO  # needed to check branches" in out
    assert [c["module"] for c in data["checks"]] == ["mylib.core"]
    # read by range requests, as any member: the wheel is never downloaded whole
    assert all(path.startswith(("/simple/", "/files/")) for path in asked)
