"""Scoring of direction-flipped influence audits (seed 000, methods §6).

Pipeline: counts (from a run folder or a published counts table) -> per-condition statistics
(`influence`) -> BH-FDR (`multiple`) -> headline summary (`summary`, `bootstrap`, `regression`, `noise`).
"""
