"""The exit status of every `spec` command (docs/running.md, "Exit status", lists them for users).

0 only when everything asked for was done; each way of falling short has its own code, so a script can
tell a refused input from a stopped run, a partial run or a score with nothing to score.
"""

from __future__ import annotations

OK = 0
ERROR = 1  # refused input, or a command that failed; the message names the file, line or row
USAGE = 2  # click's: an unknown option, a missing argument, options that do not go together
STOPPED = 3  # a model call that cannot succeed as configured: key, permission, model name, endpoint, a repeated error
PARTIAL = 4  # spec run finished, but some items failed (reasons in results.jsonl), or not one reply could be read
NO_DATA = 5  # spec score: the runs hold no scorable answer, so there is nothing to score
CALL_FAILED = 6  # a model call failed after its retries and the command could not go on (spec generate)

HELP = ("Exit status: 0 done; 1 refused input or failure; 2 usage; 3 stopped by the model provider (key, "
        "endpoint, model); 4 run finished with failed items or no readable reply; 5 nothing to score; 6 a model "
        "call failed after its retries.")
