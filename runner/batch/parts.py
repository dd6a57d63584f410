"""A run's batch parts: written, uploaded, submitted, polled and collected, each step recorded in the
ledger before the next one starts, so that a killed run resumes every part where it stopped and never
submits one twice."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from spec_audits.base.secrets import scrub
from spec_audits.base.terminal import echo
from spec_audits.runner.batch.api import BatchApi
from spec_audits.runner.batch.client import Outcomes
from spec_audits.runner.batch.collect import plain, read_outcomes
from spec_audits.runner.batch.ledger import (
    ID_CHARS,
    PROVIDER_ID,
    Part,
    forget_errors,
    keys_path,
    read_errors,
    read_keys,
    read_ledger,
    write_atomic,
    write_errors,
    write_ledger,
)
from spec_audits.runner.batch.providers import batch_provider
from spec_audits.runner.batch.requests import Line, split_lines
from spec_audits.runner.batch.verify import Needed, batch_metadata, made_of, mismatch_message, run_keys, run_lines
from spec_audits.runner.run_config import RunConfig, RunError
from spec_audits.runner.services.cache import ResponseCache
from spec_audits.runner.services.provider_errors import FatalError

_ID = re.compile(PROVIDER_ID)
_STATUS = re.compile(r"[a-z_]{1,40}")


def provider_id(value: Any, what: str, model: str) -> str | None:
    """An id the provider gave, checked before it names a URL or is recorded; None stays None."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > ID_CHARS or not _ID.match(value):
        raise FatalError(f"{model}: the provider's {what} {scrub(repr(value))[:80]} is not a plain id; "
                         "spec does not send it back")
    return value


def batch_api(config: RunConfig, model: str) -> BatchApi:
    """The batch calls of `model` in this run: --api-base is the run model's; a judge uses its provider's."""
    base = config.api_base if model == config.model else None
    return BatchApi(model, batch_provider(model), base, config.timeout_s, config.max_retries, config.retry_base_s)


def update(part: Part, batch: Any) -> bool:
    """Take the provider's view of the batch into `part`; True if its state or counts moved."""
    before = (part.status, part.counts)
    part.batch_id = provider_id(batch.id, "batch id", part.model)
    part.status = str(batch.status) if _STATUS.fullmatch(str(batch.status)) else "unknown"
    counts = batch.request_counts
    part.counts = {name: _count(counts, name, part) for name in ("total", "completed", "failed")} \
        if counts is not None else {}
    part.output_file_id = provider_id(batch.output_file_id, "output file id", part.model)
    part.error_file_id = provider_id(batch.error_file_id, "error file id", part.model)
    errors = getattr(batch.errors, "data", None) if batch.errors is not None else None
    part.reason = plain(str(errors[0].message)) if errors else None
    return (part.status, part.counts) != before


