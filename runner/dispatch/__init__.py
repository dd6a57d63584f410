"""The runner's dispatch layer: the commands and the report stage that pick a design's family through the
registry (`spec score`, `spec report`, `spec import`, `spec plan`); docs/architecture.md, "Packages and layers"."""
