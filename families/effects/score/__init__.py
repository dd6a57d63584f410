"""Scoring of effects designs: results -> one outcome per answer -> contrasts against the reference, a
regression on the factors and conditions, BH-FDR over the contrasts, per-scenario shifts."""
