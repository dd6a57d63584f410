"""The embedded model's forced choice and logits (spec_audits/local/choice.py and evaluator.py), on the real
model: the answer probabilities equal those llama.cpp's own sampler chain drew from on the grammar path, the
draws follow them, and the logits do not depend on what was evaluated before."""

from __future__ import annotations

import ctypes
import string
from collections import Counter
from typing import Any

import llama_cpp
import numpy as np
import pytest
from llama_cpp import LlamaGrammar
from llama_cpp._internals import LlamaTokenDataArray
from scipy.stats import chisquare

from spec_audits.local.choice import MIN_P, TOP_K, AnswerTokens, step_probabilities
from spec_audits.local.evaluator import Evaluator, chunk_ends
from spec_audits.local.model import LocalModel, default_gguf, register

# a first paragraph long enough to be a chunk of its own, so that prompts sharing it reuse its evaluation
PREAMBLE = (
    "You are taking part in a short survey about everyday choices. There are no right or wrong answers, "
    "and nobody will see your name next to what you say.\n\n"
)
COIN = PREAMBLE + "Flip a coin: answer heads or tails."
CASES = [  # prompt, answers, temperature, top_p
    (COIN, ["heads", "tails"], 1.0, 1.0),
    (COIN, ["heads", "tails"], 0.7, 0.9),
    (PREAMBLE + "How much do you like rain, from 1 to 11?", [str(i) for i in range(1, 12)], 1.3, 1.0),
    (PREAMBLE + "Is the sky green? Answer yes or no.", ["yes", "no"], 1.5, 0.5),
    ("Which do you prefer? A: tea B: coffee. Respond with only 'A' or 'B'.", ["A", "B"], 1.0, 1.0),
    ("Say option1 or option2.", ["option1", "option2"], 0.0, 1.0),
    (PREAMBLE + "Pick any letter.", list(string.ascii_letters), 1.0, 0.5),  # over 40 valid tokens: top_k cuts
]


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return register().model("gemma-3-270m")  # the session's loaded model


@pytest.fixture(scope="module")
def answer_tokens(model: LocalModel) -> AnswerTokens:
    return AnswerTokens(model.llm)


def _ids(model: LocalModel, text: str) -> list[int]:
    return model.prompt_ids([{"role": "user", "content": text}])


def _grammar_chain(model: LocalModel, answers: list[str], path: list[int], temperature: float, top_p: float) -> Any:
    """The sampler chain create_chat_completion built for the grammar path, advanced over `path`."""
    grammar = LlamaGrammar.from_string("root ::= " + " | ".join(f'"{a}"' for a in answers), verbose=False)
    chain = model.llm._init_sampler(top_k=TOP_K, top_p=top_p, min_p=MIN_P, temp=temperature, grammar=grammar)
    for token in path:
        llama_cpp.llama_sampler_accept(chain.sampler, token)
    return chain


def _drawn_from(chain: Any, logits: np.ndarray, greedy: bool) -> dict[int, float]:
    """token -> the probability llama.cpp's last sampler (dist, or greedy) drew it with from `logits`."""
    array = LlamaTokenDataArray(n_vocab=len(logits))
    array.copy_logits(logits)
    llama_cpp.llama_sampler_apply(chain.sampler, ctypes.byref(array.candidates))
    data, size = array.candidates.data, array.candidates.size
    if greedy:
        return {data[array.candidates.selected].id: 1.0}
    return {data[i].id: data[i].p for i in range(size) if data[i].p > 0}


def _walk(model: LocalModel, tokens: AnswerTokens, case: tuple[str, list[str], float, float]) -> dict[str, float]:
    """Compare every reachable step with the grammar chain; return each answer's probability."""
    prompt, answers, temperature, top_p = case
    ids, targets = _ids(model, prompt), tuple(a.encode() for a in answers)
    reached: Counter[str] = Counter()
    pending: list[tuple[bytes, list[int], float]] = [(b"", [], 1.0)]
    while pending:
        chosen, path, mass = pending.pop()
        candidates, texts = tokens.candidates(targets, chosen)
        if all(text == b"" for text in texts):  # choose() stops here without evaluating
            reached[chosen.decode()] += mass
            continue
        with model.lock:
            logits = model.evaluator.logits(ids, path)
        ours = dict(zip(candidates, step_probabilities(logits[candidates], temperature, top_p), strict=True))
        theirs = _drawn_from(_grammar_chain(model, answers, path, temperature, top_p), logits, temperature == 0)
        assert {t for t, p in ours.items() if p > 0} == set(theirs), (chosen, path)
        assert max(abs(ours[t] - p) for t, p in theirs.items()) < 1e-5
        for token, text in zip(candidates, texts, strict=True):
            if ours[token] > 0 and text == b"":
                reached[chosen.decode()] += mass * ours[token]
            elif ours[token] > 0:
                pending.append((chosen + text, [*path, token], mass * ours[token]))
    return dict(reached)


@pytest.mark.parametrize("case", CASES, ids=["coin", "coin-top-p", "scale", "yes-no", "tea-A-B", "greedy", "letters"])
def test_every_step_draws_with_the_grammar_paths_probabilities(
    model: LocalModel, answer_tokens: AnswerTokens, case: tuple[str, list[str], float, float]
) -> None:
    reached = _walk(model, answer_tokens, case)
    assert set(reached) <= set(case[1]) and abs(sum(reached.values()) - 1) < 1e-9


def test_the_letters_case_has_more_valid_first_tokens_than_top_k(answer_tokens: AnswerTokens) -> None:
    letters = tuple(letter.encode() for letter in CASES[-1][1])
    assert len(answer_tokens.candidates(letters, b"")[0]) > TOP_K


