"""How sure the extractor is of an event fact: the probability that it is a real, correctly dated event of its entity.

`event_features` describes one entity's part in one sentence's event with what the extractor already knows: how
the date was found (a full date, a month, a year, a relative date resolved against the document's date, the day the
story just named, or only the document's date), the entity's role, the predicate (a saying, a copula, another
verb), how far the entity is from the date and from the predicate, the sentence's length and its number of dates,
its tense and modality (future, modal, negated, reported), whether the entity is quoted, and how sure its kind is.
None of them names a word of a text's subject.

`EventConfidenceModel` is a logistic regression over them, fitted by `pipelines.evaluation.event_confidence` on
labelled timelines and shipped in `event_confidence.json` with the threshold chosen on the check set: the timeline
and the graph branch keep the facts at or above it by default and list the others as less certain.

Usage:
```python
model = default_event_model()
model.probability(event_features(sentence_span, token, "nsubj", dates, event_dates, when, anchor, 0.9))
```
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from components.graph.dates import DateMention, FuzzyDate
from components.model_files import read_json_object

MODEL_PATH = Path(__file__).with_name("event_confidence.json")

# How the fact's date was found.
DATE_SOURCES = ("day", "month", "year", "relative", "context", "document")
# The entity's part in the event (see `_role_class`).
ROLES = ("subject", "passive", "object", "prepositional", "reference", "other")
PREDICATES = ("saying", "copula", "verb", "none")
_SAYING = {"say", "claim", "state", "report", "tell", "announce", "confirm", "insist", "add", "note", "explain"}
_MODALS = {"would", "could", "might", "may", "should", "must", "can"}
_FUTURES = {"will", "shall", "'ll"}
_QUOTES = {'"', "``", "''", "“", "”"}

FEATURES: tuple[str, ...] = (
    *(f"date:{source}" for source in DATE_SOURCES),
    "date:own_predicate",
    *(f"role:{role}" for role in ROLES),
    *(f"predicate:{kind}" for kind in PREDICATES),
    "tense:past",
    "tense:future",
    "modal",
    "negated",
    "reported",
    "quoted",
    "sentence_has_quote",
    "log_sentence_tokens",
    "dates_in_sentence",
    "log_date_distance",
    "log_predicate_distance",
    "log_days_from_document",
    "after_document",
    "kind_confidence",
    "subordinate",
    "role_links",
    "participants",
    "log_entity_mentions",
    "first_named",
    "log_clauses",
)


def _log(value: float) -> float:
    return math.log1p(max(0.0, value))


def _role_class(role: str) -> str:
    """A role string of the extractor ("nsubj", "poss>dobj", "ref:nsubj", "pobj:VERB", "event"; "title" for a name of
    a headline the parse gives no role) as one of `ROLES`."""
    if role.startswith("ref:") or role == "event":
        return "reference"
    last = role.split(">")[-1].split(":")[0]
    if last in ("nsubj", "csubj", "ROOT"):
        return "subject"
    if last in ("nsubjpass", "agent"):
        return "passive"
    if last in ("dobj", "obj", "iobj", "dative", "attr", "oprd"):
        return "object"
    if last == "pobj":
        return "prepositional"
    return "other"


def _predicate(token: Any) -> Any:
    """The verb whose clause holds `token`, else the sentence's root."""
    while token.pos_ not in ("VERB", "AUX") and token.head.i != token.i:
        token = token.head
    return token


def _date_source(method: str, valid: FuzzyDate | None) -> str:
    if method in ("relative", "context", "document"):
        return method
    if method == "stated" and valid is not None:
        return valid.precision
    return "document"


