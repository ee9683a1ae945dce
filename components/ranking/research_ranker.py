"""`ResearchRanker`: one calibrated order for chunks fused from every source."""

# No `from __future__ import annotations`: Haystack must see the real Variadic type of `branch_documents`.

import datetime as dt
import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
from haystack import Document, component, logging
from haystack.core.component.types import Variadic

from components.contracts import BranchDocuments, FusedDocuments, RankedDocuments, documents_of
from components.embedding.model import EmbeddingModel, get_embedding_model, query_vector
from components.knowledge_base.attribution import KnowledgeBaseAccess, check_document_store
from components.knowledge_base.factory import document_field_of
from components.knowledge_base.rank_fusion import reciprocal_rank_fusion
from components.knowledge_base.store import TermStatistics
from components.ranking.evidence_scorer import (
    DEFAULT_WEIGHTS,
    EvidenceCandidate,
    EvidenceFeatures,
    EvidenceScorer,
    remember_stored_analysis,
)
from components.resilience.scheduling import alone_on_loop, async_twin
from components.serialization import InitParameterSerialization
from components.settings import setting_or
from components.text.analyzer import SENTENCE_TERMS_KEY, terms
from components.text.dates import parse_date
from components.text.language import stored_sentence_spans, use_language_pipeline
from components.validation import positive, within

logger = logging.getLogger(__name__)

# Per-branch rank keys are written by the sources; these two are ours.
FUSED_RANK = "fused"
RANKED_RANK = "ranked"
# The graph branch's rank key (its source name).
GRAPH_RANK = "graph"


