"""What the answer confidence reads beyond how the answer was found: whether the chosen sentence is the one that
answers the question, and whether the short answer is what it says in the question's place.

Each group of features (`EVIDENCE_GROUPS`) is a general property of the question, the sentence, the span and the
retrieved chunks, never their wording:

- `kind`: what the part asks (who, when, where, how many / how much, which, what), one flag each, so the model can
  trust a found name more for one kind of question than another.
- `window`: the question's terms held near the span in its sentence (a span among the question's words is in the
  place the question asks about); the question's main verb met in the sentence, by lemma or by the embedding model's
  vectors ("bought" meets "acquired"); the span hanging, in the sentence's parse, from a word of the question.
- `spread`: agreement of the part's best sentences on the span (share of them holding it, share of their score) and
  how many other names of the asked kind they offer (the answer's entropy).
- `retrieval`: the top chunk's lead over the next in retrieval score, and the cited chunk's score against the top's.
- `meaning`: the span's cosine to the question, and how much the sentence's cosine to the question drops without it.

Usage:
```python
features = evidence_features(question="Who bought Acme?", part=part, sentence="Zeta acquired Acme in 2001.",
                             span="Zeta", top=[(1.2, "Zeta acquired Acme in 2001.")], scores=[0.9, 0.4], rank=0,
                             question_terms=frozenset({"bought", "acm"}), model=None)
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from components.text.analyzer import stem, terms, words
from components.text.language import parse, parse_syntax

KINDS = ("who", "when", "where", "count", "which", "what")
_COUNT_KINDS = frozenset({"how_many", "how_much"})

EVIDENCE_GROUPS: dict[str, tuple[str, ...]] = {
    "kind": tuple(f"kind_{kind}" for kind in KINDS),
    "window": ("window_share", "verb_match", "span_governed"),
    "spread": ("span_support", "span_weight", "rivals"),
    "retrieval": ("retrieval_gap", "retrieval_ratio"),
    "meaning": ("span_cosine", "cosine_drop"),
}
EVIDENCE_FEATURES = tuple(name for group in EVIDENCE_GROUPS.values() for name in group)

WINDOW = 8  # words either side of the span read for the question's terms
TOP_SENTENCES = 5  # the part's best sentences read for agreement and rivals
GOVERNING_STEPS = 3  # heads walked up from the span for a word of the question
_LIGHT_VERBS = frozenset({"be", "do", "have"})


def evidence_features(
    *,
    question: str,
    part: Any,
    sentence: str,
    span: str,
    top: Sequence[tuple[float, str]],
    scores: Sequence[float],
    rank: int,
    question_terms: frozenset[str],
    model: Any = None,
) -> dict[str, float]:
    """The evidence features of one part's short answer.

    :param question: the whole question; `part`: the part answered (its `kind`, `labels` and `text`).
    :param sentence: the sentence the span was taken from (empty when it came from no one sentence).
    :param span: the short answer.
    :param top: the part's best sentences as (score, text), best first.
    :param scores: the retrieval scores of the top chunks, in rank order; `rank`: the cited chunk's 0-based rank.
    :param question_terms: the question's terms (stems).
    :param model: the embedding model (`embed(texts)`, `embed_one(text)`, normalised vectors); None: the features
        that need it are 0.
    """
    kind = "count" if part.kind in _COUNT_KINDS else part.kind
    features = {f"kind_{name}": float(kind == name) for name in KINDS}
    features.update(_window(question, sentence, span, question_terms, model))
    features.update(_spread(span, top, part.labels, question_terms))
    features.update(_retrieval(scores, rank))
    features.update(_meaning(question, sentence, span, model))
    return features


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _span_position(span_words: list[str], sentence_words: list[str]) -> int | None:
    """The index of the span's first occurrence among the sentence's words (None when it does not hold it)."""
    size = len(span_words)
    return next(
        (i for i in range(len(sentence_words) - size + 1) if size and sentence_words[i : i + size] == span_words), None
    )


def _window(question: str, sentence: str, span: str, question_terms: frozenset[str], model: Any) -> dict[str, float]:
    out = {"window_share": 0.0, "verb_match": 0.0, "span_governed": 0.0}
    if not sentence or not question_terms:
        return out
    sentence_words, span_words = words(sentence), words(span)
    start = _span_position(span_words, sentence_words)
    if start is not None:
        end = start + len(span_words)
        near = sentence_words[max(0, start - WINDOW) : start] + sentence_words[end : end + WINDOW]
        out["window_share"] = len({stem(word) for word in near} & question_terms) / len(question_terms)
    doc = parse(sentence)
    verb = _main_verb(question)
    if verb:
        verbs = sorted({token.lemma_.lower() for token in doc if token.pos_ in {"VERB", "AUX"}} - _LIGHT_VERBS)
        if verb in verbs or verb in {token.lemma_.lower() for token in doc}:
            out["verb_match"] = 1.0
        elif verbs and model is not None:
            vectors = model.embed([verb, *verbs])
            out["verb_match"] = max(0.0, float(np.max(vectors[1:] @ vectors[0])))
    out["span_governed"] = _governed(doc, sentence, span, question_terms)
    return out


def _main_verb(question: str) -> str:
    """The lemma of the question's main verb other than be/do/have ("Who bought X?" -> "buy"); empty when none."""
    doc = parse_syntax(question)
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is not None and root.pos_ == "VERB" and root.lemma_.lower() not in _LIGHT_VERBS:
        return root.lemma_.lower()
    verb = next((t for t in doc if t.pos_ == "VERB" and t.lemma_.lower() not in _LIGHT_VERBS), None)
    return verb.lemma_.lower() if verb is not None else ""


