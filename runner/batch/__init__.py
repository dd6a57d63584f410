"""Batch mode (`spec run --batch`): the run's calls sent through a provider's batch API, at its batch price.

A stage beside live execution, in rounds: each pass walks the pending items through the live runner's own
code with a client that answers from the response cache and collects every call it cannot answer
(client.py); those calls are written as batch files split by the provider's limits (requests.py), recorded in
the run folder (ledger.py) before they are uploaded and submitted through litellm (api.py), polled, and
their results put into the response cache under the keys a live call would use (collect.py). The next pass
then gets one call further in every item: a follow-up's, a judge's or a re-ask's inputs are built from the
previous round's answers. rounds.py runs the loop; status.py shows and cancels a run's batches.
"""
