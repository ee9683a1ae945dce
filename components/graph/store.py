"""The one graph-store interface: the embedded PostgreSQL store and the Neo4j store both implement it.

A store holds entities (with aliases), facts (a sentence, its dates, its document, chunk and sentence) and which
entities each fact links. Replacing or deleting a document's facts happens in the caller's transaction where the
backend shares PostgreSQL with the knowledge base.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from haystack import default_from_dict

from components.database import DatabaseUnavailable
from components.graph.model import DocumentGraph, Entity, EntityMatch, EntityMention, Fact, FactHit, normalise_name
from components.serialization import init_parameters_to_dict
from components.text.analyzer import STOP_WORDS

MAX_DEPTH = 5

# How an entity search can match, best first.
MATCH_KINDS = ("exact", "alias", "prefix", "contains", "mention", "fuzzy")
# Candidates an entity search scores at most (the stores' queries stop there, most promising first).
MAX_ENTITY_CANDIDATES = 500
# A name at least this similar to the query (difflib ratio) is a fuzzy match.
FUZZY_MIN_RATIO = 0.75


@dataclass(frozen=True)
class FactScope:
    """The knowledge base's document filters as they apply to facts: their documents and those documents' dates."""

    document_ids: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @property
    def empty(self) -> bool:
        return not (self.document_ids or self.date_from or self.date_to)


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


def table_prefix(collection: str) -> str:
    """The graph tables' prefix for a knowledge-base collection (so tests and collections never share a graph)."""
    safe = re.sub(r"[^a-z0-9_]", "_", collection.lower())
    if not safe or not re.match(r"[a-z_]", safe):
        raise ValueError(f"{collection!r} cannot name graph tables; use letters, digits and underscores")
    return f"{safe[:40]}_graph_"


def rank_entity_matches(name: str, candidates: list[Entity], alias_map: dict[str, set[str]]) -> list[Entity]:
    """The entities `name` means, best first: exact name or alias, then more specific names holding every word of
    a name of two or more words ("iTunes store" -> "iTunes Music Store"; a one-word name is the head of too many
    others: "Apple" is not "Apple Corps"), else the longest entity name inside it ("Beatles Apple Corps" ->
    "Apple Corps"). `alias_map` maps an entity uuid to its alias keys."""
    key = normalise_name(name)
    if not key:
        return []
    words = set(key.split())
    exact = [e for e in candidates if e.key == key or key in alias_map.get(e.uuid, set())]
    if not exact:
        # A misspelt name ("United States Air Froce") is the name that differs from it by one slip in a long word.
        exact = [e for e in candidates if any(_one_slip(key, k) for k in (e.key, *alias_map.get(e.uuid, set())))]
    exact.sort(key=lambda e: (e.key != key, -e.fact_count))
    wider = [e for e in candidates if e not in exact and words <= set(e.key.split()) and (len(words) > 1 or not exact)]
    wider.sort(key=lambda e: (len(e.key.split()), -e.fact_count))
    if exact or wider:
        return exact + wider
    # The longest known name inside it ("Beatles Apple Corps" -> "Apple Corps"), but never by dropping a model
    # number: "Boeing 777" is not "Boeing", "iPhone 3G" is not "iPhone".
    inner = [
        e
        for e in candidates
        if set(e.key.split()) <= words and not any(re.search(r"\d", w) for w in words - set(e.key.split()))
    ]
    if not inner:
        return []
    longest = max(len(e.key.split()) for e in inner)
    best = [e for e in inner if len(e.key.split()) == longest]
    best.sort(key=lambda e: -e.fact_count)
    return best[:1]


