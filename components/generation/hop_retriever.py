"""`HopRetriever`: a chain question's later hop retrieved again, with the bridge an earlier hop found filled in.

A chain question ("Where was the director of Pale Orchard born?") is answered link by link
(`question_chain.decompose`, `ExtractiveAnswerGenerator`): first "What is the director of Pale Orchard?", whose
short answer (the bridge, "Ilsa Varga") is put in its place, then "Where was Ilsa Varga born?". The sources were
searched once, for the whole question, before the bridge was known: the chunk that answers the later hop may never
have been retrieved. This stage sits between the ranker and the answer. When the question parses as a chain whose
first hop the ranked chunks answer and whose later link they do not (`ExtractiveAnswerGenerator.unanswered_hop`), it
asks the knowledge base (hybrid search) and the graph again with that later hop's question, and hands the answer the
ranked chunks followed by the new ones that name the bridge (in their text or title: the later hop is asked of it, and
the answer reads a later link only from a sentence naming it), each with its full attribution and `meta["hop"]` (the
question asked and the bridge). A question that is no chain, or whose links the ranked chunks already answer, costs no
search: the chunks pass on as they are. A failed search leaves the ranked chunks as they are and says so in its
`status`. The new chunks are numbered after the ranked ones, so the numbers [1]..[n] keep their chunks; a chat model's
prompt lists the ranked chunks only (its citations then name the same chunks).

Usage:
```python
hops = HopRetriever(kb_limit=5, graph_top_k=5)
hops.warm_up()
out = hops.run(query="Where was the director of Pale Orchard born?", documents=ranked, sources=["kb", "graph"])
out["ranked"], out["status"].message
```
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace
from typing import Any

from haystack import Document, component, logging

from components.contracts import SourceStatus, StatusKind
from components.contracts.chunk import RankedDocuments, documents_of, shown_metadata
from components.contracts.selection import source_selected
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.graph.graph_search import GraphSearch
from components.knowledge_base.search import KnowledgeBaseSearch
from components.ranking.research_ranker import RANKED_RANK
from components.redaction import cut
from components.resilience.guard import BreakerPolicy, GuardedComponent
from components.resilience.scheduling import alone_on_loop, async_twin
from components.settings import setting_or
from components.text.analyzer import terms
from components.validation import within

logger = logging.getLogger(__name__)

SOURCE = "hops"  # the name its status and its chunks' ranks carry
# The rank of a chunk this stage found, among what its own searches found for the hop.
HOP_RANK = "hop"


@component
class HopRetriever(GuardedComponent):
    """Retrieves again for a chain question's later hop, once an earlier hop found its bridge (see the module's doc).

    :param kb_limit: chunks the knowledge base's hybrid search returns for a hop (0-20; 0: the knowledge base is not
        asked again).
    :param graph_top_k: passages the graph's walk returns for a hop (0-20; 0: the graph is not asked again).
    :param max_rounds: how many hops may be retrieved for, one after another (1-2: a chain has up to three links).
    :param document_store, collection, timeout_s, breaker, embedding_model, spacy_model, document_field: the
        knowledge base and its settings, as for `KnowledgeBaseSearch` (None: the settings' as the stage is built).
    :param graph_store: the graph to walk, as for `GraphSearch` (None: the settings').
    :param confidence_model, confidence_threshold, scoring_model: the answer's own (`ExtractiveAnswerGenerator`), so
        that a link counts as answered exactly when the answer would read it as answered.
    """

    def __init__(
        self,
        kb_limit: int = 5,
        graph_top_k: int = 5,
        max_rounds: int = 2,
        document_store: Any = None,
        graph_store: Any = None,
        collection: str | None = None,
        timeout_s: float | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        embedding_model: str | None = None,
        spacy_model: str | None = None,
        document_field: str | None = None,
        confidence_model: str = "",
        confidence_threshold: float | None = None,
        scoring_model: str = "",
    ) -> None:
        self.kb_limit = within("kb_limit", kb_limit, 0, 20, whole=True)
        self.graph_top_k = within("graph_top_k", graph_top_k, 0, 20, whole=True)
        self.max_rounds = within("max_rounds", max_rounds, 1, 2, whole=True)
        self.collection = collection
        self.timeout_s = timeout_s
        self.breaker = breaker
        self.embedding_model = setting_or(embedding_model, "embedding_model")
        self.spacy_model = spacy_model
        self.document_field = document_field
        self.confidence_model = confidence_model
        self.confidence_threshold = confidence_threshold
        self.scoring_model = scoring_model
        self._reader = ExtractiveAnswerGenerator(
            embedding_model=self.embedding_model,
            confidence_model=confidence_model,
            confidence_threshold=confidence_threshold,
            scoring_model=scoring_model,
        )
        shared = {
            "collection": collection,
            "timeout_s": timeout_s,
            "breaker": breaker,
            "embedding_model": self.embedding_model,
            "spacy_model": spacy_model,
            "document_field": document_field,
        }
        self._kb = KnowledgeBaseSearch(
            document_store=document_store,
            mode="hybrid",
            limit=max(1, self.kb_limit),
            source_name=f"{SOURCE}_kb",
            **shared,
        )
        self._graph = GraphSearch(
            graph_store=graph_store, document_store=document_store, top_k=max(1, self.graph_top_k), **shared
        )
        # What was built, as the YAML dump writes it (the settings' values where None was given).
        self.document_store = self._kb.document_store
        self.graph_store = self._graph.graph_store
        self.timeout_s = self._kb.timeout_s
        self.spacy_model = self._kb.spacy_model
        self.document_field = self._graph.document_field
        self.breaker = self._kb.breaker

    def warm_up(self) -> None:
        """Load the answer's models (shared with the rest of the process). The knowledge base and the graph open at
        the first hop search, not here: most questions need none, and each open holds connections of its own beside
        those of the pipeline's sources."""
        self._reader.warm_up()

    def close(self) -> None:
        """Close the knowledge base and the graph's chunks this stage opened (the runtime closes its pipelines'
        components when it ends); the next search opens them again."""
        try:
            self._kb.close()
        finally:
            self._graph.close()

    @component.output_types(ranked=RankedDocuments, status=SourceStatus)
    def run(
        self,
        query: str,
        documents: list[Document] | RankedDocuments,
        filters: dict | None = None,
        as_of: str | dt.date | None = None,
        sources: list[str] | None = None,
    ) -> dict[str, Any]:
        """The ranked chunks, followed by those retrieved for the chain's unanswered later hop, if any.

        :param query: the question.
        :param documents: the ranked chunks ([1]..[n]).
        :param filters: the research filters, as the sources took them.
        :param as_of: only what was known by this date, as the sources took it.
        :param sources: the sources selected for the question: the knowledge base and the graph are asked again only
            when selected.
        :returns: `ranked`: the ranked chunks as they came (the same value when nothing was added), then the new ones
            ([n+1]..; read-only, as the ranker hands its chunks on), each with its
            `meta["hop"]` (`question`, `bridge`) and its `ranks` (`hop`: its place among the hop's finds; `ranked`:
            its number in the answer); `status`: what was asked and found, only when a search was needed (an error or
            a partial status when a search failed: the chunks found before stay as they are).
        """
        started = time.monotonic()
        ranked = documents_of(documents)
        found: list[Document] = []
        asked: list[str] = []
        problems: list[str] = []
        seen = {document.id for document in ranked}
        try:
            for _ in range(self.max_rounds):
                need = self._reader.unanswered_hop(query, [*ranked, *found])
                if need is None or need[0] in asked:
                    break
                question, bridge = need
                asked.append(question)
                named = frozenset(terms(bridge))
                new = [
                    document
                    for document in self._search(question, filters, as_of, sources, problems)
                    if document.id not in seen and named <= _terms_of(document)
                ]
                seen.update(document.id for document in new)
                found.extend(
                    _from_hop(document, position, question, bridge) for position, document in enumerate(new, 1)
                )
                if not new:
                    break
        except Exception as exc:  # noqa: BLE001 - the answer goes on from the chunks at hand
            logger.warning("The hop retrieval failed: {reason}", reason=cut(str(exc), 200))
            problems.append(cut(str(exc), 200))
        out = [*ranked, *(_numbered(document, len(ranked) + position) for position, document in enumerate(found, 1))]
        unchanged = not found and isinstance(documents, RankedDocuments)
        outputs: dict[str, Any] = {"ranked": documents if unchanged else RankedDocuments(tuple(out))}
        if asked or problems:
            # A question that needed no search adds no status: the statuses list the sources asked.
            outputs["status"] = self._status(asked, found, problems, started)
        return outputs

    run_async = async_twin(run, inline=alone_on_loop)  # in a worker thread unless the question has the loop to itself

    def _search(
        self,
        question: str,
        filters: dict | None,
        as_of: str | dt.date | None,
        sources: list[str] | None,
        problems: list[str],
    ) -> list[Document]:
        """What the knowledge base and the graph (each when selected and not switched off) find for the hop's
        question; their failures are added to `problems`."""
        results = []
        if self.kb_limit and source_selected(sources, KnowledgeBaseSearch.SOURCE):
            results.append(self._kb.run(query=question, limit=self.kb_limit, filters=filters, as_of=as_of))
        if self.graph_top_k and source_selected(sources, GraphSearch.SOURCE):
            results.append(self._graph.run(query=question, filters=filters, as_of=as_of, top_k=self.graph_top_k))
        chunks: list[Document] = []
        for result in results:
            status = result["status"]
            if status.status not in {StatusKind.SUCCESS, StatusKind.SKIPPED}:
                problems.append(f"{status.source}: {status.message or status.status.value}")
            chunks.extend(result.get("documents") or [])
        return chunks

    @staticmethod
    def _status(asked: list[str], found: list[Document], problems: list[str], started: float) -> SourceStatus:
        elapsed = round((time.monotonic() - started) * 1000.0, 3)
        said = "; ".join(f"asked {question!r}" for question in asked)
        if problems:
            kind = StatusKind.PARTIAL if found else StatusKind.ERROR
            message = f"{said}; " if said else ""
            message += f"the answer reads the ranked chunks{' and those found' if found else ''}: {'; '.join(problems)}"
        else:
            kind, message = StatusKind.SUCCESS, f"{said}: {len(found)} new chunks"
        return SourceStatus(
            source=SOURCE, status=kind, execution_time_ms=elapsed, total_found=len(found), message=cut(message, 500)
        )


def _terms_of(document: Document) -> frozenset[str]:
    """The terms of a chunk and of its title: a chunk about the bridge names it in one or the other."""
    return frozenset(terms(f"{(document.meta or {}).get('source_title') or ''} {document.content or ''}"))


def _from_hop(document: Document, position: int, question: str, bridge: str) -> Document:
    """A chunk found for a hop, its attribution kept, with the hop it was found for."""
    meta = shown_metadata(document.meta)  # what only the ranker reads is not carried on, as for the ranked chunks
    meta["hop"] = {"question": question, "bridge": bridge}
    meta["ranks"] = {**dict(meta.get("ranks") or {}), HOP_RANK: position}
    return replace(document, meta=meta)


def _numbered(document: Document, number: int) -> Document:
    """A found chunk with its number in the answer ([n])."""
    meta = dict(document.meta or {})
    meta["ranks"] = {**dict(meta.get("ranks") or {}), RANKED_RANK: number}
    return replace(document, meta=meta)