def test_multi_token_answers_are_reached_through_every_tokenization(
    model: LocalModel, answer_tokens: AnswerTokens
) -> None:
    """"heads" comes as `heads`, `head`+`s`, `h`+`eads`...: their probabilities add up, as on the grammar path;
    "10" and "11" go through "1", where an end token competes with "0" and "1"."""
    reached = _walk(model, answer_tokens, CASES[0])
    assert set(reached) == {"heads", "tails"} and 0.2 < reached["heads"] < 0.8
    scale = _walk(model, answer_tokens, CASES[2])
    assert {"10", "11"} <= set(scale) and scale["10"] + scale["11"] > 0.5


def test_seeded_draws_follow_the_answer_probabilities(model: LocalModel, answer_tokens: AnswerTokens) -> None:
    expected = _walk(model, answer_tokens, CASES[0])
    messages = [{"role": "user", "content": COIN}]
    params = {"answer_tokens": ["heads", "tails"], "temperature": 1.0, "max_tokens": 8}
    replies = [model.choose(messages, {**params, "seed": seed})["choices"][0]["message"]["content"]
               for seed in range(400)]
    counts = Counter(replies)
    assert set(counts) == {"heads", "tails"}
    fit = chisquare([counts["heads"], counts["tails"]], [400 * expected["heads"], 400 * expected["tails"]])
    assert fit.pvalue > 1e-3
    again = [model.choose(messages, {**params, "seed": seed})["choices"][0]["message"]["content"] for seed in range(20)]
    assert again == replies[:20]


def test_logits_are_the_same_whatever_was_evaluated_before(model: LocalModel) -> None:
    """Prompts that share a first chunk, and extensions of them, in two orders (each on a new evaluator, so
    that no logits are kept from the other) and each alone: bit for bit the same logits."""
    a, b = (model.llm.tokenize(letter, add_bos=False)[0] for letter in (b"A", b"B"))
    prompts = [tuple(_ids(model, PREAMBLE + q)) for q in ("Tea or coffee?", "Cats or dogs?", "Sea or mountains?")]
    # `longer` comes right after (prompts[0], (a,)), whose KV cache holds its beginning but cut where `longer`
    # is not: reusing that would change its logits by up to 1.6
    longer = (*prompts[0], a, *model.llm.tokenize(b" or B? Tea, please, with milk.", add_bos=False))
    sequences = [(prompts[0], ()), (prompts[0], (a,)), (longer, ()), (prompts[1], ()), (prompts[1], (a, b)),
                 (prompts[2], ())]
    shared = chunk_ends(prompts[0], model.evaluator.breaks)[0]
    assert shared > 20 and all(p[:shared] == prompts[0][:shared] for p in prompts)
    everything = sum(len(p) + len(extra) for p, extra in sequences)
    with model.lock:
        results = []
        for order in (sequences, sequences[::-1]):
            evaluator = Evaluator(model.llm)
            results.append({key: evaluator.logits(*key).copy() for key in order})
            assert evaluator.decoded <= everything - 4 * shared  # the preamble was reused
            evaluator.close()
        alone = {}
        for key in sequences:
            evaluator = Evaluator(model.llm)
            alone[key] = evaluator.logits(*key).copy()
            assert evaluator.decoded == len(key[0]) + len(key[1])
            evaluator.close()
        model.evaluator.forget()
    for key in sequences:
        assert np.array_equal(results[0][key], results[1][key]) and np.array_equal(results[0][key], alone[key])


def test_threads_change_no_logit(model: LocalModel) -> None:
    other = LocalModel(default_gguf(), 2 if model.threads == 1 else 1)
    try:
        with model.lock:
            assert np.array_equal(model.evaluator.logits(_ids(model, COIN)), other.evaluator.logits(_ids(other, COIN)))
    finally:
        other.close()


def test_logits_equal_llama_cpp_pythons_own_evaluation_cut_at_the_same_places(model: LocalModel) -> None:
    ids = _ids(model, COIN)
    ends = chunk_ends(ids, model.evaluator.breaks)
    assert len(ends) == 2
    with model.lock:
        ours = model.evaluator.logits(ids).copy()
        model.evaluator.forget()
        model.llm.reset()
        model.llm.n_batch, n_batch = ends[0], model.llm.n_batch
        try:
            model.llm.eval(ids)
        finally:
            model.llm.n_batch = n_batch
        theirs = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(model.llm.ctx, -1), shape=(len(ours),))
        assert np.array_equal(ours, theirs)


def test_a_rows_samples_share_one_evaluation(model: LocalModel) -> None:
    messages = [{"role": "user", "content": PREAMBLE + "Tea (A) or coffee (B)? Four samples."}]
    with model.lock:
        model.evaluator.forget()
    before = model.evaluator.decoded
    replies = [model.choose(messages, {"answer_tokens": ["A", "B"], "temperature": 1.0, "seed": seed})
               for seed in range(4)]
    scored = model.score(messages, ["A", "B"])
    assert model.evaluator.decoded - before == len(model.prompt_ids(messages))
    assert {reply["choices"][0]["message"]["content"] for reply in replies} <= {"A", "B"}
    assert replies[0]["usage"] == {"prompt_tokens": len(model.prompt_ids(messages)), "completion_tokens": 1,
                                   "total_tokens": len(model.prompt_ids(messages)) + 1}
    assert {entry["token"] for entry in scored["choices"][0]["logprobs"]["content"][0]["top_logprobs"]} == {"A", "B"}
