"""Runner benchmarks (prints figures).

(a) latency sweep against the loopback stub (1 s, 0.1 s, 0.01 s) at concurrency 64: the runner beside a
    bare aiohttp client sending the same requests, calls/s and their ratio (target >= 0.9 at 0.1 s);
    then the CPU of one call in this process for (i) the runner end to end (as the sweep runs it, writing
    a fresh response cache), (ii) litellm.acompletion alone, (iii) aiohttp alone and (iv) the runner with
    litellm.acompletion replaced by a canned reply (its own work), and the ceiling in calls/s per core
    each gives. litellm is called once before timing, as any run pays its first-call set-up once. The
    stub runs in its own process, on the same cores.
(b) forced-choice prompts/s on the local model through the runner vs the model's own call (target >= 0.85)
(c) re-running a finished 15,000-item suite, all cache hits (target < 2 s)
(d) calls needed in logprob vs sample mode for the same standard error of a choice rate

Usage: python benchmarks/runner_bench.py [a b c d] [--requests 4000] [--latency 1 0.1 0.01] [--prompts 150]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spec_audits.contract.reader import read_results, read_suite  # noqa: E402
from spec_audits.local.model import _gemma_messages, register  # noqa: E402
from spec_audits.runner.execute import run_suite  # noqa: E402
from spec_audits.runner.run_config import RunConfig  # noqa: E402
from tests.support import forced_choice_rows, write_suite  # noqa: E402

CONCURRENCY = 64
SWEEP_S = 20.0  # each sweep point sends at most what the bare client sends in this long


def start_stub(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """The stub in its own process, so that it does not share the benchmarked client's CPU time."""
    stub = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "stub_server.py"), "--latency", str(latency_s), "--lifetime", "900"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stub.stdout is not None
    return stub, stub.stdout.readline().strip()


async def _pool(bodies: list[dict], send: Callable[[dict], Awaitable[object]]) -> None:
    pending = iter(bodies)

    async def worker() -> None:
        for body in pending:
            await send(body)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def bare_client(api_base: str, bodies: list[dict]) -> None:
    """The same requests with aiohttp alone: JSON in, JSON out, no retries, no cache, no results file."""
    import aiohttp

    async def send(body: dict) -> None:
        async with session.post(f"{api_base}/chat/completions", json=body) as response:
            (await response.json())["choices"][0]["message"]["content"]

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
        await _pool(bodies, send)


async def bare_litellm(api_base: str, bodies: list[dict]) -> None:
    """The same requests through litellm.acompletion with the runner's arguments, and nothing else."""
    import litellm

    async def send(body: dict) -> None:
        response = await litellm.acompletion(model="openai/stub", api_base=api_base, api_key="no-key", timeout=120,
                                             max_retries=0, num_retries=0, drop_params=True, **body)
        assert response.choices[0].message.content

    await _pool(bodies, send)


def _timed(run: Callable[[], object], calls: int) -> tuple[float, float]:
    """(calls/s, ms of this process's CPU per call) of `run`."""
    cpu, started = time.process_time(), time.perf_counter()
    run()
    return calls / (time.perf_counter() - started), (time.process_time() - cpu) / calls * 1000


def _bodies(suite: Path) -> list[dict]:
    rows = read_suite(suite).rows
    return [{"messages": [m.model_dump(exclude_none=True) for m in r.messages], **r.decode} for r in rows]


def _runner(suite: Path, out: Path, api_base: str, calls: int) -> tuple[float, float]:
    """A run as users make it, writing a (fresh) response cache."""
    config = RunConfig(suite_dir=suite, out=out, model="openai/stub", api_base=api_base, concurrency=CONCURRENCY,
                       cache_path=out.with_suffix(".sqlite"), progress=False)
    return _timed(lambda: run_suite(config), calls)


