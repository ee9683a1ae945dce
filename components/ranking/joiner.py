"""`LoopDocumentJoiner`: Haystack's `DocumentJoiner`, run on the pipeline's event loop."""

# No `from __future__ import annotations`: Haystack must see the real Variadic type of `documents`.

from haystack import component
from haystack.components.joiners import DocumentJoiner

from components.resilience.scheduling import async_twin


@component
class LoopDocumentJoiner(DocumentJoiner):
    """Haystack's `DocumentJoiner` (same parameters, same fusion, same output), whose `run_async` runs `run` on the
    event loop.

    Haystack runs a component without `run_async` in a worker thread. Fusing a few dozen chunks from the research
    branches is well under a millisecond of CPU, while the hop to a thread and back waits for that thread to wake and
    for the event loop to wake again: on a busy two-core machine the hop took longer than the fusion, on the path of
    every question (the ranker waits for the joiner).

    Usage (in a pipeline YAML, in place of `haystack.components.joiners.document_joiner.DocumentJoiner`):
    ```yaml
    joiner:
      type: components.ranking.joiner.LoopDocumentJoiner
      init_parameters: {join_mode: reciprocal_rank_fusion, weights: null, top_k: null, sort_by_score: true}
    ```
    """

    run_async = async_twin(DocumentJoiner.run)
