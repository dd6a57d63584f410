"""The base layer, what every command shares: exit statuses, files in a stranger's folder opened safely, the one
scrubber of keys, text from strangers made safe for a terminal, the user's own cache folder, and the garbage
collector paused (docs/architecture.md, "Packages and layers")."""