def _one_slip(query: str, name: str) -> bool:
    """True when two names of the same two or more words differ only by a slip in one of them (spelt nearly alike:
    "united states air froce" and "united states air force")."""
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
    ones (names sharing a word are candidates: "Faury" -> "Guillaume Faury", and the names a free text mentions);
    `heads`/`tails` the first and last three letters of its longer words (names with a word sharing them are
    candidates for a fuzzy match: "Airbsu" -> "Airbus").
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
    (0.65-0.75) every word of the query is a word of a name; `mention` (0.5-0.6) the query, a free text, holds every
    word of a name; `fuzzy` (0.3-0.5) a name, or one of its words for a one-word query, is spelt nearly alike.
    """
    if not key:
        return None
    query_words = key.split()
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
        elif set(words) <= set(query_words):
            found = ("mention", 0.5 + 0.1 * len(words) / len(query_words))
        else:
            ratio = SequenceMatcher(None, key, candidate).ratio()
            closest = candidate
            if len(query_words) == 1 and len(key) >= 4:
                for word in words:
                    word_ratio = SequenceMatcher(None, key, word).ratio()
                    if word_ratio > ratio:
                        ratio, closest = word_ratio, word
            if ratio >= FUZZY_MIN_RATIO:
                coverage = min(len(key), len(closest)) / max(len(key), len(closest))
                found = ("fuzzy", 0.5 * ratio * (0.8 + 0.2 * coverage))
        if found is not None and (best is None or found[1] > best[1]):
            best = (found[0], round(min(1.0, found[1]), 4), candidate)
    return best


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


def entity_merge(
    graph: DocumentGraph, by_alias: dict[str, str]
) -> tuple[dict[str, str], list[EntityMention], list[tuple[str, str]]]:
    """How a document's entity mentions join the graph, given `by_alias` (the keys another document taught as an
    alias of exactly one entity, "jobs" -> Steve Jobs, with that entity's uuid): each key's entity uuid, the
    mentions that are entities of their own (by key), and the (alias, entity uuid) pairs to record, sorted."""
    uuid_of = {m.key: by_alias.get(m.key, m.uuid) for m in graph.entities}
    own = sorted((m for m in graph.entities if m.key not in by_alias), key=lambda m: m.key)
    aliases = sorted(
        {
            (alias, uuid_of[m.key])
            for m in graph.entities
            for alias in (m.aliases | ({m.key} if m.key in by_alias else set()))
            if alias
        }
    )
    return uuid_of, own, aliases


def fact_entity_positions(fact: Fact, uuid_of: dict[str, str]) -> list[tuple[str, int]]:
    """(entity uuid, position of its first mention) for each distinct known entity `fact` mentions, in order;
    `uuid_of` maps an entity key to the uuid the store gave it."""
    positions: dict[str, int] = {}
    for position, key in enumerate(fact.entity_keys):
        uuid = uuid_of.get(key)
        if uuid:
            positions.setdefault(uuid, position)
    return list(positions.items())


class GraphStore(ABC):
    """What every graph backend offers. Implementations are thread-safe; reads never write.

    A store is cheap to make: it connects in `warm_up()` or on first use. `to_dict`/`from_dict` give the
    configuration a component serialises in `pipelines.yaml` (secrets only as environment-variable names).
    """

    backend: str

    # Init parameters that take an in-process object (a test's pool or driver): never serialised.
    in_process_parameters: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """`{type, init_parameters}` for the pipeline YAML; never a secret's value."""
        data = init_parameters_to_dict(self, **dict.fromkeys(self.in_process_parameters))
        for name in self.in_process_parameters:
            del data["init_parameters"][name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraphStore:
        """The store `to_dict` described."""
        return default_from_dict(cls, data)

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

    @abstractmethod
    def _create_schema(self) -> None:
        """Connect and create the schema (idempotent; called once, under the store's lock); `GraphUnavailable`
        with one sentence when that fails."""

    @abstractmethod
    def replace_document(self, graph: DocumentGraph, *, connection: Any = None) -> None:
        """Replace everything `graph.document_id` contributed with `graph` (entities merged by key and alias)."""

    @abstractmethod
    def delete_document(self, document_id: str, *, connection: Any = None) -> int:
        """Remove a document's facts and aliases, and every entity left without facts; returns facts removed."""

    def find_entities(self, name: str, limit: int = 5) -> list[Entity]:
        """The entities `name` means, best first (see `rank_entity_matches`)."""
        key = normalise_name(name)
        if not key:
            return []
        candidates = self._entity_candidates(key)
        return rank_entity_matches(name, candidates, {e.uuid: set(e.aliases) for e in candidates})[:limit]

    @abstractmethod
    def _entity_candidates(self, key: str) -> list[Entity]:
        """`find_entities`' candidates for a non-empty normalised name `key`: up to `MAX_ENTITY_CANDIDATES` entities
        sharing a word with it or having it as an alias, with their aliases and fact counts, the likeliest first."""

    @abstractmethod
    def search_facts(
        self, query: str, limit: int = 10, as_of: dt.date | None = None, scope: FactScope | None = None
    ) -> list[FactHit]:
        """Facts matching `query` (full text, plus the facts of entities it names), best first, scores 0-1;
        `scope` keeps only facts of some documents or of documents dated in a range."""

    def entity_facts(
        self,
        entity_uuids: list[str],
        start: dt.date | None = None,
        end: dt.date | None = None,
        as_of: dt.date | None = None,
        limit: int = 200,
    ) -> list[FactHit]:
        """Facts about the entities whose dated period overlaps [start, end], in date order (undated last)."""
        return self._entity_facts(list(entity_uuids), start, end, as_of, limit) if entity_uuids else []

    @abstractmethod
    def _entity_facts(
        self, entity_uuids: list[str], start: dt.date | None, end: dt.date | None, as_of: dt.date | None, limit: int
    ) -> list[FactHit]:
        """`entity_facts` for at least one entity."""

    @abstractmethod
    def related_facts(
        self, entity_uuid: str, depth: int = 2, limit: int = 50, as_of: dt.date | None = None
    ) -> list[FactHit]:
        """Facts on paths up to `depth` hops from the entity (hop 1 first), each with its hop."""

    def match_entities(
        self, text: str, limit: int = 10, kinds: list[str] | None = None, as_of: dt.date | None = None
    ) -> list[EntityMatch]:
        """The entities whose name or an alias matches `text` (a name, part of one, a misspelling, or a free text
        naming them), scored and best first (see `rank_entity_search`), each with its number of facts and the
        dates of its first and last dated facts; `kinds` keeps those entity kinds only, `as_of` counts only facts
        valid then (an entity with none is left out). One query."""
        terms = EntitySearchTerms.of(text)
        return rank_entity_search(text, self._entity_match_candidates(terms, kinds, as_of), limit) if terms.key else []

    @abstractmethod
    def _entity_match_candidates(
        self, terms: EntitySearchTerms, kinds: list[str] | None, as_of: dt.date | None
    ) -> list[EntityMatch]:
        """`match_entities`' candidates for search `terms` with a key, not yet scored: up to `MAX_ENTITY_CANDIDATES`
        entities whose name or an alias is the key, starts with it, shares a word with it, or has a word sharing the
        first or last three letters of a longer word of it; exact, alias and prefix matches first, then by facts."""

    def best_entity_facts(
        self, entity_uuids: list[str], per_entity: int = 3, as_of: dt.date | None = None
    ) -> dict[str, list[FactHit]]:
        """Up to `per_entity` facts of each entity, best first: those about it (it comes first in the sentence),
        then those linking it to other entities, then the most recent. One query; a fact may serve two entities."""
        found: dict[str, list[FactHit]] = {}
        if entity_uuids and per_entity > 0:
            for entity_uuid, fact in self._best_entity_facts(list(entity_uuids), per_entity, as_of):
                found.setdefault(entity_uuid, []).append(FactHit(fact, 1.0))
        return found

    @abstractmethod
    def _best_entity_facts(
        self, entity_uuids: list[str], per_entity: int, as_of: dt.date | None
    ) -> list[tuple[str, Fact]]:
        """`best_entity_facts` for at least one entity and fact, as (entity uuid, fact) pairs, each entity's best
        first."""

    def document_entities(self, document_id: str, limit: int = 200) -> list[Entity]:
        """The entities a document's facts mention, most facts first."""
        raise NotImplementedError

    def known_names(self, keys: set[str]) -> set[str]:
        """Which of these normalised names are entity names or aliases in the graph (the corpus's gazetteer)."""
        return self._known_names(sorted(keys)) if keys else set()

    @abstractmethod
    def _known_names(self, keys: list[str]) -> set[str]:
        """`known_names` for at least one name."""

    @abstractmethod
    def extractor_stamps(self, document_ids: list[str]) -> dict[str, str]:
        """The extractor version stamp each of `document_ids` was last extracted with (documents never extracted,
        or extracted before stamps existed, are absent)."""

    @abstractmethod
    def document_fact_count(self, document_id: str) -> int:
        """How many facts a document has in the graph."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """How many entities and facts the graph holds."""

    def entity_passage_links(self) -> EntityPassageLinks:
        """Every entity-passage link and every entity name and alias, in one read (the retrieval walk caches it)."""
        raise NotImplementedError(f"the {self.backend} graph cannot list its entity-passage links")

    def graph_version(self) -> str | None:
        """A stamp that changes whenever facts are written or deleted (by any process), read cheaply; None when
        the backend keeps none (callers then refresh what they cached after a while)."""
        return None

    def drop(self) -> None:  # noqa: B027 - optional
        """Remove the graph's tables or nodes (tests)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release connections."""
