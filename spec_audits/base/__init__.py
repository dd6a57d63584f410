"""The base layer, what every command shares: exit statuses, files in a stranger's folder opened safely, the one
scrubber of keys, text from strangers made safe for a terminal, and the user's own cache folder
(docs/architecture.md, "Packages and layers")."""
