"""What the answer confidence reads beyond how the answer was found: whether the chosen sentence is the one that
answers the question, and whether the short answer is what it says in the question's place.

Each group of features (`EVIDENCE_GROUPS`) is a general property of the question, the sentence, the span and the
retrieved chunks, never their wording; each was kept because it raised the check half's AUC or coverage at 0.9
precision (`research fit answer --ablation`; the groups and features that did not are listed in
docs/answer-confidence.md):

- `window`: the share of the question's terms held near the span in its sentence (a span among the question's words
  is in the place the question asks about).
- `spread`: agreement of the part's best sentences on the span (share of them holding it, share of their score).
- `retrieval`: the top chunk's lead over the next in retrieval score.
- `meaning`: the span's cosine to the question, and how much the sentence's cosine to the question drops without it
  (the embedding model's vectors).
- `list`: the span joins several items.
- `choice`: whether the span's sentence is the best-scored of the part's sentences (the asked kind's bonus, or a
  chain, may have taken another).
- `length`: the span's sentence's length (a long sentence holds more candidate spans besides the answer).
- `generic`: the span is a common noun phrase that names nothing: it opens with a determiner and holds no proper
  noun and no number ("the function", "this position"), read from the sentence's parse.
- `bracket`: the span stands inside brackets in its sentence (an aside, seldom what the sentence asserts).

Usage:
```python
features = evidence_features(question="Who bought Acme?", sentence="Zeta acquired Acme in 2001.", span="Zeta",
                             top=[(1.2, "Zeta acquired Acme in 2001.")], scores=[0.9, 0.4],
                             question_terms=frozenset({"bought", "acm"}), model=None)
```
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from typing import Any

import cachetools

from components.text.analyzer import stem, words
from components.text.language import parse

EVIDENCE_GROUPS: dict[str, tuple[str, ...]] = {
    "window": ("window_share",),
    "spread": ("span_support", "span_weight"),
    "retrieval": ("retrieval_gap",),
    "meaning": ("span_cosine", "cosine_drop"),
    "list": ("span_list",),
    "choice": ("sentence_best",),
    "length": ("sentence_words",),
    "generic": ("span_generic",),
    "bracket": ("span_bracketed",),
}
EVIDENCE_FEATURES = tuple(name for group in EVIDENCE_GROUPS.values() for name in group)

MEANING_CACHE_SIZE = 512  # (question, sentence, span) triples whose model-read features a generator keeps
WINDOW = 8  # words either side of the span read for the question's terms
TOP_SENTENCES = 5  # the part's best sentences read for agreement
# A span that joins several items ("A and B", "A, B or C"): a question answered by one name seldom wants a list.
_LIST = re.compile(r"\s(?:and|or)\s")


def evidence_features(
    *,
    question: str,
    sentence: str,
    span: str,
    top: Sequence[tuple[float, str]],
    scores: Sequence[float | None],
    question_terms: frozenset[str],
    model: Any = None,
    cache: MeaningCache | None = None,
) -> dict[str, float]:
    """The evidence features of one part's short answer.

    :param question: the whole question.
    :param sentence: the sentence the span was taken from (empty when it came from no one sentence).
    :param span: the short answer.
    :param top: the part's best sentences as (score, text), best first.
    :param scores: the retrieval scores of the top chunks, in rank order (None: a chunk without one).
    :param question_terms: the question's terms (stems).
    :param model: the embedding model (`embed(texts)`, `embed_one(text)`, normalised vectors); None: the features
        that need it are 0.
    :param cache: where the model-read features of a (question, sentence, span) are kept (`MeaningCache`), so the
        same answer rated again costs no forward pass; None: computed every time.
    """
    meaning = (cache or MeaningCache(size=1)).get(question, sentence, span, model)
    return {
        "window_share": _window_share(sentence, span, question_terms),
        **_spread(span, top),
        "retrieval_gap": _retrieval_gap(scores),
        **meaning,
        "span_list": float(bool(_LIST.search(span))),
        "sentence_best": float(bool(sentence) and bool(top) and top[0][1] == sentence),
        "sentence_words": math.log1p(len(words(sentence))),
        "span_generic": _generic(sentence, span),
        "span_bracketed": _bracketed(sentence, span),
    }


def _span_start(sentence: str, span: str) -> int | None:
    """The character offset of the span's first occurrence in its sentence (by case when it can), None when the
    sentence does not hold it."""
    if not span or not sentence:
        return None
    start = sentence.find(span)
    if start >= 0:
        return start
    # Searched without case in the sentence itself: lower-casing may change a non-ASCII text's length ("İ"), and an
    # offset in the lower-cased copy would then lie past the span.
    found = re.search(re.escape(span), sentence, re.IGNORECASE)
    return found.start() if found else None


def _generic(sentence: str, span: str) -> float:
    """1 when the span, read in its sentence's parse, is a common noun phrase naming nothing: its first word a
    determiner, none of its words a proper noun or a number; 0 otherwise (and when the sentence does not hold it)."""
    start = _span_start(sentence, span)
    if start is None:
        return 0.0
    found = parse(sentence).char_span(start, start + len(span), alignment_mode="expand")
    tokens = [token for token in found or () if not token.is_punct]
    if not tokens or tokens[0].pos_ != "DET":
        return 0.0
    return float(not any(token.pos_ in {"PROPN", "NUM"} or token.like_num for token in tokens))


def _bracketed(sentence: str, span: str) -> float:
    """1 when the span's first occurrence in its sentence stands inside an open bracket ("X (now in Y) ...")."""
    start = _span_start(sentence, span)
    if start is None:
        return 0.0
    before = sentence[:start]
    return float(before.count("(") > before.count(")"))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _span_position(span_words: list[str], sentence_words: list[str]) -> int | None:
    """The index of the span's first occurrence among the sentence's words (None when it does not hold it)."""
    size = len(span_words)
    return next(
        (i for i in range(len(sentence_words) - size + 1) if size and sentence_words[i : i + size] == span_words), None
    )


