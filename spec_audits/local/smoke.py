"""Load the embedded model and score one prompt: run as a child process (`python -m spec_audits.local.smoke`) by
.ci/setup and `spec doctor`, so that a build whose instructions this CPU traps on is reported, not suffered.

Prints one JSON line: llama.cpp's system info, the answer tokens' log-probabilities and the seconds taken.
"""

from __future__ import annotations

import json
import sys
import time

PROMPT = [{"role": "user", "content": "Which letter comes first in the alphabet? Answer A or B.\nA: a\nB: b"}]


def main() -> int:
    started = time.perf_counter()
    import llama_cpp

    from spec_audits.local.model import LocalModel, default_gguf, threads_for

    info = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    model = LocalModel(default_gguf(), threads_for({}))
    try:
        reply = model.score(PROMPT, ["A", "B"])
    finally:
        model.close()
    top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    logprobs = {entry["token"]: round(entry["logprob"], 4) for entry in top}
    seconds = round(time.perf_counter() - started, 2)
    print(json.dumps({"system_info": info, "threads": model.threads, "logprobs": logprobs, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
