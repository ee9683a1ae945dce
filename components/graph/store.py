"""The one graph-store interface and all the logic the two backends share.

A store holds entities (with aliases), facts (a sentence, its dates, its document, chunk and sentence), which
entities take part in each fact and which other names its sentence mentions. The embedded PostgreSQL store and the
Neo4j store differ only in their queries (`QUERIES`, the same names and parameters in SQL and in Cypher) and in how
they connect and run them; writing a document, ranking entity names, scoring searches and walking relationships
happen here, once. Replacing or deleting a document's facts happens in the caller's transaction where the backend
shares PostgreSQL with the knowledge base.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from components.database import DatabaseUnavailable
from components.graph.dates import FuzzyDate
from components.graph.model import DocumentGraph, Entity, EntityMatch, Fact, FactHit, name_grams, normalise_name
from components.serialization import InitParameterSerialization
from components.text.analyzer import STOP_WORDS
from components.validation import clamp

MAX_DEPTH = 5

# How an entity search can match, best first.
MATCH_KINDS = ("exact", "alias", "prefix", "contains", "within", "mention", "fuzzy")
# Candidates an entity search scores at most (the stores' queries stop there, most promising first).
MAX_ENTITY_CANDIDATES = 500
# A name at least this similar to the query (difflib ratio) is a fuzzy match.
FUZZY_MIN_RATIO = 0.75
# The words of a fact search's full-text part.
_WORD_RE = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class FactScope:
    """The knowledge base's document filters as they apply to facts: their documents and those documents' dates."""

    document_ids: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None


@dataclass(frozen=True)
class EntityPassageLinks:
    """What the retrieval walk needs of the graph, read in one statement: which entities each passage's facts
    name, as participants or mentions (`links`: entity uuid, chunk id or None, document id, number of facts) and the
    names and aliases the entities go by (`names`: normalised name or alias, entity uuid). A name that is only ever
    mentioned has no entity row: its id is "mention:" and its key."""

    links: tuple[tuple[str, str | None, str, int], ...]
    names: tuple[tuple[str, str], ...]


class GraphUnavailable(DatabaseUnavailable):
    """The graph backend cannot be opened or reached; the message says what to do (the CLI prints it alone)."""


class GraphNotFound(GraphUnavailable):
    """A collection named to be read has no graph; the message names the collections that have one."""


def table_prefix(collection: str) -> str:
    """The graph tables' prefix for a knowledge-base collection (so tests and collections never share a graph)."""
    safe = re.sub(r"[^a-z0-9_]", "_", collection.lower())
    if not safe or not re.match(r"[a-z_]", safe):
        raise ValueError(f"{collection!r} cannot name graph tables; use letters, digits and underscores")
    return f"{safe[:40]}_graph_"


def rank_entity_matches(name: str, candidates: list[Entity]) -> list[Entity]:
    """The entities `name` means, best first: exact name or alias, then more specific names holding every word of
    a name of two or more words ("Quillmoor store" -> "Quillmoor Music Store"; a one-word name is the head of too
    many others: "Quillmoor" is not "Quillmoor Records"), else the longest entity name inside it ("Saltmarsh
    Quillmoor Records" -> "Quillmoor Records")."""
    key = normalise_name(name)
    if not key:
        return []
    words = set(key.split())
    exact = [e for e in candidates if e.key == key or key in e.aliases]
    if not exact:
        # A misspelt name ("Royal Forest Servcie") is the name that differs from it by one slip in a long word.
        exact = [e for e in candidates if any(_one_slip(key, k) for k in (e.key, *e.aliases))]
    exact.sort(key=lambda e: (e.key != key, -e.fact_count))
    wider = [e for e in candidates if e not in exact and words <= set(e.key.split()) and (len(words) > 1 or not exact)]
    wider.sort(key=lambda e: (len(e.key.split()), -e.fact_count))
    if exact or wider:
        return exact + wider
    # The longest known name inside it ("Saltmarsh Quillmoor Records" -> "Quillmoor Records"), but never by dropping a
    # model number: "Halden 606" is not "Halden".
    inner = [
        e
        for e in candidates
        if set(e.key.split()) <= words and not any(re.search(r"\d", w) for w in words - set(e.key.split()))
    ]
    return [max(inner, key=lambda e: (len(e.key.split()), e.fact_count))] if inner else []


