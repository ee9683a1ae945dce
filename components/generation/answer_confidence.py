"""How likely a part's short answer is right: a logistic model over what the answer generator already knows.

The extractive answer's short answer (a name, date, number, place or phrase) is shown as the answer's headline only
when its confidence reaches a threshold; below it, the answer opens with its best cited sentence and says it is not
sure of the short answer. The confidence is the probability, from a logistic regression fitted on labelled
questions (`research fit answer`), that the part's short answer matches a gold answer (token F1 >= 0.5).

The features (`part_features`) are general properties of how the answer was found, never its wording: the chosen
sentence's score, its margin over the runner-up, its cosine to the question and its chunk's rank; whether the span
is an entity of the asked kind; how the span was found; how many of the top chunks name it; whether the graph names
it; what the question asks for; how many parts it has; and the span's length and overlap with the question.

The fitted model lives in a small versioned JSON file (`answer_confidence.json` beside this module by default):
`{"version", "features", "mean", "scale", "coef", "intercept", "threshold", "fitted_from", "command", ...}`.

Usage:
```python
model = AnswerConfidence.load()  # the packaged file
model.probability(part_features(...)) >= model.threshold
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.generation import logistic_model
from components.generation.answer_evidence import EVIDENCE_FEATURES
from components.text.analyzer import stem, terms, words

MODEL_VERSION = 1
DEFAULT_MODEL_PATH = Path(__file__).with_name("answer_confidence.json")

# How a part's short answer was found.
FOUND_BY = ("entity", "role", "phrase", "chain", "verdict", "subject")
# The kinds of verdict, by how they are read (`comparison.Verdict.kind`): the option a "which ..., A or B?" question
# picks by what each option's own sentences say; the yes or no of a question asked of several subjects alike ("Are A
# and B both ...?", "... the same ...?"), each read in its own sentences; the yes or no of any other yes/no question
# (one subject, or a relation between subjects that one sentence must state).
CHOICE, BOTH, YES_NO = "choice", "both", "yes_no"
VERDICT_KINDS = (CHOICE, BOTH, YES_NO)

# What `part_features` reads of how the answer was found.
FOUND_FEATURES = (
    "score",  # the chosen sentence's score (term share, cosine, rank and the kind bonus)
    "margin",  # its score over the best other sentence's (0 when it stood alone)
    "cosine",  # the chosen sentence's cosine to the question
    "top_rank",  # 1 / (1 + rank of its chunk)
    "kind_match",  # 1: an entity of the kind asked first; 0.5: of another asked kind; 0: none
    "alternatives",  # log(1 + other entities of the asked kinds in the sentence)
    "share",  # share of the question's terms the sentence holds
    "distance",  # log(1 + words between the span and the nearest question word in its sentence)
    *(f"found_{how}" for how in FOUND_BY),
    "agreement",  # share of the top chunks that name the span
    "graph_support",  # a graph chunk names the span
    "asks_name",  # the part asks for an entity (a name, date, number or place)
    "asks_value",  # ... a date, time or quantity
    "asks_phrase",  # ... a phrase the wh-word stands for
    "parts",  # number of parts of the question, minus one
    "span_words",  # log(1 + words of the span)
    "span_asked",  # share of the span's terms the question already holds
)
# What the fitted span chooser (`span_choice`) says of the span it chose: its probability of being right and its lead
# over the best other candidate (absent for a span it does not read: a chain, a verdict, a chunk's
# subject; an absent feature reads as its mean).
SPAN_FEATURES = ("span_probability", "span_margin")
# Every feature a model may read: those, and whether the sentence answers and the span is its answer
# (`answer_evidence.evidence_features`).
FEATURES = FOUND_FEATURES + EVIDENCE_FEATURES + SPAN_FEATURES


def part_features(
    *,
    score: float,
    runner_up: float | None,
    cosine: float,
    rank: int,
    kind_match: float,
    alternatives: int,
    sentence: str,
    found_by: str,
    span: str,
    chunks: Sequence[tuple[str, str]],
    labels: Sequence[str],
    asks_phrase: bool,
    parts: int,
    question_terms: frozenset[str],
) -> dict[str, float]:
    """The features of one part's short answer.

    :param score: the chosen sentence's score; `runner_up`: the best other sentence's (None when there was none).
    :param cosine: the chosen sentence's cosine to the question; `rank`: its chunk's 0-based rank.
    :param kind_match: 1.0 for an entity of the part's first label, 0.5 another of its labels, 0.0 none.
    :param alternatives: the other entities of the asked kinds in the sentence.
    :param sentence: the sentence the span was taken from.
    :param found_by: how the span was found (one of `FOUND_BY`).
    :param span: the short answer.
    :param chunks: the top chunks as (text, source type).
    :param labels: the entity labels the part asks for; `asks_phrase`: it asks for a phrase instead.
    :param parts: the question's number of parts; `question_terms`: the question's terms.
    """
    if found_by not in FOUND_BY:
        raise ValueError(f"found_by must be one of {', '.join(FOUND_BY)}, not {found_by!r}")
    needle = " ".join(span.lower().split())
    naming = [source for text, source in chunks if needle and needle in " ".join(text.lower().split())]
    span_terms = frozenset(terms(span))
    sentence_terms = frozenset(terms(sentence))
    features = {
        "score": score,
        "margin": min(score - runner_up, 2.0) if runner_up is not None else 2.0,
        "cosine": cosine,
        "top_rank": 1.0 / (1 + rank),
        "kind_match": kind_match,
        "alternatives": math.log1p(alternatives),
        "share": len(sentence_terms & question_terms) / len(question_terms) if question_terms else 0.0,
        "distance": math.log1p(_distance(words(span), words(sentence), question_terms)),
        **{f"found_{how}": float(how == found_by) for how in FOUND_BY},
        "agreement": len(naming) / len(chunks) if chunks else 0.0,
        "graph_support": float("graph" in naming),
        "asks_name": float(bool(labels)),
        "asks_value": float(bool(labels) and labels[0] in VALUE_LABELS_ASKED),
        "asks_phrase": float(asks_phrase and not labels),
        "parts": float(parts - 1),
        "span_words": math.log1p(len(span.split())),
        "span_asked": len(span_terms & question_terms) / len(span_terms) if span_terms else 0.0,
    }
    return features


FAR = 30  # the distance of a span its sentence does not hold, or a sentence without the question's words


def _distance(span: list[str], sentence: list[str], question_terms: frozenset[str]) -> int:
    """Words between the span's first occurrence in the sentence and the nearest of the question's words outside it
    (`FAR` when the sentence does not hold the span or none of those words)."""
    starts = [i for i in range(len(sentence) - len(span) + 1) if span and sentence[i : i + len(span)] == span]
    if not starts:
        return FAR
    start, end = starts[0], starts[0] + len(span) - 1
    gaps = [
        start - i if i < start else i - end
        for i, word in enumerate(sentence)
        if not start <= i <= end and stem(word) in question_terms
    ]
    return min([FAR, *gaps])


VALUE_LABELS_ASKED = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})


class ConfidenceModelError(ValueError):
    """A confidence model file that cannot be used; the message says why."""


@dataclass(frozen=True)
class AnswerConfidence(logistic_model.LogisticModel):
    """A fitted logistic model: `probability(features)` that the short answer these features describe is right, and
    the `threshold` a headline must reach. A feature that is absent (the span model's, for a span it did not read)
    or not a finite number reads as its mean (it neither raises nor lowers the confidence): NaN must never make a
    headline sure."""

    threshold: float

    WHAT = "confidence model"
    VERSION = MODEL_VERSION
    KNOWN = FEATURES
    ERROR = ConfidenceModelError
    DEFAULT_PATH = DEFAULT_MODEL_PATH
    NUMBERS = ("intercept", "threshold")
    ABSENT_READS_AS_MEAN = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerConfidence:
        """The model a file holds, its measured verdicts (`verdicts`, optional) checked too."""
        model = super().from_dict(data)
        verdicts = model.meta.get("verdicts")
        if verdicts is None:
            return model
        if not isinstance(verdicts, Mapping) or not isinstance(verdicts.get("kinds"), Mapping):
            raise ConfidenceModelError(f"the {cls.WHAT}'s verdicts hold no kinds")
        for kind, counted in verdicts["kinds"].items():
            if kind not in VERDICT_KINDS:
                raise ConfidenceModelError(f"the {cls.WHAT} measures an unknown kind of verdict: {kind!r}")
            probability = counted.get("probability") if isinstance(counted, Mapping) else None
            if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
                raise ConfidenceModelError(f"the {cls.WHAT}'s {kind!r} verdicts have no probability between 0 and 1")
        return model

    def verdict_probability(self, kind: str) -> float | None:
        """How often a verdict of `kind` (`VERDICT_KINDS`) was right on labelled questions (`research fit verdicts`),
        or None when the file measured none of that kind (the model's probability stands)."""
        counted = ((self.meta.get("verdicts") or {}).get("kinds") or {}).get(kind)
        return None if counted is None else float(counted["probability"])


def fit(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[bool],
    threshold: float,
    features: Sequence[str] = FEATURES,
    c: float = 1.0,
    meta: Mapping[str, Any] | None = None,
    binary_unscaled: bool = False,
) -> AnswerConfidence:
    """A logistic regression (scikit-learn, standardised features, L2 with strength `1/c`) fitted to `rows`
    labelled right (True) or wrong; both labels must occur. `binary_unscaled`: see `logistic_model.fit_standardised`."""
    import numpy as np

    logistic_model.check_labels(rows, labels, "short answers")
    matrix = np.array([[float(row.get(name, math.nan)) for name in features] for row in rows])
    # An absent feature (the span model's, for a span it did not read) is its column's mean, as `probability` reads it.
    present = np.isfinite(matrix)
    mean = np.array([column[ok].mean() if ok.any() else 0.0 for column, ok in zip(matrix.T, present.T, strict=True)])
    matrix = np.where(present, matrix, mean)
    return AnswerConfidence(
        tuple(features),
        *logistic_model.fit_standardised(matrix, mean, labels, c, max_iter=1000, binary_unscaled=binary_unscaled),
        meta={"version": MODEL_VERSION, **(meta or {})},
        threshold=float(threshold),
    )
