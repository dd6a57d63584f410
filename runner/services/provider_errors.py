"""What a provider's error means for a run (stop it, fail the item, or retry) and what to tell the user,
and the two exceptions a model call ends with when retrying will not help (FatalError, CallFailed).

Errors are told apart by litellm's exception types, then by what they wrap: litellm 1.110 raises a
missing OpenAI key as an InternalServerError (the openai client's "Missing credentials" inside it) and an
unreachable endpoint as an InternalServerError too (a refused connection or a failed DNS lookup inside).
"""

from __future__ import annotations

import errno
import os
import re
import socket
from collections.abc import Iterator

import click

from spec_audits.base import exits

FATAL = "fatal"  # retrying cannot help: stop the run at once
UNREACHABLE = "unreachable"  # nothing answers at the endpoint: retried briefly, then the run stops
PERMANENT = "permanent"  # this request cannot succeed: fail its item
TRANSIENT = "transient"  # retry with backoff


class FatalError(click.ClickException):
    """The run cannot go on (bad key, unknown model, no server): stop at once with this message (exit 3)."""

    exit_code = exits.STOPPED


class CallFailed(click.ClickException):
    """This call failed for good (permanent error, or retries exhausted); a run records the reason on its
    item, a command that cannot go on without the call exits 6 with it."""

    exit_code = exits.CALL_FAILED

_MISSING_KEY = re.compile(r"Missing credentials|Missing [\w ]*API Key|api_key client option must be set|No API key "
                          r"provided", re.I)
_PREFIX = re.compile(r"^(?:litellm\.)?\w+(?:Error|Exception|Timeout):\s*")
_NO_ROUTE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED}


def causes(err: BaseException) -> Iterator[BaseException]:
    """`err` and every exception it was raised from or during, each once."""
    seen: set[int] = set()
    todo = [err]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]


def missing_key(err: BaseException) -> bool:
    return any(_MISSING_KEY.search(str(e)) for e in causes(err))


def _no_answer(err: BaseException) -> OSError | None:
    """The socket error saying that nothing at the endpoint can answer: refused, unknown host, no route."""
    return next((e for e in causes(err) if isinstance(e, socket.gaierror)
                 or isinstance(e, OSError) and e.errno in _NO_ROUTE), None)


def unreachable(err: BaseException) -> bool:
    return _no_answer(err) is not None


def classify(err: Exception) -> str:
    """FATAL, UNREACHABLE, PERMANENT or TRANSIENT for a provider error."""
    import litellm

    if isinstance(err, litellm.AuthenticationError | litellm.PermissionDeniedError | litellm.NotFoundError):
        return FATAL
    if "credentials encoded in URL" in str(err):  # a base URL with user:password@ (e.g. $OPENAI_BASE_URL)
        return FATAL
    # litellm raises a plain BadRequestError, not its LiteLLMUnknownProvider, for a model without a provider
    if isinstance(err, litellm.BadRequestError) and "LLM Provider NOT provided" in str(err):
        return FATAL
    if missing_key(err):
        return FATAL
    if unreachable(err):
        return UNREACHABLE
    permanent = (
        litellm.ContextWindowExceededError,
        litellm.ContentPolicyViolationError,
        litellm.BadRequestError,
        litellm.UnprocessableEntityError,
    )
    return PERMANENT if isinstance(err, permanent) else TRANSIENT


def reason(err: BaseException) -> str:
    """The first line of the error's message, less litellm's repeated class-name prefixes; for an endpoint
    that cannot answer, what the socket said."""
    cause = _no_answer(err)
    if cause is not None:
        what = "unknown host" if isinstance(cause, socket.gaierror) else os.strerror(cause.errno or 0).lower()
        return f"{what} ({cause.strerror or cause})"
    lines = str(err).strip().splitlines()
    text = lines[0] if lines else ""
    while (stripped := _PREFIX.sub("", text, count=1)) != text:
        text = stripped
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _key_names(model: str) -> str:
    """The environment variables litellm reads this model's key from ("OPENAI_API_KEY"), or a fallback."""
    import litellm

    try:
        names = litellm.validate_environment(model).get("missing_keys") or []
    except Exception:  # noqa: BLE001 - only a hint: an unknown provider has none to give
        names = []
    return " or ".join(names) or "the provider's API key variable"


def advice(err: BaseException, kind: str, model: str, api_base: str | None) -> str:
    """What went wrong, for which model, and what to do, for an error that stops the run."""
    import litellm

    where = api_base or "the provider"
    if kind == UNREACHABLE:
        return (f"{model}: cannot reach {where}: {reason(err)}. Start the server, or check --api-base and the "
                "network")
    if missing_key(err):
        keys = _key_names(model)
        return f"{model}: no API key ({reason(err)}). Set {keys} in the environment (keys are never read from a flag)"
    if isinstance(err, litellm.AuthenticationError):
        return f"{model}: the provider refused the key ({reason(err)}). Check {_key_names(model)} in the environment"
    if isinstance(err, litellm.PermissionDeniedError):
        return f"{model}: permission denied ({reason(err)}). Use a key with access to this model, or another model"
    if isinstance(err, litellm.NotFoundError):
        return (f"{model}: not found at {where} ({reason(err)}). Check the model name (provider/model, as litellm "
                "spells it) and --api-base")
    if "credentials encoded in URL" in str(err):
        return (f"{model}: the base URL carries a user name or password (credentials encoded in URL are refused). "
                "Remove them from --api-base or OPENAI_BASE_URL, and give the key in the environment")
    return f"{model}: litellm knows no provider for this name. Write it as provider/model, e.g. openai/gpt-4o-mini"
