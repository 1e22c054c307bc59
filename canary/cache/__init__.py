"""The on-disk cache every layer shares.

- `store.py`: files, verdicts and indexes on disk, with locking and verification;
- `sweep.py`: what `canary cache info`, `clear` and `prune` find and delete: the files canary
  wrote, by its own layout, never through a link;
- `fingerprint.py`: canary's own code, so nothing an older engine concluded is believed;
- `memo.py`: what a run made lately (statements, members, digests), kept within a weight.
"""