def _count(counts: Any, name: str, part: Part) -> int:
    """One of a batch's request counts: a whole number >= 0 (none given: 0), else a FatalError naming it."""
    value = getattr(counts, name, None) if not isinstance(counts, dict) else counts.get(name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FatalError(f"{part.model}: the provider's batch {part.batch_id} ({part.name}) gives request_counts."
                         f"{name} = {scrub(repr(value))[:80]}, not a count; spec does not use that batch's reply")
    return value


def describe(part: Part) -> str:
    counts = part.counts
    done = f"{counts['completed']:,} of {counts['total']:,} done, {counts['failed']:,} failed" \
        if counts.get("total") else f"{part.requests:,} requests"
    return f"{part.name} ({part.batch_id or 'not submitted'}, {part.model}): {part.status}, {done}"


class Parts:
    """The parts of one run folder (see the module's docstring)."""

    def __init__(self, config: RunConfig, outcomes: Outcomes, cache: ResponseCache) -> None:
        self.config, self.outcomes, self.cache = config, outcomes, cache
        self.ledger = read_ledger(config.out)
        if config.retry_failed:
            forget_errors(config.out)
        outcomes.errors = read_errors(config.out)
        self.open: dict[str, set[str]] = {}  # keys of the parts not collected yet, checked against the run
        self.found: dict[str, list[str]] = {}  # keys of the parts the ledger holds, not checked yet (verify.py)
        for part in self.ledger.parts:
            if not config.use_cache:  # their answers were in the run folder's cache, which is not trusted
                part.collected = False
            keys = read_keys(config.out, part)
            if part.collected:
                outcomes.answered.update(keys)
            else:
                self.found[part.name] = keys
        self.lines: dict[str, bytes] = {}  # the lines of the parts this run wrote, until uploaded
        self.submitted = 0

    def _save(self) -> None:
        write_ledger(self.config.out, self.ledger)

    def _say(self, message: str) -> None:
        if self.config.progress:
            echo(f"spec run: batch {message}", err=True)

    async def resume(self, needed: Needed) -> None:
        """Check each part a previous run left open against the requests this pass derived (verify.py), then
        send again the ones it uploaded but did not see submitted."""
        if not self.found:
            return
        for part in list(self.ledger.parts):
            keys = self.found.pop(part.name, None)
            if keys is None:
                continue
            lines = run_lines(part, keys, needed)
            if part.batch_id is None and lines is not None and part.input_file_id is not None:
                self.open[part.name] = set(keys)
                await self._send(part, lines, resumed=True)
            elif part.batch_id is None:
                self._drop(part)  # nothing of it was submitted: its requests the run needs are written again
            elif not run_keys(part, keys, needed):
                part.collected = True  # none of its answers is this run's: not asked, not cached
            else:
                await self._verify(part, lines)
                self.open[part.name] = set(keys)
        self._save()

    async def _verify(self, part: Part, lines: bytes | None) -> None:
        """A submitted part is the run's only if its batch records the digest of the run's own lines for all
        of its keys; any other was made: nothing rebuilds it, and it is refused."""
        # the ledger's batch id has a plain form (ledger.py); the provider is asked by it, never told of it
        batch = await batch_api(self.config, part.model).retrieve(part.batch_id)  # type: ignore[arg-type]
        if lines is None or not made_of(batch, batch_metadata(part, lines)):
            raise RunError(mismatch_message(part, self.config.out))
        update(part, batch)

    def _drop(self, part: Part) -> None:
        self.ledger.parts.remove(part)
        keys_path(self.config.out, part).unlink(missing_ok=True)

    async def submit(self, needed: dict[str, tuple[str, bytes]]) -> None:
        """Write, record and submit the needed requests that no open part holds, by model and limits."""
        held = set().union(*self.open.values())
        by_model: dict[str, list[Line]] = {}
        for key, (model, line) in needed.items():
            if key not in held:
                by_model.setdefault(model, []).append((key, line))
        round_ = self.ledger.next_round()
        written: list[Part] = []
        for model, lines in by_model.items():
            provider = batch_provider(model)
            limit = min(provider.max_requests, self.config.batch_size or provider.max_requests)
            for chunk in split_lines(lines, limit, provider.max_bytes):
                written.append(self._write(model, round_, len(written) + 1, chunk))
        for part in written:
            await self._send(part, self.lines.pop(part.name), resumed=False)

    def _write(self, model: str, round_: int, index: int, chunk: list[Line]) -> Part:
        part = Part(name=f"r{round_:03d}-p{index:04d}", model=model, round=round_, requests=len(chunk),
                    bytes=sum(len(line) for _, line in chunk))
        write_atomic(keys_path(self.config.out, part), "".join(f"{key}\n" for key, _ in chunk).encode())
        self.lines[part.name] = b"".join(line for _, line in chunk)
        self.ledger.parts.append(part)
        self._save()
        self.open[part.name] = {key for key, _ in chunk}
        return part

    async def _send(self, part: Part, lines: bytes, resumed: bool) -> None:
        """Upload `lines` and submit them as `part`'s batch; a resumed part first looks for the batch a create
        may have made of its earlier file just before a kill (verify.py), and is uploaded anew if none."""
        api = batch_api(self.config, part.model)
        metadata = batch_metadata(part, lines)
        found = await api.find(part.input_file_id, metadata) if resumed and part.input_file_id else None
        if found is None:
            uploaded = await api.upload(part.name, lines)  # the lines this run derived: never read back
            part.input_file_id = provider_id(uploaded.id, "file id", part.model)
            part.status, part.bytes = "uploaded", len(lines)
            self._save()
            # the provider gave a file id (provider_id keeps None only where it gave none)
            found = await api.submit(part.input_file_id, metadata, may_exist=False)  # type: ignore[arg-type]
        update(part, found)
        self._save()
        self.submitted += part.requests
        self._say(f"submitted {describe(part)}")

    async def wait(self) -> None:
        """Poll the open parts every `poll_s` seconds and collect each as it ends, until none is open."""
        while True:
            waiting = [part for part in self.ledger.parts if not part.collected]
            moved = await asyncio.gather(*(self._poll(part) for part in waiting if not part.final))
            if any(moved):
                self._save()
            for part in waiting:
                if part.final:
                    await self._collect(part)
            if all(part.collected for part in waiting):
                return
            await asyncio.sleep(self.config.poll_s)

    async def _poll(self, part: Part) -> bool:
        # a part is polled once submitted, when update() has recorded its batch id
        moved = update(part, await batch_api(self.config, part.model).retrieve(part.batch_id))  # type: ignore[arg-type]
        if moved:
            self._say(describe(part))
        return moved

    async def _collect(self, part: Part) -> None:
        """Answers into the response cache, failures into errors.json, every request one or the other."""
        api = batch_api(self.config, part.model)
        keys = self.open[part.name]
        values: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        for file_id in (part.error_file_id, part.output_file_id):  # an answer beats a failure
            if file_id is not None:
                found_values, found_errors = read_outcomes(await api.content(file_id), keys)
                errors.update(found_errors)
                values.update(found_values)
        missing = f"batch {part.status}{': ' + part.reason if part.reason else ''}: no result for this request"
        errors = {key: errors.get(key, missing) for key in keys if key not in values}
        self.cache.put_many(values.items())
        self.outcomes.errors.update(errors)
        write_errors(self.config.out, self.outcomes.errors)
        self.outcomes.answered.update(values)
        part.collected = True
        self._save()
        del self.open[part.name]
        self._say(f"collected {part.name}: {len(values):,} answered, {len(errors):,} failed")
