"""Publishing a compiled suite: frozen bundles (`spec bundle`, `spec verify`), exports and diffs.

Family-blind: a bundle holds a suite's files, the spec and every file it reads with their licences, a
dataset card and Croissant metadata; nothing here knows which design family wrote the rows.
"""
