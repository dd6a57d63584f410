"""Design families as plug-ins: one folder per audit design behind one interface (interface.py), found by
the registry (registry.py) by its analysis name. docs/architecture.md lists them and says how to add one.

Nothing is imported here: importing a family's module must not import the registry or the others.
"""
