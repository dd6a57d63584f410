"""Next-token logits of the embedded model that depend on the tokens alone, evaluating only what the KV cache
does not already hold.

llama.cpp's numbers for a position depend on how the sequence was cut into decode calls (its matrix kernels
take rows in groups): on gemma-3-270m Q4_K_M, cutting one prompt elsewhere moved its logits by up to 1.6 and
its answers' log-probabilities by up to 0.11. So every sequence is cut at places its own tokens decide
(`chunk_ends`), and a cached prefix is reused only up to a cut that the new sequence shares: the logits are
then the same whatever was evaluated before. Cuts fall after paragraph breaks, where the prompts of one audit
part ways (the same system text and preamble, then different options); each token after the prompt (a
multi-token answer) is a cut of its own, so extending a prompt costs one token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

MIN_CHUNK = 24  # a paragraph break ends a chunk only after this many tokens: a decode call costs ~4 tokens more
MAX_CHUNK = 256  # within the context's batch size (llama-cpp-python's n_batch, 512)
_KEPT_LOGITS = 16  # the samples of one prompt arrive close together, a few prompts apart at most


def chunk_ends(prompt: Sequence[int], breaks: frozenset[int], extra: int = 0) -> list[int]:
    """Where the decode calls of `prompt` followed by `extra` more tokens end: after a paragraph break once a
    chunk holds MIN_CHUNK tokens, after MAX_CHUNK tokens, at the prompt's end, then after every extra token."""
    ends: list[int] = []
    start = 0
    for i, token in enumerate(prompt[:-1]):
        if (token in breaks and i + 1 - start >= MIN_CHUNK) or i + 1 - start >= MAX_CHUNK:
            ends.append(i + 1)
            start = i + 1
    n = len(prompt)
    return [*ends, *range(n, n + extra + 1)]


def reusable(held: Sequence[int], held_ends: Sequence[int], tokens: Sequence[int], ends: Sequence[int]) -> int:
    """How many leading positions of the KV cache serve `tokens`: up to the last cut both sequences made the
    same way over the same tokens, short of the whole sequence (its last chunk is decoded for the logits)."""
    same = 0
    for a, b in zip(held, tokens, strict=False):
        if a != b:
            break
        same += 1
    keep = 0
    for a, b in zip(held_ends, ends, strict=False):
        if a != b or a > same or a >= len(tokens):
            break
        keep = a
    return keep


def paragraph_breaks(llm: Any) -> frozenset[int]:
    """The tokens that are a run of two or more newlines and nothing else (one or two in a SentencePiece
    vocabulary; none in one that splits newlines, whose prompts are then cut every MAX_CHUNK tokens)."""
    runs = (llm.tokenize(b"\n" * count, add_bos=False, special=False) for count in range(2, 5))
    return frozenset(ids[0] for ids in runs if len(ids) == 1)


class Evaluator:
    """Sequence 0 of one llama.cpp context, and the logits of the last few sequences evaluated.

    Callers hold the model's lock. Anything else that decodes on the context (llama-cpp-python's own
    generation) must call `forget` first."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self.llm = llm
        self.breaks = paragraph_breaks(llm)
        self._batch = llama_cpp.llama_batch_init(MAX_CHUNK, 0, 1)
        self._held: list[int] = []
        self._held_ends: list[int] = []
        self._logits: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self.decoded = 0  # tokens decoded, for benchmarks and tests

    def logits(self, prompt: Sequence[int], extra: Sequence[int] = ()) -> np.ndarray:
        """float32 logits of the token after `prompt` + `extra` (read-only; a copy is kept)."""
        tokens = (*prompt, *extra)
        if tokens in self._logits:
            self._logits.move_to_end(tokens)
            return self._logits[tokens]
        if len(tokens) > self.llm.n_ctx():
            raise ValueError(f"{len(tokens)} tokens exceed the context window of {self.llm.n_ctx()}")
        ends = chunk_ends(prompt, self.breaks, len(extra))
        keep = reusable(self._held, self._held_ends, tokens, ends)
        memory = self._lib.llama_get_memory(self.llm.ctx)
        if not self._lib.llama_memory_seq_rm(memory, -1, keep, -1):
            self._lib.llama_memory_clear(memory, True)
            keep = 0
        self._held, self._held_ends = list(tokens[:keep]), [end for end in ends if end <= keep]
        start = keep
        for end in ends[len(self._held_ends):]:
            self._decode(tokens[start:end], start, last=end == len(tokens))
            self._held.extend(tokens[start:end])
            self._held_ends.append(end)
            start = end
        raw = self._lib.llama_get_logits_ith(self.llm.ctx, -1)
        values = np.ctypeslib.as_array(raw, shape=(self.llm.n_vocab(),)).copy()
        values.flags.writeable = False
        self._logits[tokens] = values
        if len(self._logits) > _KEPT_LOGITS:
            self._logits.popitem(last=False)
        return values

    def _decode(self, tokens: Sequence[int], start: int, last: bool) -> None:
        """One decode call; only the final position of the sequence gets logits (the 262k-token output
        layer costs as much as ~4 prompt tokens per position)."""
        batch = self._batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = False
        batch.logits[len(tokens) - 1] = last
        status = self._lib.llama_decode(self.llm.ctx, batch)
        if status != 0:
            self.forget()
            raise RuntimeError(f"llama_decode failed with status {status}")
        self.decoded += len(tokens)

    def forget(self) -> None:
        """The KV cache no longer holds what this evaluator left there."""
        self._held, self._held_ends = [], []

    def close(self) -> None:
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None