@component
class ResearchRanker(InitParameterSerialization):
    """Fuses the chunks every source found and orders them by how strongly they answer the question: general
    retrieval evidence on absolute scales.

    In the research pipeline, Haystack's `DocumentJoiner` fuses the sources' lists (reciprocal rank fusion) and
    hands them in as `documents`; `branch_documents` (each source's `branch` output, the chunks the joiner has
    already copied, shared rather than copied again) gives every branch's own rank of a chunk. Without `documents`
    the ranker fuses `branch_documents` itself with the same formula (`rank_fusion`).

    Every chunk gets the same semantic relevance scale: the cosine the source computed from stored embeddings
    (`meta["semantic_relevance"]`), or, when a source left it out, the local model's cosine of the chunk text.
    The order is the `EvidenceScorer`'s weighted sum of five signals: BM25 of the question's terms (collection IDF
    from the knowledge base's term statistics), that cosine, the best in-context sentence cosine (stored sentence
    vectors), the IDF-weighted share of question terms held, and the best sentence's term share plus cosine;
    plus optional weights for the reciprocal-rank-fusion score and recency (`source_date`). The knowledge base
    is asked once per question, for all its candidates, for sentence similarities and term statistics; chunks
    from other sources (web, arXiv, graph, memory) get the signals that need no stored data, so they compete on
    the same scale. The signals are kept in `meta["evidence"]` (with the best sentence's `best_span` in the
    chunk text), the chunk's rank in every branch, after fusion (`fused`) and after ranking (`ranked`) in
    `meta["ranks"]`.

    Usage:
    ```python
    ranker = ResearchRanker(top_k=5)
    ranker.warm_up()
    ranked = ranker.run(query="Who won?", branch_documents=[dense, keyword])["documents"]
    ```
    """

    def __init__(
        self,
        top_k: int = 8,
        bm25_weight: float = DEFAULT_WEIGHTS["bm25"],
        dense_weight: float = DEFAULT_WEIGHTS["dense"],
        sentence_weight: float = DEFAULT_WEIGHTS["sentence"],
        coverage_weight: float = DEFAULT_WEIGHTS["coverage"],
        best_sentence_weight: float = DEFAULT_WEIGHTS["best_sentence"],
        fusion_weight: float = 0.0,
        recency_weight: float = 0.0,
        recency_half_life_days: float = 365.0,
        graph_weight: float = 0.0,
        use_store_evidence: bool = True,
        model: str | None = None,
        max_candidates: int = 30,
        document_store: Any = None,
        spacy_model: str | None = None,
        document_field: str | None = None,
    ) -> None:
        """
        :param top_k: how many chunks to keep (1-50).
        :param bm25_weight: weight of BM25 as a share of the question's best possible score (0-1).
        :param dense_weight: weight of the chunk's cosine to the question.
        :param sentence_weight: weight of the best in-context sentence cosine.
        :param coverage_weight: weight of the IDF-weighted share of question terms in the chunk.
        :param best_sentence_weight: weight of the best sentence's term share plus its cosine.
        :param fusion_weight: weight of the reciprocal-rank-fusion score, relative to the best candidate's.
        :param recency_weight: weight of recency (1 for today, halving every `recency_half_life_days`).
        :param recency_half_life_days: how fast recency decays.
        :param graph_weight: weight of the graph walk's rank (1/sqrt(rank) in the `graph` branch): the passages a
            walk from the question's entities reaches, second hops included, which the question's words alone do
            not point to. Chunks the graph branch did not return get nothing.
        :param use_store_evidence: ask the knowledge base for sentence similarities and term statistics of the
            candidates it holds.
        :param model: the embedding model for chunks without a semantic relevance and questions without an
            embedding, and of the knowledge base the evidence is asked from; None: EMBEDDING_MODEL as it is built.
        :param max_candidates: how many of the best fused candidates get the evidence scoring (10-200); the rest
            rank below them. Evidence costs text analysis per candidate, and the fused tail rarely holds an answer.
        :param document_store: the integration's store of the knowledge base the evidence is asked from (the one the
            knowledge-base searches read); None for the store `KB_BACKEND` chooses for `KB_COLLECTION`. Opened in
            `warm_up()`.
        :param spacy_model: the spaCy pipeline whose sentences and lemmas the evidence is read with; None:
            SPACY_MODEL as it is built.
        """
        self.top_k = within("top_k", int(top_k), 1, 50)
        self.max_candidates = within("max_candidates", int(max_candidates), 10, 200)
        evidence = {
            "bm25": bm25_weight,
            "dense": dense_weight,
            "sentence": sentence_weight,
            "coverage": coverage_weight,
            "best_sentence": best_sentence_weight,
        }
        weights = (*evidence.values(), fusion_weight, recency_weight, graph_weight)
        if any(weight < 0 for weight in weights) or sum(weights) <= 0:
            raise ValueError("ranking weights must be non-negative and not all zero")
        positive("recency_half_life_days", recency_half_life_days)
        if model is not None and not model:
            raise ValueError("model must name the embedding model, or be None for EMBEDDING_MODEL")
        self.bm25_weight = float(bm25_weight)
        self.dense_weight = float(dense_weight)
        self.sentence_weight = float(sentence_weight)
        self.coverage_weight = float(coverage_weight)
        self.best_sentence_weight = float(best_sentence_weight)
        self.fusion_weight = float(fusion_weight)
        self.recency_weight = float(recency_weight)
        self.recency_half_life_days = float(recency_half_life_days)
        self.graph_weight = float(graph_weight)
        self.use_store_evidence = bool(use_store_evidence)
        self.model = setting_or(model, "embedding_model")
        self.spacy_model = setting_or(spacy_model, "spacy_model")
        self.document_store = check_document_store(document_store)
        # For a knowledge base over an attached collection: the meta field naming a chunk's document (None:
        # KB_DOCUMENT_FIELD as the ranker is built).
        self.document_field = document_field_of(document_field)
        self._kb = KnowledgeBaseAccess(
            self.document_store, embedding_model=self.model, document_field=self.document_field
        )
        self._scorer = EvidenceScorer({key: float(value) for key, value in evidence.items()})
        self._model: EmbeddingModel | None = None

    def warm_up(self) -> None:
        """Load the embedding model (shared process-wide; used only for chunks without a relevance) and open the
        knowledge base the evidence comes from."""
        if self._model is None:
            use_language_pipeline(self.spacy_model)
            self._model = get_embedding_model(self.model)
        if self.use_store_evidence:
            self._kb.warm_up()

    def close(self) -> None:
        """Close the knowledge base the evidence came from (the runtime closes its pipelines' components)."""
        self._kb.close()

    def warm_up_from(self, other: object) -> None:
        """`warm_up()` reading the evidence through `other`'s knowledge base when it is a ranker configured alike (a
        pipeline built for a selection of sources, from its whole pipeline): no second set of connections."""
        if type(other) is type(self) and isinstance(other, ResearchRanker) and other.to_dict() == self.to_dict():
            if self.use_store_evidence:
                self._kb.share(other._kb)
        self.warm_up()

    @component.output_types(documents=list[Document], ranked=RankedDocuments)
    def run(
        self,
        query: str,
        documents: list[Document] | FusedDocuments | None = None,
        query_embedding: list[float] | None = None,
        branch_documents: Variadic[list[Document] | BranchDocuments] = (),  # type: ignore[assignment]
        top_k: int | None = None,
        as_of: str | dt.date | None = None,
    ) -> dict[str, Any]:
        """Rank `documents` for `query`.

        :param query: the question.
        :param documents: candidates fused elsewhere (any order; their `score` is taken as the fusion score), as a
            list or as the joiner's read-only `FusedDocuments`; None to fuse `branch_documents` here.
        :param query_embedding: the question's embedding, used only when a chunk lacks a semantic relevance.
        :param branch_documents: each branch's own list, best first (a list, or the source's `BranchDocuments`,
            which Haystack hands on without copying its chunks): fused when `documents` is None, and always read
            for every branch's rank of a chunk.
        :param top_k: overrides the instance's `top_k` (clamped to 1-50).
        :param as_of: the date recency is measured from (ISO); today when empty.
        :returns: `documents`: the best `top_k` chunks, best first, `score` set to the combined score; `ranked`: the
            same chunks as one read-only `RankedDocuments`, for the stages after the ranker that share them.
        """
        started = time.perf_counter()
        limit = min(50, max(1, int(top_k))) if top_k is not None else self.top_k
        # Branches in the order of their names: which copy of a chunk is kept, and whose metadata completes it,
        # never depends on which branch finished first.
        lists = [documents_of(branch) for branch in branch_documents or []]
        branches = sorted((list(branch) for branch in lists if branch), key=_branch_name)
        if documents is None:
            pool, pool_fusion = self._fuse(branches)
        else:
            # The joiner keeps the copy of a chunk from whichever branch arrived first, in arrival order: take the
            # first branch's copy (by name) and order equal scores by id, as `_fuse` does.
            first = _first_copies(branches)
            fused = sorted(documents_of(documents), key=lambda document: (-(document.score or 0.0), document.id))
            pool = [first.get(document.id, document) for document in fused]
            pool_fusion = [document.score or 0.0 for document in fused]
        kept = [index for index, document in enumerate(pool) if document.content]
        if not kept:
            return {"documents": [], "ranked": RankedDocuments()}
        candidates = [pool[index] for index in kept]
        fusion = np.array([pool_fusion[index] for index in kept], float)
        if len(candidates) > self.max_candidates:
            # The fusion score orders the pool; only its head is worth the evidence scoring.
            head = np.argsort(-fusion, kind="stable")[: self.max_candidates]
            candidates = [candidates[int(index)] for index in head]
            fusion = fusion[head]

        branch_ranks, branch_meta = _branch_copies(branches)
        semantic = self._semantic(query, candidates, query_embedding)
        evidence, read = self._evidence(query, candidates, semantic, query_embedding)
        by_fusion = np.argsort(-fusion, kind="stable")
        fused_order = {candidates[int(index)].id: rank for rank, index in enumerate(by_fusion, start=1)}
        recency = self._recency(candidates, as_of) if self.recency_weight > 0 else np.zeros(len(candidates))

        walk = [branch_ranks.get(document.id, {}).get(GRAPH_RANK) for document in candidates]
        graph = np.array([0.0 if rank is None else 1.0 / math.sqrt(rank) for rank in walk])
        combined = (
            np.array([features.score for features in evidence], dtype=float)
            + self.fusion_weight * _relative(fusion)
            + self.recency_weight * recency
            + self.graph_weight * graph
        )
        order = np.argsort(-combined, kind="stable")[:limit]
        ranked: list[Document] = []
        for position, index in enumerate(order, start=1):
            document = candidates[int(index)]
            # The scorer read the question's terms only; the citation check reads the ranked chunks' whole counts.
            if read[index].sentence_terms:
                remember_stored_analysis(read[index].text, read[index].sentence_terms, read[index].sentence_spans)
            meta = dict(document.meta or {})
            for key, value in branch_meta.get(document.id, {}).items():
                meta.setdefault(key, value)  # what another branch's copy said (the graph's facts about the passage)
            meta.pop(SENTENCE_TERMS_KEY, None)  # read here only; the answer and its reader do not carry it on
            ranks = dict(meta.get("ranks") or {})
            ranks.update(branch_ranks.get(document.id, {}))
            ranks[FUSED_RANK] = fused_order[document.id]
            ranks[RANKED_RANK] = position
            meta["ranks"] = ranks
            meta["semantic_relevance"] = float(min(1.0, max(0.0, semantic[index])))
            meta["fusion_score"] = round(float(fusion[index]), 6)
            meta["evidence"] = evidence[index].as_meta()
            if graph[index] > 0:
                meta["evidence"]["graph_walk"] = round(float(graph[index]), 6)
            meta["rank_score"] = round(float(combined[index]), 6)
            ranked.append(replace(document, meta=meta, score=float(combined[index])))
        logger.debug(
            "Ranked {count} chunks in {elapsed_ms:.1f} ms",
            count=len(candidates),
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )
        return {"documents": ranked, "ranked": RankedDocuments(tuple(ranked))}

    # The knowledge base's evidence is one short query: on the loop only when the question has it to itself.
    run_async = async_twin(run, inline=alone_on_loop)

    # -- signals ------------------------------------------------------------------------------------------------

    @staticmethod
    def _fuse(branches: list[list[Document]]) -> tuple[list[Document], list[float]]:
        """One copy of every chunk the branches found (the first branch's), best fused first (ties by id), and its
        RRF score."""
        scores = reciprocal_rank_fusion([[document.id for document in branch] for branch in branches])
        first = _first_copies(branches)
        order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
        return [first[chunk_id] for chunk_id in order], [scores[chunk_id] for chunk_id in order]

    def _semantic(self, query: str, documents: list[Document], query_embedding: list[float] | None) -> np.ndarray:
        given = [(document.meta or {}).get("semantic_relevance") for document in documents]
        values = np.array([0.0 if value is None else float(value) for value in given], dtype=float)
        missing = [index for index, value in enumerate(given) if value is None]
        if missing:
            # Only sources that could not compare stored embeddings cost an embedding here.
            self.warm_up()
            assert self._model is not None
            vectors = self._model.embed([documents[index].content or "" for index in missing])
            for index, cosine in zip(missing, vectors @ query_vector(query, query_embedding, self.model), strict=True):
                values[index] = max(0.0, float(cosine))
        return values

    def _evidence(
        self,
        query: str,
        documents: list[Document],
        semantic: np.ndarray,
        query_embedding: list[float] | None,
    ) -> tuple[list[EvidenceFeatures], list[EvidenceCandidate]]:
        """The evidence features of every candidate, with what the knowledge base can add, and what was read of each."""
        statistics, sentences = self._store_evidence(query, documents, query_embedding)
        candidates = [
            EvidenceCandidate(
                chunk_id=document.id,
                text=document.content or "",
                title=str((document.meta or {}).get("source_title") or ""),
                cosine=float(semantic[index]),
                sentence_spans=_stored_spans(document),
                sentence_terms=_stored_terms(document),
            )
            for index, document in enumerate(documents)
        ]
        return self._scorer.score(query, candidates, statistics=statistics, sentences=sentences), candidates

    def _store_evidence(
        self, query: str, documents: list[Document], query_embedding: list[float] | None
    ) -> tuple[TermStatistics | None, dict[str, list[tuple[int, int, float]]]]:
        """Term statistics and stored sentence similarities of the candidates from the ranker's knowledge base, in
        one call (`ranking_evidence`); nothing when it keeps none, cannot be reached, or holds none of the
        candidates."""
        if not self.use_store_evidence:
            return None, {}
        by_collection: dict[str, list[str]] = {}
        for document in documents:
            meta = document.meta or {}
            if meta.get("source_type") == "kb" and meta.get("collection_name"):
                by_collection.setdefault(str(meta["collection_name"]), []).append(document.id)
        if not by_collection:
            return None, {}
        try:
            store = self._kb.get()
            chunk_ids = by_collection.get(store.collection)
            if not chunk_ids:
                return None, {}
            sentences, statistics = store.ranking_evidence(
                chunk_ids, query_vector(query, query_embedding, self.model), sorted(set(terms(query)))
            )
        except Exception as exc:  # noqa: BLE001 - evidence is an improvement; ranking goes on without it
            logger.warning("Ranking without the knowledge base's evidence: {reason}", reason=str(exc))
            return None, {}
        return statistics, sentences

    def _recency(self, documents: list[Document], as_of: str | dt.date | None) -> np.ndarray:
        today = parse_date(as_of) or dt.date.today()
        dates = [parse_date((document.meta or {}).get("source_date")) for document in documents]
        ages = [None if date is None else max(0, (today - date).days) for date in dates]
        return np.array([0.0 if age is None else math.pow(0.5, age / self.recency_half_life_days) for age in ages])


