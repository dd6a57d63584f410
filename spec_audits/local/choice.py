"""Forced choice on the embedded model: the valid tokens' logits and llama.cpp's sampling steps on them, in
place of a grammar over the 262k-token vocabulary.

The grammar path (`root ::= "A" | "B"` through llama-cpp-python's create_chat_completion) let a token through
when its text continued some answer, and an end-of-generation token once the text was a whole answer; its
sampler chain then kept the 40 best tokens (top_k), the fewest holding `top_p` of the probability at
temperature 1 (top_p), those with at least 5% of the best one's probability (min_p), and drew at the row's
temperature (greedy at 0). The same steps run here on the valid tokens alone, which is all the grammar left
them, so every answer keeps its probability; tests/runner/test_local_choice.py checks them against
llama.cpp's own sampler chain.
"""

from __future__ import annotations

import ctypes
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

TOP_K = 40  # create_chat_completion's defaults, which the grammar path ran with
MIN_P = 0.05
_END = b""  # the text of an end-of-generation token


class AnswerTokens:
    """Which tokens may come next in a forced choice, from the text of every token (read once, ~0.3 s)."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        buffer = ctypes.create_string_buffer(256)

        def piece(token: int) -> bytes:  # special=True: as llama.cpp's grammar reads a token
            return ctypes.string_at(buffer, llama_cpp.llama_token_to_piece(vocab, token, buffer, 256, 0, True))

        self.pieces = [piece(token) for token in range(llm.n_vocab())]
        self.ends = [token for token in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, token)]
        self._sets: dict[tuple[bytes, ...], dict[bytes, list[int]]] = {}

    def _by_text(self, answers: tuple[bytes, ...]) -> dict[bytes, list[int]]:
        """Every non-empty part of an answer -> the tokens with exactly that text (one pass per answer set)."""
        if answers not in self._sets:
            parts = {a[i:j] for a in answers for i in range(len(a)) for j in range(i + 1, len(a) + 1)}
            found: dict[bytes, list[int]] = {}
            for token, text in enumerate(self.pieces):
                if text in parts:
                    found.setdefault(text, []).append(token)
            self._sets[answers] = found
        return self._sets[answers]

    def candidates(self, answers: tuple[bytes, ...], chosen: bytes) -> tuple[list[int], list[bytes]]:
        """The tokens that may follow `chosen` (ordered by id) and their texts; an end-of-generation token
        (text b"") where `chosen` is a whole answer."""
        by_text = self._by_text(answers)
        valid: dict[int, bytes] = dict.fromkeys(self.ends, _END) if chosen in answers else {}
        for answer in answers:
            if answer.startswith(chosen):
                rest = answer[len(chosen):]
                for k in range(1, len(rest) + 1):
                    valid.update(dict.fromkeys(by_text.get(rest[:k], ()), rest[:k]))
        ids = sorted(valid)
        return ids, [valid[token] for token in ids]


def step_probabilities(logits: np.ndarray, temperature: float, top_p: float) -> np.ndarray:
    """What the grammar path's sampler chain drew from, given the valid tokens' float32 logits (ordered by id).

    The cuts compare float32 values as llama.cpp does; the probabilities are float64."""
    if temperature == 0:
        greedy: np.ndarray = np.eye(len(logits))[int(np.argmax(logits))]  # llama.cpp's greedy: the first best
        return greedy
    kept = np.ones(len(logits), dtype=bool)
    if temperature > 0:  # below 0 llama-cpp-python samples the plain distribution
        if len(logits) > TOP_K:
            kept[:] = False
            kept[np.argsort(-logits, kind="stable")[:TOP_K]] = True
        if top_p < 1:
            kept &= _top_p(logits, kept, np.float32(top_p))
        kept &= logits >= logits[kept].max() + np.float32(math.log(MIN_P))
    scaled = logits.astype(np.float64) / (temperature if temperature > 0 else 1.0)
    weights = np.where(kept, np.exp(scaled - scaled[kept].max()), 0.0)
    probabilities: np.ndarray = weights / weights.sum()
    return probabilities


def _top_p(logits: np.ndarray, kept: np.ndarray, p: np.float32) -> np.ndarray:
    """The fewest best tokens whose probabilities at temperature 1 add up to at least p."""
    order = np.argsort(-np.where(kept, logits, -np.inf), kind="stable")[: int(kept.sum())]
    shifted = np.exp(logits[order] - logits[order[0]])
    mass = np.cumsum(shifted / shifted.sum(dtype=np.float32), dtype=np.float32)
    chosen = np.zeros(len(logits), dtype=bool)
    chosen[order[: int(np.argmax(mass >= p)) + 1 if (mass >= p).any() else len(order)]] = True
    return chosen


def draw(probabilities: np.ndarray, rng: random.Random) -> int:
    """Index drawn with `probabilities` from one uniform variate of `rng`."""
    target = rng.random()
    total = 0.0
    for index, p in enumerate(probabilities):
        total += p
        if target < total:
            return index
    return int(np.flatnonzero(probabilities)[-1])


def choose(
    next_logits: Callable[[Sequence[int]], np.ndarray],
    tokens: AnswerTokens,
    answers: Sequence[str],
    params: dict[str, Any],
) -> tuple[str, int]:
    """(the reply, how many tokens it took): one token at a time among those that continue an answer, until
    the reply is a whole answer that nothing valid continues, an end token is drawn, or max_tokens.

    `next_logits(picked)` gives the logits after the prompt and the tokens picked so far; `params` are the
    call's decode settings (temperature, top_p, seed, max_tokens)."""
    targets = tuple(answer.encode() for answer in answers)
    rng = random.Random(params.get("seed"))
    temperature = float(params.get("temperature", 1.0))
    top_p = float(params.get("top_p", 1.0))
    chosen = b""
    picked: list[int] = []
    while len(picked) < int(params.get("max_tokens") or 256):
        ids, texts = tokens.candidates(targets, chosen)
        if all(text == _END for text in texts):
            break  # a whole answer that nothing continues, or no valid token at all
        logits = np.asarray(next_logits(picked))[ids]
        index = draw(step_probabilities(logits, temperature, top_p), rng)
        if texts[index] == _END:
            break
        chosen += texts[index]
        picked.append(ids[index])
    return chosen.decode("utf-8", errors="replace"), len(picked)
