"""OpenAI's files and batches endpoints on the loopback stub (tests/stub_server.py).

An upload is kept in memory; a batch goes validating -> in_progress -> completed as it is polled (`polls`
looks at in_progress first; none while `hold` is set), or expires (`expire_after` requests answered, the
rest failed with batch_expired), or is cancelled (cancelling, then cancelled with half its requests
answered). Each request is answered exactly as the live endpoint answers it (StubServer.refusal and
.completion), so a batch run and a live run of one suite get the same answers; a refused one goes to the
error file with its status. `calls` counts every endpoint's requests (calls["create"]: batches made).

As OpenAI does, a batch keeps the `metadata` it was created with (at most 16 keys of 64 characters, string
values of 512; anything else is refused) and returns it when retrieved or listed; and the contents of a file
uploaded with purpose "batch" are never given back (400; OpenAI restricts downloads by purpose), so no test
passes that needs a batch's input file downloaded. Output and error files (purpose "batch_output") are.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from tests.stub_server import StubServer

ENDPOINT = "/v1/chat/completions"
NOT_DOWNLOADABLE = "Not allowed to download files of purpose: batch"


def _metadata_ok(metadata: Any) -> bool:
    if metadata is None:
        return True
    return isinstance(metadata, dict) and len(metadata) <= 16 and all(
        isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512 for k, v in metadata.items())


@dataclass
class BatchStubConfig:
    polls: int = 1
    expire_after: int | None = None  # a number: the batch expires with that many requests answered
    fail_status: dict[str, int] = field(default_factory=dict)  # endpoint name -> HTTP status it answers
    tamper: Callable[[list[bytes]], list[bytes]] | None = None  # rewrites a finished batch's output lines


def _batch(batch_id: str, file_id: str, metadata: Any, created: int) -> dict[str, Any]:
    return {"id": batch_id, "object": "batch", "endpoint": ENDPOINT, "input_file_id": file_id,
            "completion_window": "24h", "status": "validating", "created_at": created, "metadata": metadata,
            "output_file_id": None, "error_file_id": None, "errors": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0}}


def _error_line(index: int, key: str, error: dict[str, Any] | None, status: int | None, body: Any) -> bytes:
    response = None if status is None else {"status_code": status, "request_id": f"req_{index}", "body": body}
    line = {"id": f"batch_req_{index}", "custom_id": key, "response": response, "error": error}
    return json.dumps(line).encode() + b"\n"


class BatchEndpoints:
    def __init__(self, server: StubServer) -> None:
        self.server = server
        self.config = BatchStubConfig()
        self.hold = False
        self.files: dict[str, bytes] = {}
        self.purposes: dict[str, str] = {}  # file id -> the purpose it was uploaded or made with
        self.batches: dict[str, dict[str, Any]] = {}
        self.seen: Counter[str] = Counter()  # in_progress looks per batch
        self.calls: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self._cancel)

    def _refused(self, name: str) -> web.Response | None:
        self.calls[name] += 1
        status = self.config.fail_status.get(name)
        return web.json_response({"error": {"message": f"{name} refused by the stub"}}, status=status) \
            if status else None

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        refused = self._refused("upload")
        if refused:
            return refused
        upload = form["file"]
        data = upload.file.read()  # type: ignore[union-attr]
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id], self.purposes[file_id] = data, str(form["purpose"])
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                                  "filename": upload.filename, "purpose": form["purpose"], "status": "processed"})

    async def _content(self, request: web.Request) -> web.Response:
        refused = self._refused("content")
        data = self.files.get(request.match_info["file_id"])
        if refused or data is None:
            return refused or web.json_response({"error": {"message": "no such file"}}, status=404)
        if self.purposes.get(request.match_info["file_id"]) == "batch":
            self.calls["refused input download"] += 1
            return web.json_response({"error": {"message": NOT_DOWNLOADABLE, "type": "invalid_request_error"}},
                                     status=400)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        refused = self._refused("create")
        if refused:
            return refused
        body = await request.json()
        if body.get("input_file_id") not in self.files or body.get("endpoint") != ENDPOINT \
                or not _metadata_ok(body.get("metadata")):
            return web.json_response({"error": {"message": "bad batch request"}}, status=400)
        batch_id = f"batch_{len(self.batches) + 1}"
        self.batches[batch_id] = _batch(batch_id, body["input_file_id"], body.get("metadata"), len(self.batches))
        return web.json_response(self.batches[batch_id])

    async def _list(self, request: web.Request) -> web.Response:
        self.calls["list"] += 1
        newest = sorted(self.batches.values(), key=lambda b: -b["created_at"])
        after = request.query.get("after")
        if after in self.batches:
            newest = [b for b in newest if b["created_at"] < self.batches[after]["created_at"]]
        limit = int(request.query.get("limit", 20))
        return web.json_response({"object": "list", "data": newest[:limit], "has_more": len(newest) > limit})

    async def _retrieve(self, request: web.Request) -> web.Response:
        refused = self._refused("retrieve")
        batch = self.batches.get(request.match_info["batch_id"])
        if refused or batch is None:
            return refused or web.json_response({"error": {"message": "no such batch"}}, status=404)
        self._advance(batch)
        return web.json_response(batch)

    async def _cancel(self, request: web.Request) -> web.Response:
        refused = self._refused("cancel")
        batch = self.batches.get(request.match_info["batch_id"])
        if refused or batch is None:
            return refused or web.json_response({"error": {"message": "no such batch"}}, status=404)
        if batch["status"] in ("validating", "in_progress"):
            batch["status"] = "cancelling"
        return web.json_response(batch)

    def _advance(self, batch: dict[str, Any]) -> None:
        status, total = batch["status"], len(self._lines(batch))
        if status == "validating":
            batch["status"] = "in_progress"
            batch["request_counts"]["total"] = total
        elif status == "cancelling":
            self._finish(batch, "cancelled", total // 2, "batch_cancelled")
        elif status == "in_progress" and not self.hold:
            self.seen[batch["id"]] += 1
            if self.seen[batch["id"]] > self.config.polls:
                expire = self.config.expire_after
                if expire is None:
                    self._finish(batch, "completed", total, "")
                else:
                    self._finish(batch, "expired", expire, "batch_expired")

    def _lines(self, batch: dict[str, Any]) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.files[batch["input_file_id"]].splitlines() if line.strip()]

    def _finish(self, batch: dict[str, Any], status: str, answered: int, code: str) -> None:
        output, errors = [], []
        for index, line in enumerate(self._lines(batch)):
            key, body = line["custom_id"], line["body"]
            if index >= answered:
                error = {"code": code, "message": f"This request was not run: the batch is {status}."}
                errors.append(_error_line(index, key, error, None, None))
                continue
            self.bodies.append(body)
            refused = self.server.refusal(body)
            if refused is not None:
                errors.append(_error_line(index, key, None, refused[0], refused[1]))
            else:
                output.append(_error_line(index, key, None, 200, self.server.completion(body)))
        if self.config.tamper is not None:
            output = self.config.tamper(output)
        for name, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id], self.purposes[file_id] = b"".join(lines), "batch_output"
                batch[name] = file_id
        batch["status"] = status
        batch["request_counts"] = {"total": len(output) + len(errors), "completed": len(output),
                                   "failed": len(errors)}
