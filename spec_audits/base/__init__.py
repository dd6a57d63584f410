"""The base layer, what every command shares: exit statuses, files in a stranger's folder opened safely, the one
scrubber of keys, text from strangers made safe for a terminal, the user's own cache folder, the garbage
collector paused, and records (classes of named fields, as dataclasses without their cost) (docs/architecture.md,
"Packages and layers")."""
