"""The compiler's dispatch layer: the stages that pick a design's family through the registry, per design
(designs.py) and for a whole spec file (build.py); docs/architecture.md, "Packages and layers"."""
