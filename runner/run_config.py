"""What defines a run (RunConfig, recorded in run.json less any key), what it reports back, and its error."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from spec_audits.base.secrets import scrub_text
from spec_audits.runner.plan import Shard
from spec_audits.runner.unread import Unread

DEFAULT_MODEL = "local/gemma-3-270m"


class RunError(ValueError):
    """A run that cannot start as asked (e.g. its output folder holds another run)."""


def redact_url(url: str) -> str:
    """`url` without user name, password, path parameters (`;token=...`), query or fragment, and scrubbed as
    text (a key of the environment in its path): what may be written down or shown."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return scrub_text(urlunsplit((parts.scheme, host, re.sub(r";[^/]*", "", parts.path), "", "")))


def check_api_base(api_base: str | None) -> None:
    """Refuse an --api-base carrying credentials, path parameters or a query: the OpenAI client cannot send
    them (a user name and password clash with its own Authorization header, and a query ends up inside the
    path), so they would only fail every call; keys go in the environment (e.g. OPENAI_API_KEY)."""
    if api_base is None:
        return
    parts = urlsplit(api_base)
    if parts.username is not None or parts.password is not None or ";" in parts.path or parts.query or \
            parts.fragment:
        raise RunError(
            f"--api-base {redact_url(api_base)}: the URL carries a user name, password, path parameters, query or "
            "fragment, which the model client cannot send; give the bare base URL, and the server's key in the "
            "environment (OPENAI_API_KEY for openai/ models)"
        )


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run; `settings()` is what run.json records (never any key)."""

    suite_dir: Path
    out: Path
    model: str = DEFAULT_MODEL
    api_base: str | None = None
    mode: str | None = None
    limit: int | None = None
    seed: int = 0
    shard: Shard | None = None
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 6
    retry_base_s: float = 1.0
    rpm: float | None = None
    tpm: float | None = None
    reasks: int = 0
    judge_model: str | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    cache_path: Path | None = None
    use_cache: bool = True
    retry_failed: bool = False
    replicate: int | None = None  # `--replicate N`: fresh answers, never read from the cache of another run
    only: tuple[tuple[str, str], ...] = ()  # `--only KEY=VALUE`: the rows whose cell has these values
    progress: bool = True
    batch: bool = False  # send the calls through the provider's batch API (runner/batch/)
    batch_size: int | None = None  # requests per batch file, at most the provider's limit
    poll_s: float = 60.0  # seconds between two looks at the open batches

    def settings(self) -> dict[str, Any]:
        recorded = asdict(self)
        for name in ("suite_dir", "out", "progress"):
            recorded.pop(name)
        recorded["shard"] = f"{self.shard.index}/{self.shard.count}" if self.shard else None
        recorded["cache_path"] = str(self.cache_path) if self.cache_path else None
        recorded["api_base"] = redact_url(self.api_base) if self.api_base else None
        return recorded


@dataclass
class RunSummary:
    run_dir: Path
    mode: str
    planned: int
    done: int
    failed: int
    resumed: int
    calls: int
    cache_hits: int
    notes: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)  # run.json's usage: tokens and estimated cost
    unread: Unread = field(default_factory=lambda: Unread(0))  # the successful replies that gave no answer
