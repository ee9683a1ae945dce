"""Scores for one question and their aggregation: retrieval (recall@k, MRR@10, nDCG@10), answers, citations.

Retrieval metrics are computed over the ranked list of distinct *documents* a variant returned (a document's
best chunk decides its rank), against the question's gold document ids. Where Haystack has an evaluator for a
metric (document recall, MRR, nDCG, semantic answer similarity) `aggregate_with_haystack` cross-checks the
per-question numbers with it; SQuAD-style exact match and token F1 (normalised, best over the gold answers) are
computed here, because Haystack's `AnswerExactMatchEvaluator` compares raw strings against a single answer.

Usage:
```python
scores = retrieval_scores(["d3", "d1", "d7"], gold={"d1"})
scores["recall_any@1"], scores["mrr@10"]  # 0.0, 0.5
```
"""

from __future__ import annotations

import logging as std_logging
import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from components.embedding.model import resolve_model_path
from components.settings import get_settings
from components.text.analyzer import content_words

RECALL_KS = (1, 5, 10)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.IGNORECASE)
_CITATION_MARK = re.compile(r"\s*\[(\d+(?:\s*,\s*\d+)*)\]")


def distinct_in_order(values: Iterable[str]) -> list[str]:
    """`values` without repeats, first occurrence kept."""
    return list(dict.fromkeys(value for value in values if value))


def retrieval_scores(ranked_doc_ids: Sequence[str], gold: set[str] | Sequence[str]) -> dict[str, float]:
    """recall@1/5/10 (any gold and all gold), MRR@10 and nDCG@10 (binary relevance) of one ranked list."""
    gold_set = set(gold)
    ranked = distinct_in_order(ranked_doc_ids)
    scores: dict[str, float] = {}
    for k in RECALL_KS:
        found = gold_set.intersection(ranked[:k])
        scores[f"recall_any@{k}"] = float(bool(found)) if gold_set else 0.0
        scores[f"recall_all@{k}"] = float(found == gold_set) if gold_set else 0.0
    reciprocal = 0.0
    for rank, doc_id in enumerate(ranked[:10], start=1):
        if doc_id in gold_set:
            reciprocal = 1.0 / rank
            break
    scores["mrr@10"] = reciprocal
    dcg = sum(1.0 / math.log2(rank + 1) for rank, doc_id in enumerate(ranked[:10], start=1) if doc_id in gold_set)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), 10) + 1))
    scores["ndcg@10"] = dcg / ideal if ideal > 0 else 0.0
    return scores


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = _CITATION_MARK.sub("", text or "").lower()
    text = "".join(char for char in text if char not in string.punctuation)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals a normalised gold answer."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(answer) for answer in answers)) if answers else 0.0


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """The best token-overlap F1 between the prediction and any gold answer (SQuAD's definition)."""
    predicted = normalize_answer(prediction).split()
    best = 0.0
    for answer in answers:
        gold = normalize_answer(answer).split()
        common = Counter(predicted) & Counter(gold)
        overlap = sum(common.values())
        if not predicted or not gold or overlap == 0:
            continue
        precision, recall = overlap / len(predicted), overlap / len(gold)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def scored_answer(record: dict[str, Any]) -> str:
    """What exact match and token F1 compare with the gold answers: the short answer when the answer leads with
    one, else the whole answer. A short answer held back as unsure still counts here (its parts' short answers):
    what is shown is scored by `selective`."""
    candidates = "; ".join(dict.fromkeys(p["short_answer"] for p in record.get("parts") or [] if p.get("short_answer")))
    return str(candidates or record.get("short_answer") or record.get("answer") or "")


