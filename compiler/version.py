"""Versions stamped into every compiled suite."""

COMPILER_VERSION = "0.1.0"
SCHEMA_VERSION = "1"
