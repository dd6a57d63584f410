"""The echo family, as tests use it: the worked example that ships with the package
(spec_audits/examples/echo.py), registered by its test (test_echo.py) or installed through an entry point."""

from spec_audits.examples.echo import FAMILY

__all__ = ["FAMILY"]