def runner_alone(tmp: Path, calls: int) -> tuple[float, float]:
    """The runner with litellm.acompletion replaced by a canned reply after 1 ms: its own work per call."""
    from unittest import mock

    from litellm import ModelResponse

    async def canned(**_: object) -> ModelResponse:
        await asyncio.sleep(0.001)
        return ModelResponse(choices=[{"message": {"role": "assistant", "content": "A"}}],
                             usage={"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11})

    suite = write_suite(tmp / "a-suite-own", forced_choice_rows(calls, 1))
    with mock.patch("litellm.acompletion", canned):
        return _runner(suite, tmp / "a-run-own", "http://127.0.0.1:9/v1", calls)


def sweep_point(tmp: Path, requests: int, latency_s: float, with_litellm: bool) -> dict[str, tuple[float, float]]:
    """{client: (calls/s, CPU ms per call)} at one stub latency."""
    calls = min(requests, int(CONCURRENCY / latency_s * SWEEP_S))
    suite = write_suite(tmp / f"a-suite-{latency_s}", forced_choice_rows(calls, 1))
    bodies = _bodies(suite)
    stub, api_base = start_stub(latency_s)
    try:
        asyncio.run(bare_litellm(api_base, bodies[:1]))  # litellm's first-call set-up, outside the timing
        figures = {
            "aiohttp": _timed(lambda: asyncio.run(bare_client(api_base, bodies)), calls),
            "runner": _runner(suite, tmp / f"a-run-{latency_s}", api_base, calls),
        }
        if with_litellm:
            figures["litellm"] = _timed(lambda: asyncio.run(bare_litellm(api_base, bodies)), calls)
    finally:
        stub.kill()
    (bare, bare_ms), (runner, runner_ms) = figures["aiohttp"], figures["runner"]
    print(f"(a) stub latency {latency_s * 1000:>4.0f} ms, {calls} requests, concurrency {CONCURRENCY}: "
          f"bare aiohttp {bare:4.0f} calls/s ({bare_ms:.2f} ms CPU each), runner {runner:4.0f} calls/s "
          f"({runner_ms:.2f} ms CPU each), ratio {runner / bare:.2f}{' (target >= 0.9)' if latency_s == 0.1 else ''}",
          flush=True)
    return figures


LATENCIES = (1.0, 0.1, 0.01)
LABELS = {"runner": "(i) runner end to end", "litellm": "(ii) litellm.acompletion alone",
          "aiohttp": "(iii) aiohttp alone", "own": "(iv) the runner's own work, litellm replaced by a canned reply"}


def bench_a(tmp: Path, requests: int, latencies: list[float]) -> None:
    """(i)-(iii) CPU figures come from the lowest latency, where every client is busiest."""
    print(f"(a) machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    lowest = min(latencies)
    for latency_s in sorted(latencies, reverse=True):
        figures = sweep_point(tmp, requests, latency_s, latency_s == lowest)
    figures["own"] = runner_alone(tmp, requests)
    for name, label in LABELS.items():
        ms = figures[name][1]
        print(f"    CPU per call, {label}: {ms:.2f} ms "
              f"-> ceiling {1000 / ms:.0f} calls/s per core")
    runner_s = figures["runner"][1] / 1000
    predicted = ", ".join(f"{lat * 1000:.0f} ms: {lat / (lat + CONCURRENCY * runner_s):.2f}" for lat in latencies)
    print(f"    one event loop does that CPU one call at a time, {CONCURRENCY} x per round of calls in flight: "
          f"rate about {CONCURRENCY} / (L + {CONCURRENCY} x CPU), i.e. L / (L + {CONCURRENCY} x CPU) of the "
          f"ideal {CONCURRENCY} / L; predicted {predicted}")
    wanted = 0.9 * CONCURRENCY / 0.1
    print(f"    0.9x of {CONCURRENCY} calls in flight at 0.1 s is {wanted:.0f} calls/s: "
          f"{wanted * figures['runner'][1] / 1000:.1f} cores of the runner's CPU, of which litellm's "
          f"{wanted * figures['litellm'][1] / 1000:.1f}; this machine has {os.cpu_count()}, shared with the stub")


def raw_llama_rate(suite: Path) -> float:
    """The same forced-choice calls straight into the embedded model's own answer path
    (LocalModel.choose, spec_audits/local/choice.py) on the very Llama object the runner uses (a second
    instance's idle OpenMP threads would skew both), with the same settings: the runner's overhead alone."""
    model = register().model("gemma-3-270m")
    rows = read_suite(suite).rows
    params = {"answer_tokens": ["A", "B"], "forced_choice": True, "temperature": 1.0, "max_tokens": 2}
    started = time.perf_counter()
    for seed, row in enumerate(rows):
        model.choose(_gemma_messages([m.model_dump(exclude_none=True) for m in row.messages]), {**params, "seed": seed})
    return len(rows) / (time.perf_counter() - started)


def bench_b(tmp: Path, prompts: int, rounds: int = 3) -> None:
    """Alternating rounds (other processes may share the CPU); the best round of each counts."""
    suite = write_suite(tmp / "b-suite", forced_choice_rows(prompts, 1))
    register().model("gemma-3-270m")  # load before timing, as raw_llama_rate does
    raw, runner = [], []
    for i in range(rounds):
        raw.append(raw_llama_rate(suite))
        config = RunConfig(suite_dir=suite, out=tmp / f"b-run{i}", use_cache=False, progress=False, concurrency=4)
        started = time.perf_counter()
        summary = run_suite(config)
        runner.append(summary.done / (time.perf_counter() - started))
    print(
        f"(b) local gemma-3-270m, {prompts} forced-choice prompts, best of {rounds}: the model's own call "
        f"{max(raw):.1f}/s, runner {max(runner):.1f}/s, ratio {max(runner) / max(raw):.2f} (target >= 0.85)"
    )


def cache_floor(suite: Path, cache_path: Path, out: Path) -> float:
    """The least a rerun from the cache must do, in seconds: read the suite, look each answer up in the
    response cache, and append one result line per answer (the keys are listed before timing)."""
    import sqlite3
    from contextlib import closing

    from spec_audits.contract.results_model import ResultRow
    from spec_audits.runner.results_io import ResultsWriter
    from spec_audits.runner.services.cache import ResponseCache

    with closing(sqlite3.connect(cache_path)) as db:
        keys = [key for (key,) in db.execute("SELECT key FROM responses")]
    started = time.perf_counter()
    rows = read_suite(suite).rows
    cache, writer = ResponseCache(cache_path), ResultsWriter(out / "results.jsonl")
    for row, key in zip(rows, keys, strict=False):
        value = cache.get(key)
        writer.append(ResultRow(item_id=row.id, sample=0, model="floor", params=row.decode, response=value["text"]))
    writer.close()
    cache.close()
    return time.perf_counter() - started


def bench_c(tmp: Path, items: int) -> None:
    """A cold run against the stub fills the cache; then reruns into new folders (all hits) alternate with
    cache_floor, the best of each counts; last, a rerun of a finished folder (nothing left to do)."""
    triage = ROOT / "generated" / "triage"
    suite = (
        triage if (triage / "suite.jsonl").is_file() else write_suite(tmp / "c-suite", forced_choice_rows(items, 1))
    )
    stub, api_base = start_stub(0.0)
    cache = tmp / "c-cache.sqlite"
    # logprob mode: one answer per item, so the 15,000 items are 15,000 calls (sample mode would draw 4 each)
    base = {
        "mode": "logprob",
        "suite_dir": suite,
        "model": "openai/stub",
        "api_base": api_base,
        "concurrency": CONCURRENCY,
        "cache_path": cache,
        "progress": False,
    }
    try:
        started = time.perf_counter()
        first = run_suite(RunConfig(out=tmp / "c-run", **base))
        cold = time.perf_counter() - started
    finally:
        stub.kill()
    print(f"(c) machine: {machine()}")
    reruns, floors = [], []
    for attempt in range(2):  # alternating; the best of each counts
        started = time.perf_counter()
        again = run_suite(RunConfig(out=tmp / f"c-rerun{attempt}", **base))
        reruns.append(time.perf_counter() - started)
        (tmp / f"c-floor{attempt}").mkdir()
        floors.append(cache_floor(suite, cache, tmp / f"c-floor{attempt}"))
    started = time.perf_counter()
    run_suite(RunConfig(out=tmp / "c-rerun0", **base))
    resume = time.perf_counter() - started
    if again.calls:
        print(f"    note: the first run left {first.failed} failed items; the rerun called them again")
    print(
        f"(c) {first.planned} items ({suite.name}): first run {cold:.1f} s against the stub; "
        f"{again.cache_hits} cache hits, {again.calls} calls on rerun; rerun of the finished folder: {resume:.2f} s"
    )
    rerun, floor = min(reruns), min(floors)
    print(
        f"(c) rerun into a new folder, all cache hits: {rerun:.2f} s; floor (read the suite, "
        f"{first.planned:,} cache lookups and appended lines) {floor:.2f} s; ratio {rerun / floor:.2f}; target < 2 s"
    )
    print(f"(c) machine after: {machine()}")


def machine() -> str:
    return f"{os.cpu_count()} CPUs, load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


def _simulated_se(p: list[float], items: int, k: int, rng: random.Random, reps: int = 300) -> float:
    """SE of a sample-mode cell rate: draw `items` prompts from `p`, K answers each."""
    draws = []
    for _ in range(reps):
        chosen = [rng.choice(p) for _ in range(items)]
        draws.append(sum(sum(rng.random() < x for _ in range(k)) / k for x in chosen) / items)
    mean = sum(draws) / reps
    return math.sqrt(sum((d - mean) ** 2 for d in draws) / (reps - 1))


def bench_d(tmp: Path, prompts: int) -> None:
    """A cell's choice rate averages p_i over its prompts. logprob mode reads p_i exactly (1 call per prompt),
    so SE^2 = Var(p)/m; K samples per prompt add p(1-p)/K: SE^2 = (Var(p) + E[p(1-p)]/K)/m. For the same SE,
    sample mode needs (1 + E[p(1-p)]/(K Var(p))) times the prompts, i.e. K times that in calls."""
    suite = write_suite(tmp / "d-suite", forced_choice_rows(prompts, 1), mode="logprob")
    run_suite(RunConfig(suite_dir=suite, out=tmp / "d-run", use_cache=False, progress=False))
    p = [r.logprobs["A"] for r in read_results(tmp / "d-run" / "results.jsonl") if r.logprobs]
    mean = sum(p) / len(p)
    var = sum((x - mean) ** 2 for x in p) / (len(p) - 1)
    pq = sum(x * (1 - x) for x in p) / len(p)
    rng = random.Random(0)
    m = 50
    target = math.sqrt(var / m)
    print(
        f"(d) local model, {len(p)} prompts: mean P(A) {mean:.3f}, Var(p) {var:.5f}, E[p(1-p)] {pq:.4f}; "
        f"logprob mode: {m} calls give SE {target:.4f}"
    )
    for k in (1, 8):
        items = math.ceil(m * (1 + pq / (k * var)))
        simulated = _simulated_se(p, items, k, rng)
        print(
            f"    sample mode, K={k}: {items} prompts x {k} = {items * k} calls for the same SE "
            f"(simulated {simulated:.4f}) = {items * k / m:.1f}x the calls"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", default=["a", "b", "c", "d"])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--latency", type=float, nargs="+", default=list(LATENCIES))
    parser.add_argument("--prompts", type=int, default=150)
    parser.add_argument("--items", type=int, default=15000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        os.environ["SPEC_RESPONSE_CACHE"] = str(tmp / "cache.sqlite")
        for part in args.parts:
            {
                "a": lambda: bench_a(tmp, args.requests, args.latency),
                "b": lambda: bench_b(tmp, args.prompts),
                "c": lambda: bench_c(tmp, args.items),
                "d": lambda: bench_d(tmp, args.prompts),
            }[part]()


if __name__ == "__main__":
    main()
