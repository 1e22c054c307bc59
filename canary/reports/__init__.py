"""Reports of a run: text, JSON, markdown, HTML and JUnit renderings, and drift since a baseline.

`dispatch.render(fmt, report)` serves `canary check --format`; `command.report_main` is
`canary report`, which renders saved JSON results without re-running anything. The package
imports nothing itself: a run loads only the renderer its format needs.
"""