def event_features(
    sentence: Any,
    token: Any,
    role: str,
    dates: list[DateMention],
    event_dates: list[DateMention],
    when: tuple[FuzzyDate | None, FuzzyDate | None, str],
    anchor: dt.date | None,
    kind_confidence: float,
    *,
    headline: bool = False,
    participants: int = 1,
    entity_mentions: int = 1,
    first_named: bool = True,
) -> dict[str, float]:
    """The features of the event the entity named by `token` (its role `role`) takes part in, in the spaCy span
    `sentence` whose `dates` are all its date mentions, `event_dates` those dating this entity's event, and `when`
    (valid_at, invalid_at, date_method) the fact's date; `anchor` is the document's date. The rest describe the
    sentence and the entity in its document: whether the sentence is the headline, how many entities take part in
    it, how often the document names the entity and whether it is the first of them the sentence names."""
    valid, _, method = when
    features: dict[str, float] = {f"date:{_date_source(method, valid)}": 1.0}
    features["date:own_predicate"] = float(bool(event_dates) and len(event_dates) < len(dates))
    features[f"role:{_role_class(role)}"] = 1.0
    verb = _predicate(token) if token is not None else sentence.root
    lemma = verb.lemma_.lower()
    if verb.pos_ not in ("VERB", "AUX"):
        features["predicate:none"] = 1.0
    elif lemma in _SAYING:
        features["predicate:saying"] = 1.0
    elif lemma in ("be", "have") and not any(c.dep_ in ("aux", "auxpass") for c in verb.children):
        features["predicate:copula"] = 1.0
    else:
        features["predicate:verb"] = 1.0
    helpers = [verb, *(c for c in verb.children if c.dep_ in ("aux", "auxpass"))]
    features["tense:future"] = float(any(t.lower_ in _FUTURES for t in helpers))
    features["modal"] = float(any(t.lower_ in _MODALS for t in helpers))
    features["tense:past"] = float(
        not features["tense:future"]
        and any("Past" in t.morph.get("Tense") or t.tag_ in ("VBD", "VBN") for t in helpers)
    )
    features["negated"] = float(any(c.dep_ == "neg" for c in verb.children))
    # Reported: the predicate is the content of a saying ("said that it would ...").
    head = verb
    reported = False
    while head.head.i != head.i:
        if head.dep_ in ("ccomp", "parataxis") and head.head.lemma_.lower() in _SAYING:
            reported = True
            break
        head = head.head
    features["reported"] = float(reported)
    marks = [t.i for t in sentence if t.text in _QUOTES]
    features["sentence_has_quote"] = float(bool(marks))
    if token is not None and len(marks) >= 2:
        features["quoted"] = float(any(a < token.i < b for a, b in zip(marks[::2], marks[1::2], strict=False)))
    words = [t for t in sentence if not t.is_punct and not t.is_space]
    features["log_sentence_tokens"] = _log(len(words))
    features["dates_in_sentence"] = float(min(len(dates), 4))
    if token is not None:
        starts = [sentence.start_char + mention.start for mention in event_dates or dates]
        positions = [next((t.i for t in sentence if t.idx >= start), sentence.end) for start in starts]
        if positions:
            features["log_date_distance"] = _log(min(abs(token.i - i) for i in positions))
        features["log_predicate_distance"] = _log(abs(token.i - verb.i))
    if valid is not None and anchor is not None and method not in ("document", "none"):
        days = (anchor - valid.value).days
        features["log_days_from_document"] = _log(abs(days))
        features["after_document"] = float(valid.value > anchor)
    features["kind_confidence"] = float(kind_confidence)
    features["headline"] = float(headline)  # not a model feature: what a gold set annotates there differs
    # A predicate inside a clause of another (a relative clause, an adverbial clause, a complement) tells a
    # circumstance of the sentence's event, or a reported one.
    features["subordinate"] = float(
        any(t.dep_ in ("relcl", "acl", "advcl", "ccomp", "xcomp", "pcomp") for t in [verb, *verb.ancestors])
    )
    features["role_links"] = float(min(role.count(">"), 3))
    features["participants"] = float(min(participants, 4))
    features["log_entity_mentions"] = _log(entity_mentions)
    features["first_named"] = float(first_named)
    features["log_clauses"] = _log(sum(1 for t in sentence if t.pos_ == "VERB"))
    return features


def complete_features(features: dict[str, float], mention: Any) -> dict[str, float]:
    """`features` with the kind confidence of the entity (`EntityMention`, None when unknown) filled in: it is
    decided once the whole document is read."""
    if mention is None:
        return dict(features)
    return {**features, "kind_confidence": float(mention.confidence)}


def fact_confidence(model: EventConfidenceModel, participants: list[dict[str, float]]) -> float:
    """A fact's confidence: the probability of its surest participant's event (0 for a fact with none, which no
    timeline lists)."""
    return round(max((model.probability(f) for f in participants), default=0.0), 4)


def vector(features: dict[str, float]) -> list[float]:
    """`features` in the order of `FEATURES` (absent ones 0)."""
    return [float(features.get(name, 0.0)) for name in FEATURES]


@dataclass
class EventConfidenceModel:
    """A fitted logistic regression over `FEATURES` (standardised by `mean`/`scale`) and the threshold the timeline
    and the graph branch keep facts from."""

    features: list[str]
    coef: list[float]
    intercept: float
    mean: list[float]
    scale: list[float]
    threshold: float
    version: str = ""

    def probability(self, features: dict[str, float]) -> float:
        """The probability that the event these features describe is real and correctly dated."""
        z = self.intercept
        for name, weight, mean, scale in zip(self.features, self.coef, self.mean, self.scale, strict=True):
            z += weight * (float(features.get(name, 0.0)) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def load(cls, path: Path | str = MODEL_PATH) -> EventConfidenceModel:
        """The model written by the fitting script at `path`; ValueError with one sentence when it cannot be read."""
        data = read_json_object(path, "event-confidence model")
        try:
            model = cls(
                features=list(data["features"]),
                coef=[float(x) for x in data["coef"]],
                intercept=float(data["intercept"]),
                mean=[float(x) for x in data["mean"]],
                scale=[float(x) for x in data["scale"]],
                threshold=float(data["threshold"]),
                version=str(data.get("version", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path} is not a readable event-confidence model: {exc}") from exc
        if not len(model.features) == len(model.coef) == len(model.mean) == len(model.scale):
            raise ValueError(f"{path} is not a readable event-confidence model: its lists differ in length")
        if not 0.0 <= model.threshold <= 1.0:
            raise ValueError(f"{path} is not a readable event-confidence model: its threshold is not in 0-1")
        return model


@lru_cache(maxsize=1)
def default_event_model() -> EventConfidenceModel | None:
    """The shipped model (`event_confidence.json`), loaded once; None before one is fitted."""
    return EventConfidenceModel.load() if MODEL_PATH.exists() else None


def default_threshold() -> float:
    """The shipped model's threshold (0 without a model: every fact is kept)."""
    model = default_event_model()
    return model.threshold if model is not None else 0.0


def check_min_confidence(value: Any) -> float | None:
    """A `min_event_confidence` init parameter: None (the shipped model's threshold) or a number in 0-1;
    ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"min_event_confidence must be a number between 0 and 1, or null, not {value!r}")
    return float(value)


def is_certain(confidence: float | None, threshold: float) -> bool:
    """True when a fact with this confidence is kept at `threshold` (a fact no model scored always is)."""
    return confidence is None or confidence >= threshold
