"""(mapped in the next commit)"""
