"""`ResearchRanker`: one calibrated order for chunks fused from every source."""

# No `from __future__ import annotations`: Haystack must see the real Variadic type of `branch_documents`.

import datetime as dt
import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict, logging
from haystack.core.component.types import Variadic

from components.embedding.model import EmbeddingModel, get_embedding_model
from components.ranking.evidence import idf_weights, sentence_terms, terms, text_evidence
from components.settings import DEFAULT_EMBEDDING_MODEL

logger = logging.getLogger(__name__)

# Per-branch rank keys are written by the sources; these two are ours.
FUSED_RANK = "fused"
RANKED_RANK = "ranked"


@component
class ResearchRanker:
    """Orders fused chunks by semantic relevance, sentence-level lexical evidence and their fusion rank.

    Every chunk gets the same semantic relevance scale: the cosine the source computed from stored embeddings
    (`meta["semantic_relevance"]`), or, when a source left it out, the local model's cosine of the chunk text.
    That is combined with how much of the question's rarer terms the chunk's best sentence holds and with the
    reciprocal-rank-fusion score, plus an optional recency weight on `source_date`. The chunk's rank in every
    branch (recovered from `branch_documents`), after fusion (`fused`) and after ranking (`ranked`) is kept in
    `meta["ranks"]`.

    Usage:
    ```python
    ranker = ResearchRanker(top_k=5)
    ranker.warm_up()
    fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([dense, keyword])["documents"]
    ranked = ranker.run(query="Who won?", documents=fused, branch_documents=[dense, keyword])["documents"]
    ```
    """

    def __init__(
        self,
        top_k: int = 8,
        semantic_weight: float = 0.45,
        lexical_weight: float = 0.45,
        fusion_weight: float = 0.1,
        recency_weight: float = 0.0,
        recency_half_life_days: float = 365.0,
        model: str = DEFAULT_EMBEDDING_MODEL,
    ) -> None:
        """
        :param top_k: how many chunks to keep (1-50).
        :param semantic_weight: weight of the chunk's semantic relevance, relative to the best candidate's.
        :param lexical_weight: weight of the best sentence's coverage of the question's terms.
        :param fusion_weight: weight of the reciprocal-rank-fusion score, relative to the best candidate's.
        :param recency_weight: weight of recency (1 for today, halving every `recency_half_life_days`).
        :param recency_half_life_days: how fast recency decays.
        :param model: the embedding model used for chunks that come without a semantic relevance.
        """
        if not 1 <= int(top_k) <= 50:
            raise ValueError("top_k must be between 1 and 50")
        weights = (semantic_weight, lexical_weight, fusion_weight, recency_weight)
        if any(weight < 0 for weight in weights) or sum(weights) <= 0:
            raise ValueError("ranking weights must be non-negative and not all zero")
        if recency_half_life_days <= 0:
            raise ValueError("recency_half_life_days must be positive")
        if not model:
            raise ValueError("model must name the embedding model")
        self.top_k = int(top_k)
        self.semantic_weight = float(semantic_weight)
        self.lexical_weight = float(lexical_weight)
        self.fusion_weight = float(fusion_weight)
        self.recency_weight = float(recency_weight)
        self.recency_half_life_days = float(recency_half_life_days)
        self.model = model
        self._model: EmbeddingModel | None = None

    def warm_up(self) -> None:
        """Load the embedding model (shared process-wide; used only for chunks without a relevance)."""
        if self._model is None:
            self._model = get_embedding_model(self.model)

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        documents: list[Document],
        query_embedding: list[float] | None = None,
        branch_documents: Variadic[list[Document]] = (),  # type: ignore[assignment]
        top_k: int | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """Rank `documents` for `query`.

        :param query: the question.
        :param documents: the fused candidates (any order; their `score` is taken as the fusion score).
        :param query_embedding: the question's embedding, used only when a chunk lacks a semantic relevance.
        :param branch_documents: each branch's own list, to recover every branch's rank of a chunk.
        :param top_k: overrides the instance's `top_k` (clamped to 1-50).
        :param as_of: the date recency is measured from (ISO); today when empty.
        :returns: `documents`: the best `top_k` chunks, best first, `score` set to the combined score.
        """
        started = time.perf_counter()
        limit = min(50, max(1, int(top_k))) if top_k is not None else self.top_k
        candidates = [document for document in documents if document.content]
        if not candidates:
            return {"documents": []}

        branch_ranks = self._branch_ranks(branch_documents)
        semantic = self._semantic(query, candidates, query_embedding)
        lexical = self._lexical(query, candidates)
        fusion = np.array([document.score if document.score is not None else 0.0 for document in candidates], float)
        fused_order = {document.id: rank for rank, document in enumerate(self._by(fusion, candidates), start=1)}
        recency = self._recency(candidates, as_of) if self.recency_weight > 0 else np.zeros(len(candidates))

        combined = (
            self.semantic_weight * _relative(semantic)
            + self.lexical_weight * lexical
            + self.fusion_weight * _relative(fusion)
            + self.recency_weight * recency
        )
        order = np.argsort(-combined, kind="stable")[:limit]
        ranked: list[Document] = []
        for position, index in enumerate(order, start=1):
            document = candidates[int(index)]
            meta = dict(document.meta or {})
            ranks = dict(meta.get("ranks") or {})
            ranks.update(branch_ranks.get(document.id, {}))
            ranks[FUSED_RANK] = fused_order[document.id]
            ranks[RANKED_RANK] = position
            meta["ranks"] = ranks
            meta["semantic_relevance"] = float(min(1.0, max(0.0, semantic[index])))
            meta["fusion_score"] = round(float(fusion[index]), 6)
            meta["rank_score"] = round(float(combined[index]), 6)
            ranked.append(replace(document, meta=meta, score=float(combined[index])))
        logger.debug(
            "Ranked {count} chunks in {elapsed_ms:.1f} ms",
            count=len(candidates),
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )
        return {"documents": ranked}

    # -- signals ------------------------------------------------------------------------------------------------

    @staticmethod
    def _by(scores: np.ndarray, documents: list[Document]) -> list[Document]:
        return [documents[int(i)] for i in np.argsort(-scores, kind="stable")]

    @staticmethod
    def _branch_ranks(branch_documents: Any) -> dict[str, dict[str, int]]:
        """Every branch rank any copy of a chunk carries (the joiner keeps only one copy's meta)."""
        ranks: dict[str, dict[str, int]] = {}
        for branch in branch_documents or []:
            for document in branch or []:
                for key, value in ((document.meta or {}).get("ranks") or {}).items():
                    if key not in (FUSED_RANK, RANKED_RANK) and isinstance(value, int):
                        ranks.setdefault(document.id, {})[key] = value
        return ranks

    def _semantic(self, query: str, documents: list[Document], query_embedding: list[float] | None) -> np.ndarray:
        values = np.zeros(len(documents), dtype=float)
        missing: list[int] = []
        for index, document in enumerate(documents):
            value = (document.meta or {}).get("semantic_relevance")
            if value is None:
                missing.append(index)
            else:
                values[index] = float(value)
        if missing:
            # Only sources that could not compare stored embeddings cost an embedding here.
            self.warm_up()
            assert self._model is not None
            query_vector = (
                np.asarray(query_embedding, dtype=np.float32) if query_embedding else self._model.embed_one(query)
            )
            texts = [documents[index].content or "" for index in missing]
            vectors = self._model.embed(texts)
            for index, cosine in zip(missing, vectors @ query_vector, strict=True):
                values[index] = max(0.0, float(cosine))
        return values

    @staticmethod
    def _lexical(query: str, documents: list[Document]) -> np.ndarray:
        query_terms = terms(query)
        if not query_terms:
            return np.zeros(len(documents))
        # The title is context for every sentence: "When was it founded?" asked of a chunk titled "Warsaw".
        sentences_terms = [
            [sentence + _title_terms(document) for sentence in sentence_terms(document.content or "")]
            for document in documents
        ]
        bags = [set().union(*[set(s) for s in sentences]) if sentences else set() for sentences in sentences_terms]
        weights = idf_weights(query_terms, bags)
        scores = []
        for sentences in sentences_terms:
            evidence = text_evidence(query_terms, weights, sentences)
            scores.append(0.7 * evidence.best_sentence + 0.3 * evidence.coverage)
        return np.array(scores, dtype=float)

    def _recency(self, documents: list[Document], as_of: str | None) -> np.ndarray:
        try:
            today = dt.date.fromisoformat(as_of[:10]) if as_of else dt.date.today()
        except ValueError:
            today = dt.date.today()
        values = []
        for document in documents:
            raw = (document.meta or {}).get("source_date")
            try:
                date = dt.date.fromisoformat(str(raw)[:10]) if raw else None
            except ValueError:
                date = None
            if date is None:
                values.append(0.0)
                continue
            age = max(0, (today - date).days)
            values.append(math.pow(0.5, age / self.recency_half_life_days))
        return np.array(values, dtype=float)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            top_k=self.top_k,
            semantic_weight=self.semantic_weight,
            lexical_weight=self.lexical_weight,
            fusion_weight=self.fusion_weight,
            recency_weight=self.recency_weight,
            recency_half_life_days=self.recency_half_life_days,
            model=self.model,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ResearchRanker":
        return default_from_dict(cls, data)


def _title_terms(document: Document) -> tuple[str, ...]:
    meta = document.meta or {}
    return tuple(terms(str(meta.get("source_title") or meta.get("document_title") or "")))


def _relative(values: np.ndarray) -> np.ndarray:
    """Scores as a share of the best one (0-1), so signals on different scales can be added."""
    if values.size == 0:
        return values
    top = float(values.max())
    if top <= 0:
        return np.zeros_like(values)
    return np.clip(values / top, 0.0, 1.0)
