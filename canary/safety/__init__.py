"""What canary does with things that are not its own: text from a source shown, files written
into a tree that may carry links. The lowest layer: it imports nothing of canary but
`canary.errors`, so every layer above may use it.

- `untrusted.py`: text from outside canary (upstream sources, index pages, file names, results
  files) made safe to print: one line, no escape sequence a terminal or a CI runner acts on;
- `reads.py`: a file of a tree canary does not own, read never through a link, never from a FIFO,
  never past a budget;
- `writes.py`: every file canary writes: never through a symbolic link, never outside the folder
  named, never left half-written.
"""