def _one_slip(query: str, name: str) -> bool:
    """True when two names of the same two or more words differ only by a slip in one of them (spelt nearly alike:
    "royal forest servcie" and "royal forest service")."""
    left, right = query.split(), name.split()
    if len(left) < 2 or len(left) != len(right):
        return False
    different = [(a, b) for a, b in zip(left, right, strict=True) if a != b]
    if len(different) != 1 or min(map(len, different[0])) < 4:
        return False
    return SequenceMatcher(None, *different[0]).ratio() >= 0.75


@dataclass(frozen=True)
class EntitySearchTerms:
    """What the stores look for when searching entities by name or text.

    `key` is the normalised query (an exact, alias or prefix match); `words` its words without the most common
    ones (names sharing a word are candidates: "Olsen" -> "Marta Olsen", and the names a free text mentions);
    `heads`/`tails` the first and last three letters of its longer words (names with a word sharing them are
    candidates for a fuzzy match: "Nordvki" -> "Nordvik").
    """

    key: str
    words: tuple[str, ...]
    heads: tuple[str, ...]
    tails: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> EntitySearchTerms:
        key = normalise_name(text)
        words = [word for word in dict.fromkeys(key.split()) if word not in STOP_WORDS]
        long_words = [word for word in words if len(word) >= 4]
        return cls(
            key=key,
            words=tuple(words),
            heads=tuple(sorted({word[:3] for word in long_words})),
            tails=tuple(sorted({word[-3:] for word in long_words})),
        )

    @property
    def like_prefix(self) -> str:
        """`key` as a LIKE pattern matching the names that start with it."""
        return self.key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def score_entity_match(key: str, names: list[str], aliases: list[str]) -> tuple[str, float, str] | None:
    """How well the normalised query `key` names an entity known by `names` (its name keys) and `aliases`: the
    kind of match, a 0-1 score and the name or alias that matched; None when it does not.

    Kinds and scores, best first: `exact` (1.0) the entity's name; `alias` (0.95) one of its aliases; `prefix`
    (0.8-0.9) a name or alias starts with the query, more for a whole word and for covering more of it; `contains`
    (0.65-0.75) every word of the query is a word of a name; `within` (0.55-0.65) the query is itself a longer name
    (no common words) holding every word of a name ("Orla Vennick" -> "Vennick", "Quillmark Tarrow" ->
    "Quillmark"); `mention` (0.5-0.6) the query, a free text, holds every word of a name; `fuzzy` (0.3-0.5) a name,
    or one of its words for a one-word query, is spelt nearly alike. A name made only of common or one-letter words
    ("us", "v") is never found inside a query: only the whole query can name it.
    """
    if not key:
        return None
    query_words = key.split()
    # A query of name words only ("orla vennick"), not a free text ("what did vennick say"), is a longer name.
    name_like = not any(word in STOP_WORDS for word in query_words)
    best: tuple[str, float, str] | None = None
    seen: set[str] = set()
    for candidate, is_alias in [(name, False) for name in names] + [(alias, True) for alias in aliases]:
        if not candidate or candidate in seen:
            continue
        seen.add(candidate)
        found: tuple[str, float] | None = None
        words = candidate.split()
        if candidate == key:
            found = ("alias", 0.95) if is_alias else ("exact", 1.0)
        elif len(key) >= 2 and candidate.startswith(key):
            whole_word = candidate[len(key)] == " "
            found = ("prefix", 0.8 + 0.05 * whole_word + 0.05 * len(key) / len(candidate))
        elif set(query_words) <= set(words):
            found = ("contains", 0.65 + 0.1 * len(query_words) / len(words))
        elif set(words) <= set(query_words) and _names_alone(words):
            share = len(words) / len(query_words)
            found = ("within", 0.55 + 0.1 * share) if name_like else ("mention", 0.5 + 0.1 * share)
        else:
            # A one-word query may be a misspelling of one word of the name.
            options = [candidate, *(words if len(query_words) == 1 and len(key) >= 4 else [])]
            ratio, closest = max(((SequenceMatcher(None, key, o).ratio(), o) for o in options), key=lambda r: r[0])
            if ratio >= FUZZY_MIN_RATIO:
                coverage = min(len(key), len(closest)) / max(len(key), len(closest))
                found = ("fuzzy", 0.5 * ratio * (0.8 + 0.2 * coverage))
        if found is not None and (best is None or found[1] > best[1]):
            best = (found[0], round(min(1.0, found[1]), 4), candidate)
    return best


