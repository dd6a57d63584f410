"""Builders of hostile bundles for the verify tests: a sound bundle made once per session and copied,
archives written member by member (with a bundle's gzip header, so that the member checks are what
refuse them), and loopback servers that count requests or never answer."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.server
import io
import json
import shutil
import socket
import tarfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from spec_audits.runner.commands.publish.bundle import write_bundle
from spec_audits.runner.commands.publish.sums import HEADER, sums_text
from tests.runner.publish.project import make_project

TAR_GZ_LEVEL = 9


def sound_bundle(factory_root: Path) -> Path:
    """A bundle folder of the small project (made in `factory_root`); copy it before editing."""
    with contextlib.chdir(factory_root):
        write_bundle(make_project(factory_root), Path("tiny"))
    return factory_root / "tiny"


def reseal(folder: Path) -> None:
    """SHA256SUMS rewritten after an edit, as someone hiding the edit would."""
    (folder / "SHA256SUMS").write_text(sums_text(folder))


def edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def member(name: str, data: bytes = b"", **fields: Any) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


def sums_member(top: str, files: dict[str, bytes], sizes: dict[str, int] | None = None
                ) -> tuple[tarfile.TarInfo, bytes]:
    """tiny/SHA256SUMS for `files` (name below the top folder -> bytes), with `sizes` promised over theirs."""
    sizes = {name: len(data) for name, data in files.items()} | (sizes or {})
    text = HEADER + "".join(f"# size {sizes[name]}  {name}\n" for name in sorted(files))
    text += "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items()))
    return member(f"{top}/SHA256SUMS", text.encode())


def write_tar_gz(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], fmt: int = tarfile.PAX_FORMAT) -> None:
    """`members` as a .tar.gz compressed as a bundle is (header bytes and all); `data` may be shorter
    than a member's size, as in a hand-made header."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if len(data) >= info.size else io.BytesIO(data.ljust(info.size, b"\0")))
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=TAR_GZ_LEVEL,
                                               mtime=0) as out:
        out.write(buffer.getvalue())


def gnu_sparse_member(name: str, real_size: int) -> bytes:
    """A GNU sparse ('S') header claiming `real_size` bytes of which none are stored (as `tar -S` makes
    for a file of holes), which tarfile cannot write itself."""
    info = tarfile.TarInfo(name)
    info.type, info.size = tarfile.GNUTYPE_SPARSE, 0
    block = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    block[483:495] = f"{real_size:011o}\0".encode()  # realsize; no sparse map entries: all holes
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block[:512]):06o}\0 ".encode()
    return bytes(block)


def write_raw_tar_gz(path: Path, blocks: bytes) -> None:
    """Tar bytes made by hand, ended and compressed as a bundle is."""
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=TAR_GZ_LEVEL,
                                               mtime=0) as out:
        out.write(blocks + b"\0" * 1024)


@contextlib.contextmanager
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that answers every GET with a permissive JSON Schema and records its path."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            hits.append(self.path)
            body = b'{"type": "object"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def silent_server() -> Iterator[tuple[str, Callable[[], int]]]:
    """A loopback port that never answers: the kernel completes each connection into the backlog, where it
    waits for ever; the function counts the connections made so far."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    listener.setblocking(False)
    made: list[socket.socket] = []

    def connections() -> int:
        with contextlib.suppress(BlockingIOError):
            while True:
                made.append(listener.accept()[0])
        return len(made)

    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", connections
    finally:
        for connection in made:
            connection.close()
        listener.close()


def copy_bundle(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target
