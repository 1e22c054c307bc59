"""The on-disk cache every layer shares: `store` (files, verdicts and indexes, with locking),
`sweep` (what `canary cache info`, `clear` and `prune` find and delete: canary's own files,
never through a link), `memo` (the run's memories) and `fingerprint` (canary's own code, so
nothing an older engine concluded is believed).
"""
