"""Reports of a run: text, JSON, markdown, HTML and JUnit renderings, and drift since a baseline.

`dispatch.render(fmt, report)` serves `canary check --format`; `command.report_main` is
`canary report`, which renders saved JSON results without re-running anything. The package
imports nothing itself: a run loads only the renderer its format needs.

- `dispatch.py`: format name -> renderer, the one place `--format` values are known;
- `command.py`: `canary report`, saved results rendered, and drift since a baseline;
- `output.py`: `--output FILE`, checked before a run starts so a long run is never lost;
- `grid.py`: the check x version grid every format draws, compressed into runs;
- `text.py`: terminal output: the grid squeezed to the width on a TTY, grouped lines in logs;
- `fitting.py`: text cut to a width: ids and URLs in the middle, details in whole words;
- `progress.py`: the progress line on a terminal's stderr while sources are read;
- `transition.py`: where a check broke and what its subject became, as report lines;
- `faults.py`: sources that could not be read, said once per cause;
- `jsonio.py`: SPEC's JSON object, written and read back;
- `markdown.py`: GitHub job summaries and PR comments, under GitHub's size limits;
- `html.py`: one self-contained HTML page: the run, the grid, the findings;
- `junit.py`: JUnit XML for CI test tabs;
- `github.py`: `--format github`: the findings as annotations on the matrix lines;
- `workflow.py`: workflow commands as the runner parses them; other text fenced from them;
- `standing.py`: the red checks, those red on releases the declared requirement allows first;
- `drift.py`: what changed since a baseline run, the nightly's "new since yesterday";
- `explanation.py`: `canary explain`'s output, as text or JSON.
"""