def _governed(doc: Any, sentence: str, span: str, question_terms: frozenset[str]) -> float:
    """1 / steps from the span's head up the parse to the nearest word of the question (0 when none is within
    `GOVERNING_STEPS`, or the sentence does not hold the span)."""
    at = sentence.lower().find(span.lower()) if span else -1
    found = doc.char_span(at, at + len(span), alignment_mode="expand") if at >= 0 else None
    if found is None or not len(found):
        return 0.0
    token = found.root
    for step in range(1, GOVERNING_STEPS + 1):
        if token.head is token:
            break
        token = token.head
        if stem(token.lower_) in question_terms or stem(token.lemma_.lower()) in question_terms:
            return 1.0 / step
    return 0.0


def _spread(
    span: str, top: Sequence[tuple[float, str]], labels: Sequence[str], question_terms: frozenset[str]
) -> dict[str, float]:
    best = list(top)[:TOP_SENTENCES]
    needle = _normal(span)
    if not best or not needle:
        return {"span_support": 0.0, "span_weight": 0.0, "rivals": 0.0}
    holding = [needle in _normal(text) for _, text in best]
    weights = [max(score, 0.0) for score, _ in best]
    total = sum(weights)
    rivals: set[str] = set()
    if labels:
        for _, text in best:
            for ent in parse(text).ents:
                name = _normal(ent.text)
                if ent.label_ in labels and name != needle and not set(terms(ent.text)) <= question_terms:
                    rivals.add(name)
    return {
        "span_support": sum(holding) / len(best),
        "span_weight": sum(w for w, held in zip(weights, holding, strict=True) if held) / total if total else 0.0,
        "rivals": math.log1p(len(rivals)),
    }


def _retrieval(scores: Sequence[float], rank: int) -> dict[str, float]:
    values = [float(score) for score in scores if score is not None]
    if not values or values[0] <= 0:
        return {"retrieval_gap": 0.0, "retrieval_ratio": 0.0}
    gap = (values[0] - values[1]) / values[0] if len(values) > 1 else 1.0
    ratio = values[rank] / values[0] if 0 <= rank < len(values) else 0.0
    return {"retrieval_gap": min(max(gap, 0.0), 1.0), "retrieval_ratio": min(max(ratio, 0.0), 1.0)}


def _meaning(question: str, sentence: str, span: str, model: Any) -> dict[str, float]:
    if model is None or not span:
        return {"span_cosine": 0.0, "cosine_drop": 0.0}
    asked = model.embed_one(question)
    texts = [span]
    if sentence and span.lower() in sentence.lower():
        at = sentence.lower().find(span.lower())
        texts += [sentence, (sentence[:at] + sentence[at + len(span) :]).strip() or "."]
    vectors = model.embed(texts)
    cosines = vectors @ asked
    drop = float(cosines[1] - cosines[2]) if len(texts) == 3 else 0.0
    return {"span_cosine": float(cosines[0]), "cosine_drop": drop}
