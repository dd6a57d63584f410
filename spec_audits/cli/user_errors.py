"""The CLI's one error policy for what is not a bug: a message, exit status 1, never a traceback.

Stages raise their own click.ClickException subclasses (ContractError for suite and run files,
ScoreInputError for scoring input, SpecFailed for specs, CacheError for the response cache), each naming
the file and, where there is one, the line or row. What the operating system refuses (a full disk, the
file-size limit, a read-only or forbidden folder, a missing file) arrives as OSError from wherever the
file was opened; `user_error` turns it into the same kind of message, naming the file. A failure inside
concurrent work arrives wrapped in an exception group and is unwrapped first. Every message is made safe
for the terminal (spec_audits.base.terminal), as it may quote a stranger's file name or value: one line, its
newlines shown as `\\n`, unless the exception says its lines are its own (`own_lines`, the compiler's
diagnostics).
"""

from __future__ import annotations

import errno

import click

from spec_audits.base.terminal import visible

_FULL = "the disk is full: free some space, or write somewhere else"
_FORBIDDEN = "this process may not write there: choose another output folder, or change its permissions"
ADVICE = {
    errno.ENOSPC: _FULL,
    errno.EDQUOT: _FULL,
    errno.EFBIG: "the file would pass the size limit this process may write (ulimit -f): raise it, "
                 "or write somewhere else",
    errno.EROFS: "the file system is read-only: write somewhere else",
    errno.EACCES: _FORBIDDEN,
    errno.EPERM: _FORBIDDEN,
    errno.ENOENT: "check the path",
}


def os_problem(err: OSError) -> str:
    """`FILE: what the system said; what to do` for an OSError."""
    where = f"{err.filename}: " if err.filename is not None else ""
    what = err.strerror or str(err)
    advice = ADVICE.get(err.errno) if err.errno is not None else None
    return f"{where}{what}" + (f"; {advice}" if advice else "")


def user_error(err: BaseException) -> click.ClickException | None:
    """The message to show for `err`, or None when it is a bug (which keeps its traceback)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, click.ClickException):
        # click types `message` Final, yet rewriting it in place is the only way to keep the exception's class
        # (a UsageError's context and usage line)
        # one line, unless its lines are ours (the compiler's diagnostics, which show a spec's controls as escapes)
        err.message = visible(err.message, keep_newlines=getattr(err, "own_lines", False))  # type: ignore[misc]
        return err
    if isinstance(err, OSError):
        return click.ClickException(visible(os_problem(err)))
    return None