def _names_alone(words: list[str]) -> bool:
    """True when a name's words can name it inside a longer text: at least one is neither a common word nor a single
    letter ("vennick", "royal navy"; not "us", "v" or "the a")."""
    return any(len(word) > 1 and word not in STOP_WORDS for word in words)


def rank_entity_search(text: str, candidates: list[EntityMatch], limit: int) -> list[EntityMatch]:
    """The candidates that match `text`, scored (see `score_entity_match`), best first: score, then more facts.

    Each candidate's `entity.aliases` are its alias keys and `matched` its stored name key; both stores fetch the
    candidates (with their fact counts and dates) in one query and rank them here, so they answer alike.
    """
    key = normalise_name(text)
    ranked: list[EntityMatch] = []
    for candidate in candidates:
        names = list(dict.fromkeys(name for name in (candidate.matched, candidate.entity.key) if name))
        scored = score_entity_match(key, names, candidate.entity.aliases)
        if scored is None:
            continue
        candidate.match, candidate.score, candidate.matched = scored
        ranked.append(candidate)
    ranked.sort(key=lambda m: (-m.score, MATCH_KINDS.index(m.match), -m.entity.fact_count, m.entity.name))
    return ranked[:limit]


def _date(value: Any) -> dt.date | None:
    """A stored date: a date already, or ISO text (Neo4j's properties, PostgreSQL's JSON)."""
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


def _fuzzy(value: Any, precision: str | None) -> FuzzyDate | None:
    return FuzzyDate(_date(value), precision or "day") if value else None


def fact_from_row(row: Mapping[str, Any]) -> Fact:
    """A `Fact` from a row of either store: `fact` (the fact's stored properties) and `entities` (uuid, name, key,
    kind and position of each entity taking part)."""
    props = dict(row["fact"])
    linked = sorted(row["entities"] or [], key=lambda item: item["position"])
    return Fact(
        uuid=props["uuid"],
        text=props["text"],
        document_id=props["document_id"],
        sentence_index=int(props.get("sentence_index") or 0),
        entity_keys=[item["key"] for item in linked],
        valid_at=_fuzzy(props.get("valid_from"), props.get("valid_precision")),
        invalid_at=_fuzzy(props.get("invalid_from"), props.get("invalid_precision")),
        date_method=props.get("date_method") or "document",
        chunk_id=props.get("chunk_id"),
        chunk_index=props.get("chunk_index"),
        document_title=props.get("document_title") or "",
        document_url=props.get("document_url"),
        document_date=_date(props.get("document_date")),
        confidence=None if props.get("confidence") is None else float(props["confidence"]),
        entity_names=[item["name"] for item in linked],
        entity_uuids=[item["uuid"] for item in linked],
        entity_kinds=[item.get("kind") or "other" for item in linked],
    )


# The fact's own properties, stored as they are; its dates are stored as ISO text (see `_fact_row`).
_FACT_PROPERTIES = (
    "uuid",
    "document_id",
    "chunk_id",
    "chunk_index",
    "sentence_index",
    "text",
    "date_method",
    "document_title",
    "document_url",
    "confidence",
)


def _fact_row(fact: Fact) -> dict[str, Any]:
    """A fact's stored properties, dates as ISO text (what both backends' statements take)."""
    valid, invalid = fact.valid_at, fact.invalid_at
    return {
        **{name: getattr(fact, name) for name in _FACT_PROPERTIES},
        "valid_from": valid.value.isoformat() if valid else None,
        "valid_to": valid.end.isoformat() if valid else None,
        "valid_precision": valid.precision if valid else None,
        "invalid_from": invalid.value.isoformat() if invalid else None,
        "invalid_precision": invalid.precision if invalid else None,
        "document_date": fact.document_date.isoformat() if fact.document_date else None,
    }


