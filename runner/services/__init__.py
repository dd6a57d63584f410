"""The call services, below the runner: the response cache (and the user cache folder), and what a provider's
error means for a run (docs/architecture.md, "Packages and layers")."""
