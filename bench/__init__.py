"""The canary benchmark (issue 8): cold and warm cost of the shipped matrices, side by side.

Run it from the project root with `python -m bench`; docs/benchmark.md says
what it measures.
"""