def _window_share(sentence: str, span: str, question_terms: frozenset[str]) -> float:
    """The share of the question's terms within `WINDOW` words either side of the span in its sentence (0 when the
    sentence does not hold the span)."""
    sentence_words, span_words = words(sentence), words(span)
    start = _span_position(span_words, sentence_words)
    if start is None or not question_terms:
        return 0.0
    end = start + len(span_words)
    near = sentence_words[max(0, start - WINDOW) : start] + sentence_words[end : end + WINDOW]
    return len({stem(word) for word in near} & question_terms) / len(question_terms)


def _spread(span: str, top: Sequence[tuple[float, str]]) -> dict[str, float]:
    """The share of the best sentences that hold the span as whole words ("Ian" is not in "Italian", "50" not in
    "500"), and their share of those sentences' scores (a score that is negative or not finite weighs nothing)."""
    best = list(top)[:TOP_SENTENCES]
    span_words = words(span)
    if not best or not span_words:
        return {"span_support": 0.0, "span_weight": 0.0}
    holding = [_span_position(span_words, words(text)) is not None for _, text in best]
    weights = [_finite(score) for score, _ in best]
    total = sum(weights)
    return {
        "span_support": sum(holding) / len(best),
        "span_weight": sum(w for w, held in zip(weights, holding, strict=True) if held) / total if total else 0.0,
    }


def _finite(value: float | None) -> float:
    """`value` when it is a finite positive number, else 0."""
    number = float(value) if value is not None else 0.0
    return number if math.isfinite(number) and number > 0 else 0.0


def _retrieval_gap(scores: Sequence[float | None]) -> float:
    """The top chunk's lead over the second, relative to its score (1 for a lone chunk, 0 without scores or
    when one of the two is missing or not finite)."""
    values = [math.nan if score is None else float(score) for score in scores][:2]
    # A chunk without a score, or one that is not a finite number (a caller's NaN or infinity), says nothing about
    # the lead.
    if not values or values[0] <= 0 or not all(map(math.isfinite, values)):
        return 0.0
    return min(max((values[0] - values[1]) / values[0], 0.0), 1.0) if len(values) > 1 else 1.0


def _meaning(question: str, sentence: str, span: str, model: Any) -> dict[str, float]:
    if model is None or not span:
        return {"span_cosine": 0.0, "cosine_drop": 0.0}
    asked = model.embed_one(question)
    texts = [span]
    # The span as whole words, found in the sentence itself: offsets of a lower-cased copy can be off ("İ" lowers to
    # two characters), and a span inside a longer word ("Ian" in "Italian") is not the span.
    found = re.search(rf"(?<!\w){re.escape(span)}(?!\w)", sentence, re.IGNORECASE) if sentence else None
    if found:
        texts += [sentence, (sentence[: found.start()] + sentence[found.end() :]).strip() or "."]
    vectors = model.embed(texts)
    cosines = vectors @ asked
    drop = float(cosines[1] - cosines[2]) if len(texts) == 3 else 0.0
    span_cosine = float(cosines[0])
    return {
        "span_cosine": span_cosine if math.isfinite(span_cosine) else 0.0,
        "cosine_drop": drop if math.isfinite(drop) else 0.0,
    }


class MeaningCache:
    """The model-read features (`span_cosine`, `cosine_drop`) of recent (question, sentence, span) triples, kept by one
    generator (never process-wide), thread-safe. A triple's features are always computed the same way (one batch of
    its span, sentence and sentence without the span), so a kept value equals a fresh one: the cache changes what an
    answer asked again costs, never its confidence."""

    def __init__(self, size: int = MEANING_CACHE_SIZE) -> None:
        self._kept: cachetools.LRUCache[tuple[str, str, str], dict[str, float]] = cachetools.LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, question: str, sentence: str, span: str, model: Any) -> dict[str, float]:
        """The features of the triple under `model` (computed now when not kept; not kept without a model)."""
        if model is None:
            return _meaning(question, sentence, span, model)
        key = (question, sentence, span)
        with self._lock:
            kept = self._kept.get(key)
        if kept is None:
            kept = _meaning(question, sentence, span, model)
            with self._lock:
                self._kept[key] = kept
        return dict(kept)
