"""Text from strangers on a terminal: control characters made visible, so that a file name, row id or
model name from someone else's suite, bundle or table cannot move the cursor, clear the screen, fake a
line of our output (an embedded newline or carriage return) or reorder what is shown (bidi overrides).

Every line a command prints passes through `visible` (and `echo`); docs/threat-model.md lists the tests.
"""

from __future__ import annotations

import re

import click

from spec_audits.base.secrets import scrub_text

# C0 controls, DEL, C1 controls, and the Unicode format characters that reorder or hide text
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control and reordering character written as an escape (ESC as \\x1b, a newline
    as \\n), and no key (spec_audits/base/secrets.py); with `keep_newlines`, line breaks stay (for our own
    multi-line messages and prompts)."""
    text = scrub_text(text)
    if keep_newlines:
        return "\n".join(_CONTROL.sub(_shown, line) for line in text.split("\n"))
    return _CONTROL.sub(_shown, text)


def echo(text: str, *, err: bool = False, keep_newlines: bool = False) -> None:
    """click.echo of a line (or, with `keep_newlines`, lines) that may hold a stranger's text."""
    click.echo(visible(text, keep_newlines=keep_newlines), err=err)