def answer_contains_gold(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer appears inside the normalised prediction (fits sentence answers)."""
    predicted = f" {normalize_answer(prediction)} "
    return float(any(f" {normalize_answer(answer)} " in predicted for answer in answers if normalize_answer(answer)))


def split_cited_sentences(answer: str) -> list[tuple[str, list[int]]]:
    """The answer's sentences that carry citation marks `[n]`, each with its cited numbers."""
    pieces = re.split(r"(?<=[.!?])\s+|(?<=\])\s+(?=[A-Z])|\n+", answer or "")
    cited: list[tuple[str, list[int]]] = []
    for piece in pieces:
        numbers = [int(n) for group in _CITATION_MARK.findall(piece) for n in re.split(r"\s*,\s*", group)]
        text = _CITATION_MARK.sub("", piece).strip()
        if numbers and text:
            cited.append((text, numbers))
    return cited


def lexical_support(sentence: str, chunk_text: str) -> float:
    """The share of the sentence's content words (its citation marks left out) that the chunk contains."""
    words = set(content_words(_CITATION_MARK.sub(" ", sentence)))
    if not words:
        return 0.0
    return len(words & set(content_words(chunk_text))) / len(words)


def percentile(values: Sequence[float], q: float, empty: float = 0.0) -> float:
    """The q-th percentile (0-100) of `values` (numpy's linear interpolation), `empty` for none."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else empty


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None, or None when there are none."""
    present = [float(value) for value in values if value is not None]
    return sum(present) / len(present) if present else None


def citation_precision(citations: Iterable[dict[str, Any]]) -> float | None:
    """The share of cited sentences their chunk supports; a citation judged by nothing the chunk can hold (a yes/no
    verdict's headline, `"supported": None`) is left out."""
    return mean(float(citation["supported"]) for citation in citations if citation["supported"] is not None)


def aggregate_with_haystack(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Haystack's document evaluators over the records' ranked documents: a cross-check of our own numbers.

    Each record needs `ranked_doc_ids` and `gold_doc_ids`. Returns recall (single and multi hit) at 10, MRR and
    nDCG over the top 10.
    """
    from haystack import Document

    scored = [record for record in records if record.get("gold_doc_ids")]
    if not scored:
        return {}

    def as_documents(ids: Sequence[str]) -> list[Document]:
        return [Document(content=doc_id, meta={"doc_id": doc_id}) for doc_id in ids]

    truth = [as_documents(record["gold_doc_ids"]) for record in scored]
    retrieved = [as_documents(distinct_in_order(record["ranked_doc_ids"])[:10]) for record in scored]
    field = "meta.doc_id"
    # The evaluators warn once per question that retrieved nothing; those questions are already scored 0 here.
    evaluator_logger = std_logging.getLogger("haystack.components.evaluators")
    level = evaluator_logger.level
    evaluator_logger.setLevel(std_logging.ERROR)
    try:
        return _haystack_scores(truth, retrieved, field)
    finally:
        evaluator_logger.setLevel(level)


def _haystack_scores(truth: list[Any], retrieved: list[Any], field: str) -> dict[str, float]:
    from haystack.components.evaluators import DocumentMRREvaluator, DocumentNDCGEvaluator, DocumentRecallEvaluator

    return {
        "haystack_recall_single_hit@10": DocumentRecallEvaluator(
            mode="single_hit", document_comparison_field=field
        ).run(ground_truth_documents=truth, retrieved_documents=retrieved)["score"],
        "haystack_recall_multi_hit@10": DocumentRecallEvaluator(mode="multi_hit", document_comparison_field=field).run(
            ground_truth_documents=truth, retrieved_documents=retrieved
        )["score"],
        "haystack_mrr@10": DocumentMRREvaluator(document_comparison_field=field).run(
            ground_truth_documents=truth, retrieved_documents=retrieved
        )["score"],
        "haystack_ndcg@10": DocumentNDCGEvaluator(document_comparison_field=field).run(
            ground_truth_documents=truth, retrieved_documents=retrieved
        )["score"],
    }


class SemanticAnswerSimilarity:
    """Haystack's `SASEvaluator` with the bundled local model: the best similarity of an answer to any gold one.

    Usage:
    ```python
    sas = SemanticAnswerSimilarity()
    sas.score(["Denver Broncos won."], [["Denver Broncos"]])  # [0.8...]
    ```
    """

    def __init__(self, model: str | None = None) -> None:
        self.model_path = resolve_model_path(model or get_settings().embedding_model)
        self._evaluator: Any = None

    def score(self, predictions: Sequence[str], answers: Sequence[Sequence[str]]) -> list[float | None]:
        """One SAS per prediction (None where there is no gold answer or no prediction)."""
        pairs: list[tuple[int, str, str]] = [
            (index, _CITATION_MARK.sub("", prediction).strip(), answer)
            for index, (prediction, golds) in enumerate(zip(predictions, answers, strict=True))
            if prediction and prediction.strip()
            for answer in golds
            if answer and answer.strip()
        ]
        best: list[float | None] = [None] * len(predictions)
        if not pairs:
            return best
        if self._evaluator is None:
            from haystack.components.evaluators import SASEvaluator

            self._evaluator = SASEvaluator(model=self.model_path)
            self._evaluator.warm_up()
        result = self._evaluator.run(
            ground_truth_answers=[answer for _, _, answer in pairs], predicted_answers=[text for _, text, _ in pairs]
        )
        for (index, _, _), value in zip(pairs, result["individual_scores"], strict=True):
            current = best[index]
            best[index] = float(value) if current is None else max(current, float(value))
        return best
