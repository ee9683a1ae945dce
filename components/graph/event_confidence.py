"""How sure the extractor is of an event fact: the probability that it is a real, correctly dated event of its entity.

`event_features` describes one entity's part in one sentence's event with what the extractor already knows: how
the date was found (a full date, a month, a year, a relative date resolved against the document's date, the day the
story just named, or only the document's date), the entity's role, the predicate (a saying, a copula, another
verb), how far the entity is from the date and from the predicate, the sentence's length and its number of dates,
its tense and modality (future, modal, negated, reported), whether the entity is quoted, and how sure its kind is.
None of them names a word of a text's subject.

The features come in families (`FAMILIES`): besides the first model's, the entity's part in the sentence's main
event (`participation`), how little the sentence looks like prose (`line`), its place in the document
(`position`), whether a date modifies the entity's own clause (`date_clause`), the entity as the one who says
(`saying`), and an intended or hypothetical event (`modality`). A fitted model uses the families its fitting kept.

`EventConfidenceModel` is a logistic regression over them, fitted by `pipelines.evaluation.event_confidence` on
labelled timelines and shipped in `event_confidence.json` with the threshold chosen on the tune set (out of fold):
the timeline and the graph branch keep the facts at or above it by default and list the others as less certain.

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

# The features of the first fitted model (`events-1`).
BASE_FEATURES: tuple[str, ...] = (
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

# Families of features a fitted model may add to `BASE_FEATURES`, each from the parse the extractor already has.
FAMILIES: dict[str, tuple[str, ...]] = {
    # `BASE_FEATURES` in families of their own.
    "date": (
        *(f"date:{source}" for source in DATE_SOURCES),
        "date:own_predicate",
        "dates_in_sentence",
        "log_days_from_document",
        "after_document",
    ),
    "role": (*(f"role:{role}" for role in ROLES), "role_links", "participants", "first_named"),
    "predicate": (*(f"predicate:{kind}" for kind in PREDICATES), "tense:past", "tense:future", "modal", "negated"),
    "speech": ("reported", "quoted", "sentence_has_quote", "subordinate"),
    "distance": ("log_date_distance", "log_predicate_distance"),
    "sentence": ("log_sentence_tokens", "log_clauses"),
    "entity": ("kind_confidence", "log_entity_mentions"),
    # Whether the entity takes part in the sentence's main event: a subject, object or prepositional object of the
    # sentence's root (its subject in particular), or only attached to a noun ("a statement from X", "X's plant"),
    # and how many dependency links separate it from its predicate and from the root.
    "participation": (
        "main_participant",
        "main_subject",
        "noun_attached",
        "predicate_is_root",
        "log_tree_distance",
        "log_root_distance",
    ),
    # A line that is not a sentence: no finite verb, most words capitalised, many numbers, no closing mark.
    "line": ("no_finite_verb", "capitalised_share", "number_share", "unclosed"),
    # Where the sentence stands in its document.
    "position": ("log_position", "position_share"),
    # Whether a date of the sentence modifies the entity's own clause, or only another clause.
    "date_clause": ("date_same_clause", "date_other_clause"),
    # The entity as the one who says something, and a sentence that as a whole reports a saying.
    "saying": ("sayer", "root_saying"),
    # An intended, planned or hypothetical event ("agreed to buy", "plans to open", "if ..."), a question, the present.
    "modality": ("infinitive", "conditional", "question", "tense:present"),
}
BASE_FAMILIES = ("date", "role", "predicate", "speech", "distance", "sentence", "entity")
FEATURES: tuple[str, ...] = tuple(name for names in FAMILIES.values() for name in names)


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
    position: int = 0,
    sentences: int = 1,
) -> dict[str, float]:
    """The features of the event the entity named by `token` (its role `role`) takes part in, in the spaCy span
    `sentence` whose `dates` are all its date mentions, `event_dates` those dating this entity's event, and `when`
    (valid_at, invalid_at, date_method) the fact's date; `anchor` is the document's date. The rest describe the
    sentence and the entity in its document: whether the sentence is the headline, how many entities take part in
    it, how often the document names the entity and whether it is the first of them the sentence names, and the
    sentence's `position` (0 first) among the document's `sentences`."""
    valid, _, method = when
    # A headline borrows the lead sentence's subject: its token lies in another sentence (often another parse), where
    # its place says nothing of this sentence's dates, quotes or root.
    inside = token is not None and token.doc is sentence.doc and sentence.start <= token.i < sentence.end
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
    if inside and len(marks) >= 2:
        features["quoted"] = float(any(a < token.i < b for a, b in zip(marks[::2], marks[1::2], strict=False)))
    words = [t for t in sentence if not t.is_punct and not t.is_space]
    features["log_sentence_tokens"] = _log(len(words))
    features["dates_in_sentence"] = float(min(len(dates), 4))
    if token is not None:
        positions = _date_tokens(sentence, event_dates or dates)
        if positions and inside:
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
    features.update(_participation(sentence, token, verb))
    features.update(_line_shape(sentence, words))
    features["log_position"] = _log(position)
    features["position_share"] = position / max(1, sentences - 1) if sentences > 1 else 0.0
    if token is not None and dates:
        clauses = {_predicate(sentence.doc[min(i, sentence.end - 1)]).i for i in _date_tokens(sentence, dates)}
        features["date_same_clause"] = float(inside and verb.i in clauses)
        features["date_other_clause"] = 1.0 - features["date_same_clause"]
    root = sentence.root
    features["root_saying"] = float(root.pos_ in ("VERB", "AUX") and root.lemma_.lower() in _SAYING)
    features["sayer"] = float(
        features.get("predicate:saying", 0.0) == 1.0 and _role_class(role) in ("subject", "reference")
    )
    features.update(_modality(sentence, verb))
    return features


def _name_head(token: Any) -> Any:
    """The token heading the name `token` is part of ("Brask" of "Brask Optics" -> "Optics"), and through a
    possessive or an apposition the noun the name stands for in the clause."""
    while token.dep_ in ("compound", "flat", "appos", "poss", "nmod") and token.head.i != token.i:
        token = token.head
    return token


def _participation(sentence: Any, token: Any, verb: Any) -> dict[str, float]:
    """Whether the entity (`token`) is a subject, object or prepositional object of the sentence's root (the main
    event), whether its own predicate `verb` is that root, and its dependency distances to the predicate and root."""
    root = sentence.root
    features = {"predicate_is_root": float(verb == root)}  # tokens of one parse only are equal
    if token is None:
        return features
    head = _name_head(token)
    if head.dep_ in ("pobj", "pcomp") and head.head.dep_ in ("prep", "agent"):
        head = head.head
    features["main_participant"] = float(
        head == root
        or (head.head == root and head.dep_ in ("nsubj", "nsubjpass", "dobj", "dative", "attr", "prep", "agent"))
    )
    features["main_subject"] = float(head.head == root and head.dep_ in ("nsubj", "nsubjpass"))
    node = token
    while node.dep_ in ("compound", "flat") and node.head.i != node.i:
        node = node.head  # the name's last word
    while node.i != verb.i and node.head.i != node.i:
        node = node.head
        if node.i != verb.i and node.pos_ in ("NOUN", "PROPN", "PRON"):
            features["noun_attached"] = 1.0
            break
    links, node = 0, token
    while node.i != verb.i and node.head.i != node.i:
        node, links = node.head, links + 1
    features["log_tree_distance"] = _log(links)
    links, node = 0, token
    while node.head.i != node.i:
        node, links = node.head, links + 1
    features["log_root_distance"] = _log(links)
    return features


def _line_shape(sentence: Any, words: list[Any]) -> dict[str, float]:
    """How little the sentence looks like running prose: a headline, a list item or a table row."""
    alphabetic = [t for t in words if t.is_alpha]
    text = sentence.text.rstrip()
    return {
        "no_finite_verb": float(not any("Fin" in t.morph.get("VerbForm") for t in sentence)),
        "capitalised_share": sum(t.text[:1].isupper() for t in alphabetic) / len(alphabetic) if alphabetic else 0.0,
        "number_share": sum(t.like_num for t in words) / len(words) if words else 0.0,
        "unclosed": float(not text.endswith((".", "!", "?", '"', "'", "”", ")"))),
    }


def _date_tokens(sentence: Any, dates: list[DateMention]) -> list[int]:
    """The index of the first token of each date mention of `sentence`."""
    starts = [sentence.start_char + mention.start for mention in dates]
    return [next((t.i for t in sentence if t.idx >= start), sentence.end) for start in starts]


def _modality(sentence: Any, verb: Any) -> dict[str, float]:
    """An event not (yet) told as having happened: a to-infinitive ("agreed to buy", "plans to open"), a clause in
    or under a condition, a question; and a present-tense predicate."""
    helpers = [verb, *(c for c in verb.children if c.dep_ in ("aux", "auxpass"))]
    clauses = [verb, *verb.ancestors]
    finite = [t for t in helpers if "Fin" in t.morph.get("VerbForm")]
    return {
        "infinitive": float(
            any(t.tag_ == "TO" for t in helpers)
            or verb.dep_ == "xcomp"
            or any(c.dep_ == "xcomp" and any(t.tag_ == "TO" for t in c.children) for c in verb.children)
        ),
        "conditional": float(
            any(c.dep_ == "mark" and c.lower_ in ("if", "unless") for clause in clauses for c in clause.children)
        ),
        "question": float(sentence.text.rstrip().endswith("?")),
        "tense:present": float(bool(finite) and all("Pres" in t.morph.get("Tense") for t in finite)),
    }


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


def vector(features: dict[str, float], names: tuple[str, ...] | list[str] = FEATURES) -> list[float]:
    """`features` in the order of `names` (`FEATURES` by default; absent ones 0)."""
    return [float(features.get(name, 0.0)) for name in names]


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
        for share in self.contributions(features).values():
            z += share
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def contributions(self, features: dict[str, float]) -> dict[str, float]:
        """Each feature's share of the log-odds of `features` against an average fact (weight times standardised
        value): negative ones push the event down, positive ones up."""
        return {
            name: weight * (float(features.get(name, 0.0)) - mean) / (scale or 1.0)
            for name, weight, mean, scale in zip(self.features, self.coef, self.mean, self.scale, strict=True)
        }

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
        if not all(math.isfinite(x) for x in (model.intercept, *model.coef, *model.mean, *model.scale)):
            # JSON lets NaN through, and a NaN weight would make every fact certain.
            raise ValueError(f"{path} is not a readable event-confidence model: it holds a number that is not finite")
        unknown = [name for name in model.features if name not in FEATURES]
        if unknown:
            raise ValueError(
                f"{path} is not a readable event-confidence model: the extractor computes no {', '.join(unknown)}"
            )
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
