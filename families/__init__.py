"""Design families as plug-ins: one folder per audit design behind one interface (spec_audits/sdk/interface.py),
found by the registry (spec_audits/dispatch/registry.py) by its analysis name; this package holds the family
folders only. docs/architecture.md lists them and says how to add one.

Nothing is imported here: importing a family's module must not import the registry or the others.
"""
