"""Scoring of conditional-bias runs: Eq. 1 and the row effects (metric.py), DiD both variants (did.py)."""
