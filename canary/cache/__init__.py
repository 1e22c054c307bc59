"""The on-disk cache every layer shares: `store` (files, verdicts and indexes, with locking and
pruning) and `fingerprint` (canary's own code, so nothing an older engine concluded is believed).
"""
