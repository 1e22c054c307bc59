"""The GitHub repository a release's core metadata names (Project-URL, Home-page)."""

from __future__ import annotations

import pytest

from canary.sources.repository import github_repository


def metadata(*lines: str) -> str:
    return "\n".join(["Metadata-Version: 2.1", "Name: demo", "Version: 1.0", *lines]) + "\n\nbody"


@pytest.mark.parametrize(
    ("lines", "repo"),
    [
        (["Project-URL: Source, https://github.com/acme/demo"], "acme/demo"),
        (["Project-URL: Repository, https://github.com/acme/demo.git"], "acme/demo"),
        (["Home-page: https://github.com/acme/demo/tree/main"], "acme/demo"),
        (
            [
                "Project-URL: Documentation, https://github.com/acme/docs",
                "Project-URL: Source Code, https://github.com/acme/demo",
            ],
            "acme/demo",
        ),
        (
            [
                "Home-page: https://github.com/old/demo",
                "Project-URL: Homepage, https://demo.example.invalid",
                "Project-URL: Issues, https://github.com/acme/demo/issues",
            ],
            "acme/demo",
        ),
        (["Home-page: https://demo.example.invalid"], None),
        (["Project-URL: Source, https://github.com/acme"], None),
        (["Project-URL: Source, https://github.com.evil.invalid/acme/demo"], None),
        (["Project-URL: Source, https://github.com/acme/de mo"], None),
        ([], None),
    ],
)
def test_the_repository_comes_from_the_labels_that_name_the_code(lines, repo):
    assert github_repository(metadata(*lines)) == repo
