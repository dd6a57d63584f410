"""spec runner: compiled suite -> plan -> cached model calls -> results -> scores -> reports."""
