"""The runner's other commands, family-blind (`spec run`, `spec merge`, `spec generate`, `spec doctor`, `spec
view`, and publishing in publish/): options, messages, exit statuses (docs/architecture.md, "Packages and layers")."""
