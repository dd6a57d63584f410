"""The embedded default model: a GGUF run in-process by llama-cpp-python, offline, as a litellm provider.

    names.py      how a model name selects it (`local/gemma-3-270m`, `local/<path.gguf>`)
    model.py      the litellm custom provider: load, score answer tokens, forced choice, generate
    choice.py     forced choice among the answer options, token by token
    evaluator.py  llama.cpp evaluation that reuses a shared prompt prefix
    native.py     what the native build needs to know about this CPU (standard library only: .ci/llama_build.py
                  imports it from the checkout before anything is installed)
    smoke.py      `python -m spec_audits.local.smoke`: load the model and score one prompt in a child process

The runner's model client (runner/call.py) registers it before a `local/` model's first call; nothing here
imports the runner's client, so the two do not import each other.
"""
