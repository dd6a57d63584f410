"""Keys are never written or printed, of any length (issue 32, item 4): the one scrubber
(spec_audits/base/secrets.py) against the credential variables litellm reads, header forms, URL secrets, and a
loopback server that echoes the Authorization header or a short key back."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from spec_audits.base.secrets import is_credential, scrub, scrub_text
from spec_audits.cli import main
from tests.stub_server import StubServer, _completion

SHORT = "k3y"  # a key shorter than 8 characters
LONG = "sk-echo-0123456789abcdef"


@pytest.mark.parametrize(("name", "credential"), [
    ("OPENAI_API_KEY", True), ("ANTHROPIC_API_KEY", True), ("AWS_ACCESS_KEY_ID", True),
    ("AWS_SECRET_ACCESS_KEY", True), ("AWS_SESSION_TOKEN", True), ("AWS_BEARER_TOKEN_BEDROCK", True),
    ("AZURE_AD_TOKEN", True), ("AZURE_CLIENT_SECRET", True), ("WATSONX_APIKEY", True), ("HF_TOKEN", True),
    ("VERTEXAI_CREDENTIALS", True), ("DATABRICKS_TOKEN", True), ("LITELLM_MASTER_KEY", True),
    ("AZURE_API_BASE", False), ("AZURE_API_VERSION", False), ("AWS_REGION_NAME", False),
    ("CHATGPT_TOKEN_DIR", False), ("LITELLM_KEY_ROTATION_ENABLED", False), ("MONKEY_PATH", False),
    ("PATH", False), ("VALKEY_HOST", False)])
def test_the_credential_variables_litellm_reads_are_known_by_name(name: str, credential: bool) -> None:
    assert is_credential(name) is credential


def test_every_credential_value_of_any_length_is_scrubbed_from_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SHORT)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", LONG)
    monkeypatch.setenv("AZURE_API_VERSION", "2024-02-01")  # no credential: shown as it is
    assert scrub(f"Incorrect API key provided: {SHORT}. Also {LONG}x, version 2024-02-01, keyboard {SHORT}board") \
        == "Incorrect API key provided: ***. Also ***x, version 2024-02-01, keyboard k3yboard"
    # text that is no provider's error keeps a short value standing as a word (a placeholder `test` would
    # otherwise eat the word from every answer and path), and loses a long one anywhere
    assert scrub_text(f"{SHORT} and {LONG}") == f"{SHORT} and ***"


@pytest.mark.parametrize(("text", "clean"), [
    ('{"headers": {"Authorization": "Bearer abc"}}', '{"headers": {"Authorization": "Bearer ***"}}'),
    ("authorization: Basic dXNlcjpwYXNz", "authorization: Basic ***"),
    ("x-api-key=zz; retry", "x-api-key=***; retry"),
    ("'api-key': 'q'", "'api-key': '***'"),
    ("sent Bearer sk-1 to the server", "sent Bearer *** to the server"),
    ("the bearer of bad news needs no authorization", "the bearer of bad news needs no authorization"),
    ("see https://u:p@host/v1", "see https://***@host/v1"),
])
def test_header_forms_and_url_secrets_are_scrubbed_whatever_the_key(text: str, clean: str) -> None:
    assert scrub(text) == clean and scrub_text(text) == clean


def test_an_errors_url_loses_its_parameters_query_and_fragment_an_answers_keeps_them() -> None:
    url = "https://u:p@host/v1;token=s3cret/chat?key=s3cret#frag"
    assert scrub(f"POST {url} failed") == "POST https://***@host/v1;***?***#*** failed"
    assert scrub_text(f"See {url}") == "See https://***@host/v1;token=s3cret/chat?key=s3cret#frag"


class EchoServer(StubServer):
    """Answers every call with the Authorization header it got, or (status set) fails it quoting the key."""

    status = 200

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        header = request.headers.get("Authorization", "")
        if self.status != 200:
            key = header.removeprefix("Bearer ")
            return web.json_response({"error": {"message": f"Incorrect API key provided: {key}."}},
                                     status=self.status)
        return web.json_response(_completion(body, f"A. You sent me Authorization: {header}"))


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    server.start()
    yield server
    server.stop()


def _spec_run(suite: Path, out: Path, echo: EchoServer) -> str:
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(out), "--model", "openai/echo", "--api-base",
                                       f"http://127.0.0.1:{echo.port}/v1", "--no-progress", "--max-retries", "0"])
    assert isinstance(result.exception, SystemExit | None), result.output
    return result.output


def _written(*folders: Path) -> list[Path]:
    return [path for folder in folders for path in folder.rglob("*") if path.is_file()]


@pytest.mark.parametrize("key", [SHORT, LONG])
def test_a_server_echoing_the_authorization_header_never_gets_the_key_stored(
        make_suite: Callable[..., Path], tmp_path: Path, echo: EchoServer, monkeypatch: pytest.MonkeyPatch,
        response_cache: Path, key: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    output = _spec_run(make_suite(n=3, samples=1), tmp_path / "run", echo)
    results = (tmp_path / "run" / "results.jsonl").read_text()
    assert [json.loads(line)["response"] for line in results.splitlines()] == \
        ["A. You sent me Authorization: Bearer ***"] * 3
    written = _written(tmp_path / "run", response_cache.parent)
    assert any(path.suffix == ".sqlite" for path in written)
    for path in written:
        assert f"Bearer {key}".encode() not in path.read_bytes(), path
    assert key not in output


@pytest.mark.parametrize("status", [400, 401])
def test_a_short_key_echoed_in_an_error_is_neither_printed_nor_stored(
        make_suite: Callable[..., Path], tmp_path: Path, echo: EchoServer, monkeypatch: pytest.MonkeyPatch,
        status: int) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SHORT)
    echo.status = status
    output = _spec_run(make_suite(n=2, samples=1), tmp_path / "run", echo)
    assert "Incorrect API key provided: ***." in output + "".join(p.read_text() for p in _written(tmp_path / "run"))
    assert SHORT not in output
    for path in _written(tmp_path / "run"):
        assert SHORT not in path.read_text(), path
