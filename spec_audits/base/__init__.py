"""The base layer, what every command shares: exit statuses, files in a stranger's folder opened safely, the one
scrubber of keys, and text from strangers made safe for a terminal (docs/architecture.md, "Packages and layers")."""