def _branch_name(branch: list[Document]) -> str:
    """The name a branch's chunks carry in their `ranks` (its source name), to order branches the same every run."""
    ranks = (branch[0].meta or {}).get("ranks") or {}
    return min((str(key) for key in ranks), default=str((branch[0].meta or {}).get("source_type") or ""))


def _first_copies(branches: list[list[Document]]) -> dict[str, Document]:
    """Per chunk id, its copy in the first branch that has it."""
    first: dict[str, Document] = {}
    for branch in branches:
        for document in branch:
            first.setdefault(document.id, document)
    return first


def _branch_copies(branches: list[list[Document]]) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]]]:
    """Per chunk id, every branch rank any copy of it carries, and the metadata keys of its copies, first copy first
    (the joiner keeps only one copy's meta)."""
    ranks: dict[str, dict[str, int]] = {}
    metas: dict[str, dict[str, Any]] = {}
    for branch in branches:
        for document in branch:
            kept = metas.setdefault(document.id, {})
            for key, value in (document.meta or {}).items():
                if key != "ranks":
                    kept.setdefault(key, value)
            for key, value in ((document.meta or {}).get("ranks") or {}).items():
                if key not in (FUSED_RANK, RANKED_RANK) and isinstance(value, int):
                    ranks.setdefault(document.id, {})[key] = value
    return ranks, metas


def _relative(values: np.ndarray) -> np.ndarray:
    """Scores as a share of the best one (0-1), so signals on different scales can be added."""
    if values.size == 0:
        return values
    top = float(values.max())
    return np.zeros_like(values) if top <= 0 else np.clip(values / top, 0.0, 1.0)


def _stored_terms(document: Document) -> str | None:
    """The sentence terms a chunk carries in its metadata (ingestion's `sentence_terms_record`), if any."""
    record = (document.meta or {}).get(SENTENCE_TERMS_KEY)
    return record if isinstance(record, str) else None


def _stored_spans(document: Document) -> tuple[tuple[int, int], ...] | None:
    """The sentence spans a chunk carries in its metadata, when they fit its text."""
    spans = stored_sentence_spans(document.content or "", document.meta or {})
    return tuple(spans) if spans is not None else None
