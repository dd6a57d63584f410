"""The providers batch mode sends batches to, their limits, and the request body one batch line carries."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from spec_audits.contract.seeding import canonical_json
from spec_audits.local.names import is_local
from spec_audits.runner.run_config import RunError

BATCH_URL = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"


@dataclass(frozen=True)
class BatchProvider:
    """A litellm provider whose files and batches API follows OpenAI's (upload, create, retrieve, content,
    cancel, list), with OpenAI's limits per input file."""

    name: str
    key_env: str
    base_env: str | None = None
    placeholder_key: bool = False  # servers that check no key still need one for the openai client
    max_requests: int = 50_000
    max_bytes: int = 200 * 1024**2


PROVIDERS = {
    "openai": BatchProvider("openai", "OPENAI_API_KEY"),
    "hosted_vllm": BatchProvider("hosted_vllm", "HOSTED_VLLM_API_KEY", "HOSTED_VLLM_API_BASE", placeholder_key=True),
    "litellm_proxy": BatchProvider("litellm_proxy", "LITELLM_PROXY_API_KEY", "LITELLM_PROXY_API_BASE"),
}
# Providers litellm has some batch calls for, and why spec's batch mode does not send to them.
_NOT_SUPPORTED = {
    "anthropic": "litellm 1.110.2 retrieves Anthropic message batches but cannot create one",
    "azure": "Azure batches need a deployment and API version per file, which spec does not handle yet",
    "vertex_ai": "Vertex AI batches read and write a Cloud Storage bucket",
    "bedrock": "Bedrock batches read and write an S3 bucket under an IAM role",
}


def supported_names() -> str:
    return ", ".join(f"{name}/" for name in PROVIDERS)


def batch_provider(model: str) -> BatchProvider:
    """The batch provider of `model`, or a RunError naming the supported ones."""
    if is_local(model):
        raise RunError(f"--batch: {model} runs in this process and has no batch API; batch mode sends "
                       f"{supported_names()} models")
    provider = _route(model)[1]
    if provider not in PROVIDERS:
        why = _NOT_SUPPORTED.get(provider, "litellm has no OpenAI-style batch API for it")
        raise RunError(f"--batch: {model} goes to litellm's {provider} provider ({why}); batch mode sends "
                       f"{supported_names()} models. Run it without --batch.")
    return PROVIDERS[provider]


def credentials(provider: BatchProvider, api_base: str | None) -> dict[str, str]:
    """api_base and api_key for litellm's files and batches calls, which read only OpenAI's variables by
    themselves: the provider's own variables, a placeholder key where a server checks none."""
    found: dict[str, str] = {}
    base = api_base or (os.environ.get(provider.base_env) if provider.base_env else None)
    if base:
        found["api_base"] = base
    key = os.environ.get(provider.key_env)
    if key:
        found["api_key"] = key
    elif provider.placeholder_key or (provider.name == "openai" and base):
        found["api_key"] = "no-key"
    return found


@lru_cache(maxsize=64)
def _route(model: str) -> tuple[str, str, Any]:
    """(model name as the provider knows it, litellm provider, litellm's chat config for it)."""
    import litellm
    from litellm.types.utils import LlmProviders
    from litellm.utils import ProviderConfigManager

    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
    except Exception as err:  # noqa: BLE001 - litellm raises a BadRequestError subclass or a ValueError
        raise RunError(f"--batch: litellm knows no provider for {model} ({type(err).__name__})") from None
    config = ProviderConfigManager.get_provider_chat_config(model=name, provider=LlmProviders(provider))
    return name, provider, config


@lru_cache(maxsize=4096)
def _optional_params(model: str, params: str) -> dict[str, Any]:
    """litellm's mapping of our decode settings for `model` (e.g. max_tokens -> max_completion_tokens),
    with unsupported ones dropped: what acompletion(drop_params=True) would send. Memoised by the settings."""
    from litellm.utils import get_optional_params

    name, provider, _ = _route(model)
    sent: dict[str, Any] = get_optional_params(model=name, custom_llm_provider=provider, drop_params=True,
                                               **json.loads(params))
    return sent


def request_body(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """The chat.completions body a live call of litellm would send for these messages and settings."""
    name, _, config = _route(model)
    optional = dict(_optional_params(model, canonical_json(params)))
    body = config.transform_request(model=name, messages=[dict(m) for m in messages], optional_params=optional,
                                    litellm_params={}, headers={})
    body.pop("stream", None)  # litellm pops it before the request, and the openai client merges extra_body
    extra = body.pop("extra_body", None) or {}
    return {**body, **extra}
