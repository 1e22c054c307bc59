"""The version a branch declares, in every form upstreams use, read without importing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.version import Version

from canary.analysis.declared import VersionUnknown, declared_version
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError


@dataclass
class DictTree:
    """A Tree over two dicts: package files and repository-root files."""

    files: dict[str, str] = field(default_factory=dict)
    meta: dict[str, str | bytes] = field(default_factory=dict)
    kind: str = "dict"

    def read(self, path: str) -> bytes | None:
        found = self.files.get(path)
        return found.encode() if found is not None else None

    def read_meta(self, path: str) -> bytes | None:
        found = self.meta.get(path)
        return found.encode() if isinstance(found, str) else found


class BrokenTree(DictTree):
    """A source that cannot decide whether a file exists (network down, corrupt archive)."""

    def read(self, path: str) -> bytes | None:
        raise SourceError(f"https://example.invalid/{path}: connection reset")


TRL_INIT_0_22 = """\
import os
with open(os.path.join(os.path.dirname(__file__), "VERSION")) as f:
    __version__ = f.read().strip()
"""

TRL_INIT_MAIN = """\
from importlib.metadata import PackageNotFoundError, version
try:
    __version__ = version("trl")
except PackageNotFoundError:
    __version__ = "unknown"
"""


@pytest.mark.parametrize(
    ("files", "meta", "expected"),
    [
        # transformers and peft keep a literal in the package
        ({"pkg/__init__.py": '__version__ = "4.57.0.dev0"\n'}, {}, "4.57.0.dev0"),
        ({"pkg/__init__.py": '__version__: str = "1.2.3"\n'}, {}, "1.2.3"),
        ({"pkg/__init__.py": '__version__ = VERSION = "2.0.0rc1"\n'}, {}, "2.0.0rc1"),
        ({"pkg/__init__.py": "import x\n", "pkg/version.py": "__version__ = '0.5'\n"}, {}, "0.5"),
        ({"pkg/_version.py": "__version__ = '0.6.post1'\n"}, {}, "0.6.post1"),
        ({"pkg/__about__.py": "__version__ = '0.7'\n"}, {}, "0.7"),
        # the first literal wins over a later reassignment and over other files
        (
            {
                "pkg/__init__.py": "__version__ = None\n__version__ = '3.0'\n",
                "pkg/VERSION": "9.9.9\n",
            },
            {"VERSION": "8.8.8"},
            "3.0",
        ),
        # trl 0.22: __init__ reads the VERSION file beside it at import time
        ({"pkg/__init__.py": TRL_INIT_0_22, "pkg/VERSION": "0.22.2\n"}, {}, "0.22.2"),
        # trl main: pyproject names the file (`version = {file = ...}`)
        (
            {"pkg/__init__.py": TRL_INIT_MAIN},
            {
                "pyproject.toml": '[tool.setuptools.dynamic]\nversion = { file = "pkg/V.txt" }\n',
                "pkg/V.txt": "1.17.0.dev0\n",
                "VERSION": "0.0.1",
            },
            "1.17.0.dev0",
        ),
        # a static version in the [project] table (and not one from another table)
        (
            {},
            {
                "pyproject.toml": '[tool.other]\nversion = "0.1"\n[project]\nname = "pkg"\n'
                'version = "2.4.0"\n[tool.x]\nversion = "0.2"\n'
            },
            "2.4.0",
        ),
        # a plain root VERSION / version.txt, with a byte order mark and a trailing newline
        ({}, {"VERSION": b"\xef\xbb\xbf5.1.0\n"}, "5.1.0"),
        ({}, {"version.txt": "  6.0.0  \n"}, "6.0.0"),
        # core metadata of an sdist or an unpacked wheel
        ({}, {"PKG-INFO": "Metadata-Version: 2.1\nName: pkg\nVersion: 0.9.1\n"}, "0.9.1"),
        # a literal that is not PEP 440 ("unknown") does not hide a real declaration
        ({"pkg/__init__.py": "__version__ = 'unknown'\n"}, {"VERSION": "1.0.0"}, "1.0.0"),
    ],
)
def test_declared_version_forms(files, meta, expected):
    assert declared_version(DictTree(files, meta), "pkg") == Version(expected)


def test_dotted_package_reads_its_own_folder():
    tree = DictTree({"a/b/__init__.py": "__version__ = '1.4'\n", "a/__init__.py": "x = 1\n"})
    assert declared_version(tree, "a.b") == Version("1.4")


@pytest.mark.parametrize(
    "source",
    [
        "__version__ = get_version()\n",
        "__version__ = 1.0\n",
        "def f(:\n",  # unparsable upstream code is no version, not a crash
        "if True:\n    __version__ = '1.0'\n",  # not at module level: computed, not stated
    ],
)
def test_no_literal_and_no_file_is_unknown(source):
    with pytest.raises(VersionUnknown, match="no literal __version__ in pkg/"):
        declared_version(DictTree({"pkg/__init__.py": source}), "pkg")


def test_unparsable_declaration_names_the_value_and_the_file():
    tree = DictTree({"pkg/__init__.py": "__version__ = 'dev'\n"}, {"VERSION": "latest"})
    with pytest.raises(VersionUnknown) as caught:
        declared_version(tree, "pkg")
    assert "'dev' in pkg/__init__.py" in str(caught.value)
    assert "'latest' in VERSION" in str(caught.value)
    assert "not PEP 440" in str(caught.value)


def test_unreadable_source_is_unknown_with_the_cause():
    with pytest.raises(VersionUnknown, match="connection reset"):
        declared_version(BrokenTree(), "pkg")


def test_local_checkout_with_src_layout(tmp_path: Path):
    """transformers-style: the package under src/, a literal in __init__."""
    package = tmp_path / "src" / "transformers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "5.0.0.dev0"\n')
    tree = LocalTree(tmp_path, "transformers", "src")
    assert declared_version(tree, "transformers") == Version("5.0.0.dev0")


def test_local_checkout_trl_style_version_file(tmp_path: Path):
    """trl main: a computed __version__, pyproject naming the VERSION file at the root."""
    (tmp_path / "trl").mkdir()
    (tmp_path / "trl" / "__init__.py").write_text(TRL_INIT_MAIN)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "trl"\ndynamic = ["version"]\n\n'
        '[tool.setuptools.dynamic]\nversion = { file = "VERSION" }\n'
    )
    (tmp_path / "VERSION").write_text("1.17.0.dev0\n")
    version = declared_version(LocalTree(tmp_path, "trl"), "trl")
    assert version == Version("1.17.0.dev0")
    assert version > Version("1.16.0")  # gates compare by PEP 440: main sorts after releases


def test_unpacked_wheel_metadata(tmp_path: Path):
    (tmp_path / "peft").mkdir()
    (tmp_path / "peft" / "__init__.py").write_text("from .x import *\n")
    dist_info = tmp_path / "peft-0.17.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: peft\nVersion: 0.17.1\n")
    assert declared_version(LocalTree(tmp_path, "peft"), "peft") == Version("0.17.1")


def test_a_huge_init_is_no_answer_and_costs_no_parse(tmp_path):
    """A branch's __init__.py is read for its version: it gets the sources' caps, not more."""
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_bytes(b'__version__ = "9.9"\n' + b"x = 1\n" * 300_000)
    (tmp_path / "VERSION").write_text("1.2.3\n")
    tree = LocalTree(tmp_path, "pkg", "src")
    assert declared_version(tree, "pkg") == Version("1.2.3")
