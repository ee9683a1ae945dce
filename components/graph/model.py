"""The graph's data: entities, dated facts with their attribution, and what one document contributes.

Plain dataclasses shared by the extractors, both stores and the components; the stores translate them to rows or
nodes, the components to `ContextChunk`s (source_type `graph`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from components.graph.dates import FuzzyDate

ENTITY_KINDS = ("person", "organization", "place", "product", "work", "event", "other")

_NAMESPACE = uuid.UUID("6f1d0c52-4f3e-4c1b-9a57-3f0e2b7d9c11")

# Legal and generic company designators: "Nordvik Aviation Ltd.", "Nordvik Aviation Group" and "Nordvik Aviation"
# are one organisation.
DESIGNATORS = set(
    "inc incorporated corp corporation co company ltd limited llc llp plc gmbh ag sa se nv bv spa srl oy ab pty "
    "holdings group solutions technologies labs".split()
)


@lru_cache(maxsize=65536)
def normalise_name(name: str) -> str:
    """The key two mentions of one entity share: case, accents, punctuation, possessives and "Inc."-style
    suffixes removed ("Nordvik Inc." -> "nordvik", "The Halden Company" -> "halden", "AT&T" -> "at&t")."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"['’]s\b", "", text)
    text = re.sub(r"(?<=\w)\.(?=\w)|\.$", "", text)  # "S.A." -> "sa", "Inc." -> "inc"
    text = re.sub(r"[^\w&+ ]+", " ", text)
    words = text.split()
    if words and words[0] == "the" and len(words) > 1:
        words = words[1:]
    while len(words) > 1 and words[-1] in DESIGNATORS:
        words.pop()
    return " ".join(words)


def name_grams(text: str) -> list[str]:
    """The word n-grams (up to four words) of `text`'s normalised form, sorted: the entity keys it may name."""
    words = normalise_name(text).split()
    return sorted({" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + 4) + 1)})


def entity_uuid(key: str) -> str:
    """The stable id of the entity whose normalised name is `key` (the same in every backend and process)."""
    return str(uuid.uuid5(_NAMESPACE, "entity:" + key))


def fact_uuid(document_id: str, sentence_index: int, text: str) -> str:
    """The stable id of a fact: its document, its place there and its text."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
    return str(uuid.uuid5(_NAMESPACE, f"fact:{document_id}:{sentence_index}:{digest}"))


@dataclass
class Entity:
    """A named entity: a person, organisation, place, product or event."""

    uuid: str
    name: str
    kind: str = "other"
    aliases: list[str] = field(default_factory=list)
    fact_count: int = 0
    confidence: float | None = None  # the kind's probability, where the read gives it

    @property
    def key(self) -> str:
        return normalise_name(self.name)


@dataclass
class EntityMention:
    """An entity as one document names it: the surface name, its key, kind, and the other names it goes by."""

    key: str
    name: str
    kind: str = "other"
    aliases: set[str] = field(default_factory=set)  # normalised keys
    confidence: float = 0.0  # the kind's probability
    evidence: str = ""  # what the kind was decided from
    reasons: dict[str, str] = field(default_factory=dict)  # alias key -> why it names this entity
    kind_evidence: Any = field(default=None, repr=False, compare=False)  # the `KindEvidence` it was decided from

    @property
    def uuid(self) -> str:
        return entity_uuid(self.key)


@dataclass
class Fact:
    """A sentence-level statement about one or more entities, with when it held and where it was read."""

    uuid: str
    text: str
    document_id: str
    sentence_index: int
    entity_keys: list[str]
    valid_at: FuzzyDate | None = None
    invalid_at: FuzzyDate | None = None
    date_method: str = "document"  # stated | relative | document | none | llm
    chunk_id: str | None = None
    chunk_index: int | None = None
    document_title: str = ""
    document_url: str | None = None
    document_date: dt.date | None = None
    entity_names: list[str] = field(default_factory=list)
    entity_uuids: list[str] = field(default_factory=list)
    # Each entity's kind as the graph decided it (`kinds.KindModel`: "other" when unsure), in `entity_names` order.
    entity_kinds: list[str] = field(default_factory=list)
    # Entities the sentence names without taking part in its event ("Nordvik employees protested"): not on their
    # timelines, but the retrieval walk links the passage to them (retrieval needs mentions).
    mention_keys: list[str] = field(default_factory=list)
    # How sure the extractor is that this is a real, correctly dated event of its entities (0-1; None: not scored).
    confidence: float | None = None
    # Each participant's event features, as the extractor read them (not stored).
    event_features: dict[str, dict[str, float]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of_sentence(
        cls,
        document: Any,
        index: int,
        text: str,
        chunk: Any,
        entity_keys: list[str],
        entity_names: list[str],
        when: tuple[FuzzyDate | None, FuzzyDate | None, str],
        *,
        title: str,
        anchor: dt.date | None,
        mention_keys: list[str] | None = None,
        variant: int = 0,
    ) -> Fact:
        """The fact sentence `index` (`text`) of `document` states, read in `chunk` (None when no chunk holds it), with
        `when` = (valid_at, invalid_at, date_method); the same sentence's further events at other times are variants
        1, 2, ... (each its own id). Both extractors build their facts here."""
        document_id = str(document.document_id)
        valid_at, invalid_at, date_method = when
        return cls(
            uuid=fact_uuid(document_id, index, text if variant == 0 else f"{text}#{variant}"),
            text=text,
            document_id=document_id,
            sentence_index=index,
            entity_keys=entity_keys,
            valid_at=valid_at,
            invalid_at=invalid_at,
            date_method=date_method,
            chunk_id=getattr(chunk, "chunk_id", None),
            chunk_index=getattr(chunk, "chunk_index", None),
            document_title=title,
            document_url=getattr(document, "url", None),
            document_date=anchor,
            entity_names=entity_names,
            mention_keys=list(mention_keys or []),
        )

    @property
    def source_node_uuid(self) -> str | None:
        """The entity the fact is first about (the edge's source node)."""
        if self.entity_uuids:
            return self.entity_uuids[0]
        return entity_uuid(self.entity_keys[0]) if self.entity_keys else None

    def contract(self) -> dict[str, Any]:
        """The tool-contract shape: fact, uuid, valid_at, invalid_at, source_node_uuid (plus attribution)."""
        return {
            "fact": self.text,
            "uuid": self.uuid,
            "valid_at": self.valid_at.iso() if self.valid_at else None,
            "invalid_at": self.invalid_at.iso() if self.invalid_at else None,
            "source_node_uuid": self.source_node_uuid,
            "entities": list(self.entity_names),
            "entity_kinds": list(self.entity_kinds),
            "document_id": self.document_id,
            "document_title": self.document_title,
            "chunk_id": self.chunk_id,
            "sentence_index": self.sentence_index,
            "date_method": self.date_method,
            # Only the document's date dates it: not an event on that date (`as_of` still counts it from then).
            "undated": self.date_method in ("document", "none") or self.valid_at is None,
            "document_url": self.document_url,
            "document_date": self.document_date.isoformat() if self.document_date else None,
            "confidence": self.confidence,
        }


@dataclass
class DocumentGraph:
    """Everything one document contributes to the graph; replacing a document replaces exactly this."""

    document_id: str
    entities: list[EntityMention] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    extractor: str = ""  # the extractor's version stamp ("spacy/spacy-1"): an older one is re-extracted
    # The mark of the text and chunks it was extracted from (see `ingest_hook.source_mark`; "": not known): a failed
    # re-extraction of the same text keeps this graph, one of a changed text removes it.
    source: str = ""


@dataclass
class EntityMatch:
    """An entity an entity search found: how its name or an alias matched the query (`match`: exact, alias,
    prefix, contains, within, mention or fuzzy), how well (`score`, 0-1), the name that matched, and the dates of its
    first and last dated facts (`fact_count` on `entity` counts the facts the search considered)."""

    entity: Entity
    match: str
    score: float
    matched: str = ""
    first_date: FuzzyDate | None = None
    last_date: FuzzyDate | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entity search's contract shape."""
        return {
            "uuid": self.entity.uuid,
            "name": self.entity.name,
            "type": self.entity.kind,
            "aliases": list(self.entity.aliases),
            "fact_count": self.entity.fact_count,
            "first_fact_date": self.first_date.iso() if self.first_date else None,
            "last_fact_date": self.last_date.iso() if self.last_date else None,
            "score": self.score,
            "match": self.match,
            "matched": self.matched,
        }


@dataclass
class FactHit:
    """A fact found by a search, with a 0-1 score (`hop` for traversals: 1 = a direct relationship)."""

    fact: Fact
    score: float = 0.0
    hop: int = 0