class GraphStore(InitParameterSerialization, ABC):
    """What every graph backend offers. Implementations are thread-safe; reads never write.

    A backend gives its `QUERIES` (in its module: one statement per name, taking the named parameters the methods
    here pass; `rows` is a list of mappings to write) and runs them: `_read` outside a transaction, `_run` inside
    the one `_in_transaction` opens. A store is cheap to make: it connects in `warm_up()` or on first use.
    `to_dict`/`from_dict` give the configuration a component serialises in `pipelines.yaml` (secrets only as
    environment-variable names).
    """

    backend: str
    # The full-text rank at which a fact gets half of a search's text share (the backends' ranks differ in scale).
    rank_half: float = 1.0
    # Set by each store's __init__: whether the schema exists, and the lock that makes it once.
    _ready: bool
    _lock: threading.Lock

    def warm_up(self) -> None:
        """Connect and create the schema once; `GraphUnavailable` with one sentence when that fails."""
        self.ensure_schema()

    def ensure_schema(self) -> None:
        """`warm_up`, for every read and write: the schema is made once per store, whichever thread comes first."""
        if self._ready:
            return
        with self._lock:
            if not self._ready:
                self._create_schema()
                self._ready = True

    def ensure_readable(self) -> bool:
        """Whether there is a graph to read, for every read: a collection's graph is made by its first write
        (ingesting a document), never by a read, so a read of a collection without one finds nothing and creates
        nothing. A graph of an earlier version is brought up to date once (`ensure_schema`)."""
        if self._ready:
            return True
        if not self.exists():
            return False
        self.ensure_schema()
        return True

    @abstractmethod
    def exists(self) -> bool:
        """Whether this store's collection has a graph (written by ingestion); creates nothing.
        `GraphUnavailable` with one sentence when the backend cannot be reached."""

    @abstractmethod
    def collections(self) -> list[str]:
        """The collections that have a graph in this store's database, by name; creates nothing."""

    @abstractmethod
    def _create_schema(self) -> None:
        """Connect and create the schema (idempotent; called once, under the store's lock); `GraphUnavailable`
        with one sentence when that fails."""

    @abstractmethod
    def _read(self, name: str, **params: Any) -> list[Mapping[str, Any]]:
        """The rows of the read query `name`."""

    @abstractmethod
    def _run(self, tx: Any, name: str, **params: Any) -> list[Mapping[str, Any]]:
        """The rows of the statement `name`, run in the transaction `tx`."""

    @abstractmethod
    def _in_transaction(self, work: Callable[..., Any], *args: Any, connection: Any = None) -> Any:
        """`work(tx, *args)` in one write transaction (on the caller's `connection` where the backend can join it)."""

    # -- writes -------------------------------------------------------------------------------------------------

    def replace_document(self, graph: DocumentGraph, *, connection: Any = None) -> None:
        """Replace everything `graph.document_id` contributed with `graph` (entities merged by key and alias)."""
        self._in_transaction(self._replace, graph, connection=connection)

    def delete_document(self, document_id: str, *, connection: Any = None) -> int:
        """Remove a document's facts and aliases, and every entity left without facts; returns facts removed."""
        return int(self._in_transaction(self._delete, document_id, connection=connection))

    def restamp_document(self, document_id: str, extractor: str, *, connection: Any = None) -> bool:
        """Stamp a document's stored graph `extractor`, leaving its facts, entities, aliases and source mark as they
        are (a failed re-extraction of the same text keeps the earlier graph); False when it has no stamp."""
        return bool(self._in_transaction(self._restamp, document_id, extractor, connection=connection))

    def _restamp(self, tx: Any, document_id: str, extractor: str) -> bool:
        return bool(self._run(tx, "restamp", d=document_id, x=extractor))

    def _delete(self, tx: Any, document_id: str) -> int:
        self._run(tx, "delete_stamp", d=document_id)
        self._run(tx, "delete_aliases", d=document_id)
        touched = [row["uuid"] for row in self._run(tx, "document_entity_uuids", d=document_id)]
        removed = self._run(tx, "delete_facts", d=document_id)
        # Entities the document leaves without any fact go with it.
        self._run(tx, "delete_orphans", uuids=touched)
        return int(removed[0]["n"]) if removed else 0

    def _replace(self, tx: Any, graph: DocumentGraph) -> None:
        self._delete(tx, graph.document_id)
        if graph.extractor:
            self._run(tx, "stamp", d=graph.document_id, x=graph.extractor, s=graph.source or None)
        if not graph.facts:
            return
        # A key another document taught as an alias of exactly one entity ("jobs" -> that person) joins that entity.
        keys = sorted({mention.key for mention in graph.entities})
        taught = self._run(tx, "taught_aliases", keys=keys)
        by_alias = {row["key"]: row["uuids"][0] for row in taught if len(row["uuids"]) == 1}
        uuid_of = {m.key: by_alias.get(m.key, m.uuid) for m in graph.entities}
        own = sorted((m for m in graph.entities if m.key not in by_alias), key=lambda m: m.key)
        aliases = {
            (alias, uuid_of[m.key])
            for m in graph.entities
            for alias in m.aliases | ({m.key} if m.key in by_alias else set())
            if alias
        }
        # Why each alias names its entity: the document's own reason, or that the key was taught by another document.
        reasons = {(alias, uuid_of[m.key]): m.reasons.get(alias, "") for m in graph.entities for alias in m.aliases}
        reasons.update(
            {
                (m.key, by_alias[m.key]): "the same name another document gave as this entity's alias"
                for m in graph.entities
                if m.key in by_alias
            }
        )
        rows = {
            "write_entities": [
                {
                    "uuid": m.uuid,
                    "key": m.key,
                    "name": m.name,
                    "kind": m.kind,
                    "confidence": float(m.confidence),
                    "evidence": m.evidence,
                }
                for m in own
            ],
            "write_aliases": [
                {"key": key, "uuid": uuid, "d": graph.document_id, "reason": reasons.get((key, uuid), "")}
                for key, uuid in sorted(aliases)
            ],
            "write_facts": [_fact_row(fact) for fact in graph.facts],
            "write_links": [
                {"fact": fact.uuid, "entity": uuid, "position": position}
                for fact in graph.facts
                for uuid, position in _first_positions(fact, uuid_of).items()
            ],
            "write_mentions": [
                {"fact": fact.uuid, "keys": sorted({key for key in fact.mention_keys if key})}
                for fact in graph.facts
                if any(fact.mention_keys)
            ],
        }
        for name, batch in rows.items():
            if batch:
                self._run(tx, name, rows=batch)
        # Entities of this document left without a fact (all their facts deduplicated away) are not kept.
        self._run(tx, "delete_orphans", uuids=[m.uuid for m in own])

    # -- reads --------------------------------------------------------------------------------------------------

    def find_entities(self, name: str, limit: int = 5) -> list[Entity]:
        """The entities `name` means, best first (see `rank_entity_matches`)."""
        terms = EntitySearchTerms.of(name)
        if not terms.key:
            return []
        candidates = [match.entity for match in self._entity_candidates(terms, None, None)]
        return rank_entity_matches(name, candidates)[:limit]

    def match_entities(
        self, text: str, limit: int = 10, kinds: list[str] | None = None, as_of: dt.date | None = None
    ) -> list[EntityMatch]:
        """The entities whose name or an alias matches `text` (a name, part of one, a misspelling, or a free text
        naming them), scored and best first (see `rank_entity_search`), each with its number of facts and the
        dates of its first and last dated facts; `kinds` keeps those entity kinds only, `as_of` counts only facts
        valid then (an entity with none is left out). One query."""
        terms = EntitySearchTerms.of(text)
        return rank_entity_search(text, self._entity_candidates(terms, kinds, as_of), limit) if terms.key else []

    def list_entities(self, kinds: list[str] | None = None, limit: int = 100) -> list[Entity]:
        """Every entity with facts (of `kinds` only, when given), most facts first, then by name, each with its
        kind's confidence: the entity search's query without a name."""
        limit = clamp(limit, 1, MAX_ENTITY_CANDIDATES, "limit")
        return [match.entity for match in self._entity_candidates(None, kinds, None, limit)]

    def _entity_candidates(
        self,
        terms: EntitySearchTerms | None,
        kinds: list[str] | None,
        as_of: dt.date | None,
        cap: int = MAX_ENTITY_CANDIDATES,
    ) -> list[EntityMatch]:
        """Up to `cap` entities whose name or an alias is the key, starts with it, shares a word with it, or has a
        word sharing the first or last three letters of a longer word of it (exact, alias and prefix matches first,
        then by facts), not yet scored; every entity when `terms` is None."""
        rows = self._read(
            "entity_candidates",
            key=terms.key if terms else None,
            prefix=terms.like_prefix if terms else None,
            words=list(terms.words) if terms else [],
            heads=list(terms.heads) if terms else [],
            tails=list(terms.tails) if terms else [],
            kinds=list(kinds) if kinds else None,
            as_of=as_of,
            cap=cap,
        )
        return [
            EntityMatch(
                Entity(
                    row["uuid"],
                    row["name"],
                    row["kind"],
                    sorted(set(row["aliases"] or [])),
                    int(row["n"]),
                    float(row["confidence"]) if row.get("confidence") is not None else None,
                ),
                match="",
                score=0.0,
                matched=row["key"],
                first_date=_fuzzy(row["first_from"], row["first_precision"]),
                last_date=_fuzzy(row["last_from"], row["last_precision"]),
            )
            for row in rows
        ]

    def search_facts(
        self, query: str, limit: int = 10, as_of: dt.date | None = None, scope: FactScope | None = None
    ) -> list[FactHit]:
        """Facts matching `query`, best first, scores 0-1: half for taking part in an entity the query names, half
        for its words (full text); `scope` keeps only facts of some documents or of documents dated in a range."""
        words, grams = _WORD_RE.findall(query.lower()), name_grams(query)
        scope = scope or FactScope()
        params = {
            "words": words,
            "grams": grams,
            "as_of": as_of,
            "document_ids": list(scope.document_ids) or None,
            "date_from": scope.date_from,
            "date_to": scope.date_to,
            "limit": limit,
        }
        rows = (self._read("named_facts", **params) if grams else []) + (
            self._read("text_facts", **params) if words else []
        )
        hits: dict[str, FactHit] = {}
        for row in rows:
            rank = float(row["rank"] or 0.0)
            score = round(min(1.0, 0.5 * bool(row["named"]) + 0.5 * rank / (rank + self.rank_half)), 6)
            fact = fact_from_row(row)
            if fact.uuid not in hits or score > hits[fact.uuid].score:
                hits[fact.uuid] = FactHit(fact, score)
        # Best first; among equals the most recently valid, undated last.
        return sorted(
            hits.values(),
            key=lambda h: (-h.score, -(h.fact.valid_at.value.toordinal() if h.fact.valid_at else 0), h.fact.uuid),
        )[:limit]

    def entity_facts(
        self,
        entity_uuids: list[str],
        start: dt.date | None = None,
        end: dt.date | None = None,
        as_of: dt.date | None = None,
        limit: int = 200,
    ) -> list[FactHit]:
        """Facts about the entities whose dated period overlaps [start, end], in date order (undated last)."""
        if not entity_uuids:
            return []
        rows = self._read("entity_facts", uuids=list(entity_uuids), start=start, end=end, as_of=as_of, limit=limit)
        return [FactHit(fact_from_row(row), 1.0) for row in rows]

    def related_facts(
        self, entity_uuid: str, depth: int = 2, limit: int = 50, as_of: dt.date | None = None
    ) -> list[FactHit]:
        """Facts linking entities on paths up to `depth` hops from the entity (hop 1 first), each with its hop:
        breadth first, one query per hop."""
        seen, frontier = {entity_uuid}, [entity_uuid]
        found: dict[str, FactHit] = {}
        for hop in range(1, depth + 1):
            if not frontier or len(found) >= limit:
                break
            next_frontier: list[str] = []
            for row in self._read("linking_facts", frontier=frontier, as_of=as_of, cap=limit * 4):
                fact = fact_from_row(row)
                found.setdefault(fact.uuid, FactHit(fact, round(1.0 / hop, 6), hop=hop))
                next_frontier += [uuid for uuid in fact.entity_uuids if uuid not in seen]
                seen.update(fact.entity_uuids)
            frontier = next_frontier
        hits = sorted(found.values(), key=lambda h: (h.hop, h.fact.valid_at.value if h.fact.valid_at else dt.date.max))
        return hits[:limit]

    def best_entity_facts(
        self,
        entity_uuids: list[str],
        per_entity: int = 3,
        as_of: dt.date | None = None,
        min_confidence: float | None = None,
    ) -> dict[str, list[FactHit]]:
        """Up to `per_entity` facts of each entity, best first: those about it (it comes first in the sentence),
        then those linking it to other entities, then the most recent. One query; a fact may serve two entities.
        `min_confidence`: only facts whose event confidence reaches it (or that no model scored) are ranked, so that
        less certain facts never take the place of surer ones; None: every fact."""
        found: dict[str, list[FactHit]] = {}
        if entity_uuids and per_entity > 0:
            params = {"uuids": list(entity_uuids), "per": per_entity, "as_of": as_of, "min_confidence": min_confidence}
            for row in self._read("best_entity_facts", **params):
                found.setdefault(row["for_entity"], []).append(FactHit(fact_from_row(row), 1.0))
        return found

    def document_entities(self, document_id: str, limit: int = 200) -> list[Entity]:
        """The entities a document's facts mention, most facts first."""
        rows = self._read("document_entities", d=document_id, limit=clamp(limit, 1, 1000, "limit"))
        return [Entity(row["uuid"], row["name"], row["kind"], [], int(row["n"])) for row in rows]

    def entity_notes(self, entity_uuid: str) -> dict[str, Any]:
        """Why an entity is what it is: its kind's `confidence` and `evidence`, and `merged`: each other name it goes
        by, with why it names this entity and the document that said so (`alias`, `reason`, `document_id`)."""
        rows = self._read("entity_notes", uuid=entity_uuid)
        if not rows:
            return {"confidence": 0.0, "evidence": "", "merged": []}
        merged = [
            {"alias": row["alias_key"], "reason": row["reason"], "document_id": row["document_id"]}
            for row in rows
            if row.get("alias_key")
        ]
        first = rows[0]
        return {"confidence": float(first["confidence"] or 0), "evidence": first["evidence"] or "", "merged": merged}

    def known_names(self, keys: set[str]) -> set[str]:
        """Which of these normalised names are entity names or aliases in the graph (the corpus's gazetteer)."""
        return {row["key"] for row in self._read("known_names", keys=sorted(keys))} if keys else set()

    def extractor_stamps(self, document_ids: list[str]) -> dict[str, str]:
        """The extractor version stamp each of `document_ids` was last extracted with (documents never extracted,
        or extracted before stamps existed, are absent)."""
        rows = self._read("extractor_stamps", ids=list(document_ids)) if document_ids else []
        return {row["document_id"]: row["extractor"] for row in rows}

    def source_marks(self, document_ids: list[str]) -> dict[str, str]:
        """The mark of the text and chunks each of `document_ids`'s stored graph was extracted from (documents without
        a graph, whose last extraction failed on a new text, or extracted before marks were kept, are absent)."""
        rows = self._read("source_marks", ids=list(document_ids)) if document_ids else []
        return {row["document_id"]: row["source"] for row in rows if row["source"]}

    def extractor_stamp_counts(self) -> dict[str, int]:
        """How many documents each extractor version stamp was last extracted with."""
        return {row["extractor"]: int(row["n"]) for row in self._read("stamp_counts")}

    def document_fact_count(self, document_id: str) -> int:
        """How many facts a document has in the graph."""
        rows = self._read("document_fact_count", d=document_id)
        return int(rows[0]["n"]) if rows else 0

    def counts(self) -> dict[str, int]:
        """How many entities, facts and aliases the graph holds."""
        rows = self._read("counts")  # none when the collection has no graph
        return {key: int(rows[0][key]) if rows else 0 for key in ("entities", "facts", "aliases")}

    def entity_passage_links(self) -> EntityPassageLinks:
        """Every entity-passage link and every entity name and alias, in one read (the retrieval walk caches it)."""
        rows = self._read("passage_links")
        return EntityPassageLinks(
            links=tuple((r["entity"], r["passage"], r["document"], int(r["n"])) for r in rows if r["link"]),
            names=tuple((r["passage"], r["entity"]) for r in rows if not r["link"]),
        )

    def graph_version(self) -> str | None:
        """A stamp that changes whenever facts are written or deleted (by any process), read cheaply; None when
        the backend keeps none (callers then refresh what they cached after a while)."""
        return None

    @abstractmethod
    def drop(self) -> None:
        """Remove the graph's tables or nodes (tests)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release connections."""


def _first_positions(fact: Fact, uuid_of: dict[str, str]) -> dict[str, int]:
    """Each distinct known entity `fact` names (its uuid, from `uuid_of` by key) and the position of its first
    mention, in order."""
    positions: dict[str, int] = {}
    for position, key in enumerate(fact.entity_keys):
        if uuid_of.get(key):
            positions.setdefault(uuid_of[key], position)
    return positions
