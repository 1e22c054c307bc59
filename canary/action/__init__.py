"""The GitHub Action's steps: action.yml runs `canary action STEP`.

The logic lives here rather than in the action's shell so that it runs, and is tested, outside
GitHub: every step reads its inputs from `INPUT_*` variables and GitHub's own environment
(`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_API_URL`, ...), as a runner would set them.

- `command.py`: `canary action STEP`, the table of steps;
- `steps.py`: the steps every mode runs: plan (matrices, cache key), lock, check, verdict;
- `nightly.py`: the nightly's steps: the comparison with last night, the issue, the lock PR;
- `rest.py`: the few GitHub REST calls the nightly makes, at `GITHUB_API_URL` with the job's token;
- `runner.py`: what a GitHub runner gives a step and takes back: inputs, outputs, the job summary.
"""
