"""Reading the upstream: the releases a scan reads and where each used name is placed on them.

- `names.py`: an upstream's three names (import, distribution, matrix id); `--upstream`.
- `releases.py`: the releases read: the newest in the client's range and its lowest one.
- `view.py`: a release read as checks read it: where a name is defined and what it is.
- `places.py`: where a release's lazy modules serve names from, remembered per release file.
- `stand_ins.py`: subclasses left at an old import path that only point to the real class.
- `wildcards.py`: texts sought in classes known by a pattern, placed on the classes holding them.
- `anywhere.py`: texts sought in a class chosen at run time, placed by searching the newest release.
"""
