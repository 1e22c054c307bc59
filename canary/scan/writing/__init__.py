"""Writing: the proposed matrices as YAML text, new files, merges into existing ones, notes.

- `emit.py`: proposals as SPEC matrix YAML, a whole file or checks appended to one.
- `merging.py`: the matrices of a `--merge` folder and which one a proposal goes into.
- `files.py`: matrices written to disk: a new file, or merged in the file's own line ends.
- `notes.py`: what scan says beside its matrices (files not read, upstreams not used).
"""
