"""The dispatch layer's registry: an analysis name -> its design family (docs/architecture.md, "Packages and
layers"); the shared stages that pick a family through it are compiler/dispatch/ and runner/dispatch/."""
