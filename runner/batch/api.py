"""A run's calls to a provider's files and batches API, every one through litellm: upload, create (never
twice for one file), retrieve, download, cancel. Rate limits, server errors and dropped connections are
retried with backoff; anything else stops the run with the provider's reason (it resumes where it stopped)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from spec_audits.runner.batch.collect import plain
from spec_audits.runner.batch.providers import BATCH_URL, COMPLETION_WINDOW, BatchProvider, credentials
from spec_audits.runner.batch.verify import made_of
from spec_audits.runner.call import own_error, short_reason
from spec_audits.runner.services.provider_errors import FatalError

T = TypeVar("T")
LIST_PAGES = 20  # batches listed (100 a page) when looking for one a lost reply made
# Without this, litellm downloads and prices a finished batch's whole output file inside aretrieve_batch (for
# its logging callbacks): measured, 80% of batch mode's CPU, and a second download of every output file.
_NO_BATCH_LOGGING = {"batch_ignore_default_logging": True}
_GIVE_UP = frozenset({400, 401, 403, 404, 409, 413, 422})  # the same request would fail again


def _retry(err: Exception) -> bool:
    """Retry rate limits, server errors, timeouts and lost connections (no status), not a refused request."""
    import openai

    if isinstance(err, openai.OpenAIError) and not isinstance(err, openai.APIError):
        return False  # the openai client refused before sending (e.g. no key): nothing will change
    status = getattr(err, "status_code", None)
    return not isinstance(status, int) or status not in _GIVE_UP


def _unreadable(err: BaseException) -> str | None:
    """Where and why litellm could not read the provider's reply into its batch or file type (a field of the
    wrong type, e.g. text in request_counts), if that is what `err` (or the error it wraps) is."""
    from pydantic import ValidationError

    found = next((e for e in (err, err.__cause__, err.__context__) if isinstance(e, ValidationError)), None)
    if found is None:
        return None
    first = found.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return plain(f"{where}: {first['msg']}, got {str(first.get('input'))[:40]!r}")


@dataclass(frozen=True)
class BatchApi:
    """The batch calls for one model of a run."""

    model: str
    provider: BatchProvider
    api_base: str | None
    timeout_s: float = 600.0
    max_retries: int = 6
    retry_base_s: float = 1.0

    def _kwargs(self) -> dict[str, Any]:
        return {"custom_llm_provider": self.provider.name, "timeout": self.timeout_s, "max_retries": 0,
                **credentials(self.provider, self.api_base)}

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        import litellm

        litellm.suppress_debug_info = True
        for attempt in range(self.max_retries + 1):
            try:
                return await call()
            except Exception as err:  # noqa: BLE001 - a bug of ours is re-raised; the provider's are sorted below
                unread = _unreadable(err)
                if unread is not None:
                    raise FatalError(f"{self.model}: batch {what} failed: the provider's reply is not one litellm "
                                     f"can read ({unread}); spec does not use it") from None
                ours = own_error(err)
                if ours is err:
                    raise
                if ours is not None:
                    raise ours from None
                if not _retry(err) or attempt == self.max_retries:
                    raise FatalError(f"{self.model}: batch {what} failed: {short_reason(err)}") from None
                delay = min(60.0, self.retry_base_s * 2**attempt) * random.uniform(0.5, 1.5)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def upload(self, name: str, data: bytes) -> Any:
        import litellm

        return await self._retrying("upload", lambda: litellm.acreate_file(
            file=(f"{name}.jsonl", data), purpose="batch", **self._kwargs()))

    async def submit(self, file_id: str, metadata: dict[str, str], may_exist: bool) -> Any:
        """The batch of `file_id`: the one already made of it when a create may have reached the provider
        (a resumed run, or a create whose reply was lost), else a new one recording `metadata` (verify.py)."""
        import litellm

        async def once() -> Any:
            nonlocal may_exist
            found = await self.find(file_id, metadata) if may_exist else None
            may_exist = True  # from here on, a failed create may still have made the batch
            return found or await litellm.acreate_batch(
                completion_window=COMPLETION_WINDOW, endpoint=BATCH_URL, input_file_id=file_id,
                metadata=dict(metadata), **self._kwargs())  # a copy: litellm's logging adds to the one it gets

        return await self._retrying("create", once)

    async def find(self, file_id: str, metadata: dict[str, str]) -> Any | None:
        """The newest batch made of `file_id` that records `metadata`'s digest and model, if the provider
        lists one."""
        import litellm

        after: str | None = None
        for _ in range(LIST_PAGES):
            page = await litellm.alist_batches(after=after, limit=100, **self._kwargs())
            batches = list(page.data)
            found = next((batch for batch in batches
                          if batch.input_file_id == file_id and made_of(batch, metadata)), None)
            if found is not None or not batches or not page.has_more:
                return found
            after = batches[-1].id
        return None

    async def retrieve(self, batch_id: str) -> Any:
        import litellm

        return await self._retrying("status", lambda: litellm.aretrieve_batch(
            batch_id=batch_id, litellm_metadata=_NO_BATCH_LOGGING, **self._kwargs()))

    async def content(self, file_id: str) -> bytes:
        import litellm

        reply = await self._retrying("download", lambda: litellm.afile_content(file_id=file_id, **self._kwargs()))
        return bytes(reply.content)

    async def cancel(self, batch_id: str) -> Any:
        import litellm

        return await self._retrying("cancel", lambda: litellm.acancel_batch(batch_id=batch_id, **self._kwargs()))
