"""`LoopDocumentJoiner`: Haystack's `DocumentJoiner`, run on the pipeline's event loop."""

# No `from __future__ import annotations`: Haystack must see the real Variadic type of `documents`.

from typing import Any

from haystack import Document, component, default_to_dict
from haystack.components.joiners import DocumentJoiner
from haystack.core.component.types import Variadic

from components.contracts import FusedDocuments
from components.resilience.scheduling import async_twin


@component
class LoopDocumentJoiner(DocumentJoiner):
    """Haystack's `DocumentJoiner` (same parameters, same fusion, same output), whose `run_async` runs `run` on the
    event loop, and which can fuse as if lists a pipeline leaves out were given empty (`absent_lists`).

    Haystack runs a component without `run_async` in a worker thread. Fusing a few dozen chunks from the research
    branches is well under a millisecond of CPU, while the hop to a thread and back waits for that thread to wake and
    for the event loop to wake again: on a busy two-core machine the hop took longer than the fusion, on the path of
    every question (the ranker waits for the joiner).

    `absent_lists`: how many lists the pipeline does not send that the fusion counts as empty. Reciprocal rank fusion
    (and `merge`) weigh each list `1 / number of lists`, empty ones included, so a pipeline built without the branches
    that answer nothing for a question (the sources not selected) gives every chunk the same score as the whole
    pipeline when its joiner counts them. Equal weights only (`weights: null`): a list's weight follows its position.

    `fused_view`: the output is `fused`, the same documents as one read-only `FusedDocuments`, instead of the
    `documents` list. Haystack deep-copies a list of documents chunk by chunk (with a check per chunk) for the
    component it feeds, but hands the view on as it is; the research ranker reads only the fused chunks' ids and
    scores. The documents are the joiner's own (Haystack copied them into it; the fusion makes new ones): nothing
    may change them.

    Usage (in a pipeline YAML, in place of `haystack.components.joiners.document_joiner.DocumentJoiner`):
    ```yaml
    joiner:
      type: components.ranking.joiner.LoopDocumentJoiner
      init_parameters: {join_mode: reciprocal_rank_fusion, weights: null, top_k: null, sort_by_score: true}
    ```
    """

    def __init__(self, *args: Any, absent_lists: int = 0, fused_view: bool = False, **kwargs: Any) -> None:
        DocumentJoiner.__init__(self, *args, **kwargs)
        if isinstance(absent_lists, bool) or not isinstance(absent_lists, int) or absent_lists < 0:
            raise ValueError(f"absent_lists must be a whole number of lists, 0 or more, not {absent_lists!r}.")
        if absent_lists and self.weights:
            raise ValueError("absent_lists needs equal weights (weights: null): a list's weight follows its position.")
        if not isinstance(fused_view, bool):
            raise ValueError(f"fused_view must be true or false, not {fused_view!r}.")
        self.absent_lists = absent_lists
        self.fused_view = fused_view
        if fused_view:
            component.set_output_types(self, fused=FusedDocuments)
        else:
            component.set_output_types(self, documents=list[Document])

    def run(self, documents: Variadic[list[Document]], top_k: int | None = None) -> dict[str, Any]:
        """`DocumentJoiner.run` over `documents` and `absent_lists` empty lists; its `documents` as `fused` (one
        `FusedDocuments`) when the joiner is built with `fused_view`."""
        lists = list(documents)
        joined = DocumentJoiner.run(self, [*lists, *([] for _ in range(self.absent_lists))], top_k=top_k)
        return {"fused": FusedDocuments(tuple(joined["documents"]))} if self.fused_view else joined

    run_async = async_twin(run)

    def to_dict(self) -> dict[str, Any]:
        data = DocumentJoiner.to_dict(self)
        return default_to_dict(
            self, **data["init_parameters"], absent_lists=self.absent_lists, fused_view=self.fused_view
        )
