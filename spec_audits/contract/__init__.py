"""The suite contract: what the compiler writes and the runner, the families and `spec verify` read.

    suite_model.py    a suite's rows and manifest (pydantic models; schema.json is SuiteRow's schema)
    results_model.py  a run's results.jsonl rows and run.json
    seeding.py        canonical JSON (behind every id, hash and seed) and per-item random streams
    writer.py         row ids, suite.jsonl, schema.json and manifest.json with their hashes
    reader.py         the one reader of suite, manifest, results and run files, with located errors

It imports nothing else of spec: every other package builds on it.
"""
