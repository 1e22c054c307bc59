"""The GitHub Action's steps: action.yml runs `canary action STEP`.

The logic lives here rather than in the action's shell so that it runs, and is tested, outside
GitHub: every step reads its inputs from `INPUT_*` variables and GitHub's own environment
(`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_API_URL`, ...), as a runner would set them.
"""
