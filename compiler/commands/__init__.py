"""The compiler's commands: `spec check`, `spec compile`, `spec show` (docs/architecture.md, "Packages and
layers")."""
