"""The entity-passage graph the research pipeline's graph branch walks to find passages (HippoRAG-style).

Nodes are the graph's entities and the passages (knowledge-base chunks) their facts were read in; an entity and a
passage are linked when a sentence read in that passage names the entity, whether it takes part in the sentence's
event or is only mentioned ("Nordvik employees protested"): timelines need participation, retrieval needs mentions.
A question seeds the walk with the entities it names, each weighted by its specificity (one over the number of
passages naming it, so "United States" counts for far less than a rare name); a personalised PageRank spreads from
the seeds to their passages, to the other entities those name (the bridges) and on to the bridges' passages, which
score by the walk's stationary mass. The graph is read in one statement and kept in memory by the graph branch
(`PassageGraphCache`), rebuilt when the store's change counter moves, or after `ttl_s` seconds without one.

Usage:
```python
cache = PassageGraphCache(store)
graph = cache.get()
walk = graph.top_passages("Where was the founder of Nordvik Aviation born?", limit=10)
[(passage.chunk_id, passage.document_id, passage.score) for passage in walk.passages]
```
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from haystack import logging
from scipy import sparse

from components.graph.model import normalise_name
from components.graph.store import EntityPassageLinks, GraphStore
from components.redaction import cut
from components.text.language import parse_question

if TYPE_CHECKING:
    from spacy.tokens import Token

logger = logging.getLogger(__name__)

# HippoRAG's damping: half the mass returns to the seeds at every step, so the walk stays within a few hops.
DEFAULT_DAMPING = 0.5
# Power iterations: the error after k steps is at most (1 - restart)^k, 1e-6 for the default damping.
ITERATIONS = 20
# A question names an entity in at most this many words.
MAX_NAME_WORDS = 6
# A name part ("Olsen") stands for the entities whose names hold it only when it is this unambiguous.
MAX_PARTIAL_CANDIDATES = 5
# Stores without a change counter are re-read this often.
DEFAULT_TTL_S = 60.0
# A graph that takes longer than this to read is re-read in the background, the previous one serving meanwhile.
BLOCKING_BUILD_S = 1.0


@dataclass(frozen=True)
class WalkedPassage:
    """A passage the walk reached: its chunk (None when facts carried no chunk), document and stationary mass."""

    chunk_id: str | None
    document_id: str
    score: float


@dataclass(frozen=True)
class QuestionSeeds:
    """The entities a question names (graph entity uuid -> seed weight) and the names that matched."""

    weights: dict[str, float] = field(default_factory=dict)
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PassageWalk:
    """What a walk found: passages best first, the question's seeds, and the entities with the most mass (the
    seeds and the bridges between their passages and others), best first."""

    passages: list[WalkedPassage]
    seeds: QuestionSeeds
    entities: list[str]


def _is_name(token: Token) -> bool:
    # The tagger misses names it has never seen when the question gives it little context ("Qdrant", "What is
    # Qdrant?"); a capitalised content word may be a name too: it seeds only if the graph knows it.
    if token.is_punct:
        return False
    return token.pos_ == "PROPN" or (token.text[:1].isupper() and token.is_alpha and not token.is_stop)


def _name_runs(tokens: list[Token]) -> list[tuple[int, int]]:
    """The runs of consecutive proper nouns (`[start, end)` positions in `tokens`), then each of their words."""
    runs, start = [], None
    for position, token in enumerate([*tokens, None]):
        if token is not None and _is_name(token):
            start = position if start is None else start
        elif start is not None:
            runs.append((start, position))
            start = None
    return runs + [(p, p + 1) for low, high in runs if high - low > 1 for p in range(low, high)]


class EntityPassageGraph:
    """One snapshot of the entity-passage graph as sparse matrices, with the name index that seeds it.

    Build it with `EntityPassageGraph(store.entity_passage_links())`; it never changes afterwards, so threads share
    it.
    """

    def __init__(self, links: EntityPassageLinks) -> None:
        entity_index: dict[str, int] = {}
        passage_index: dict[tuple[str | None, str], int] = {}
        rows = [entity_index.setdefault(entity, len(entity_index)) for entity, *_ in links.links]
        cols = [passage_index.setdefault((chunk, doc), len(passage_index)) for _, chunk, doc, _ in links.links]
        counts = [float(max(1, facts)) for *_, facts in links.links]
        self.entities = list(entity_index)
        self.passages = list(passage_index)
        self._entity_index = entity_index
        shape = (len(self.entities), len(self.passages))
        # How much each passage is about an entity: the facts it reads about it.
        about = sparse.coo_matrix((np.asarray(counts), (rows, cols)), shape=shape).tocsr()
        links_matrix = (about > 0).astype(float)
        self.entity_degree = np.asarray(links_matrix.sum(axis=1)).ravel()
        passage_degree = np.asarray(links_matrix.sum(axis=0)).ravel()
        about_total = np.asarray(about.sum(axis=1)).ravel()
        with np.errstate(divide="ignore"):
            inverse_about = np.where(about_total > 0, 1.0 / about_total, 0.0)
            inverse_passage = np.where(passage_degree > 0, 1.0 / passage_degree, 0.0)
        # One step of the walk each way: an entity's mass goes to its passages in proportion to the facts each
        # reads about it (the passage about the entity gets most); a passage's mass is split evenly among the
        # entities it names (a bridge named once counts as much as the passage's subject).
        self._to_passages = sparse.diags(inverse_about).dot(about).T.tocsr()
        self._to_entities = links_matrix.dot(sparse.diags(inverse_passage)).tocsr()
        self._names: dict[str, list[int]] = defaultdict(list)
        self._words: dict[str, set[int]] = defaultdict(set)
        for key, entity in links.names:
            index = entity_index.get(entity)
            if index is None or not key:
                continue
            if index not in self._names[key]:
                self._names[key].append(index)
            for word in key.split():
                self._words[word].add(index)

    @property
    def empty(self) -> bool:
        return not self.passages

    def specificity(self, index: int) -> float:
        """How much naming this entity says: one over the passages naming it (HippoRAG's node specificity), so a
        name found in one passage seeds the walk fifteen times as strongly as one found in fifteen."""
        return 1.0 / max(1.0, float(self.entity_degree[index]))

    def seeds(self, question: str) -> QuestionSeeds:
        """The entities `question` names: the longest word spans holding a proper noun that are an entity's name
        or alias, then, for runs of proper nouns left unmatched ("Olsen"), the few entities whose names hold all
        their words."""
        if self.empty:
            return QuestionSeeds()
        tokens = [token for token in parse_question(question) if not token.is_space]
        doc = tokens[0].doc if tokens else None
        matches: list[tuple[int, int, str, Collection[int]]] = []
        for start in range(len(tokens)):
            for end in range(start + 1, min(len(tokens), start + MAX_NAME_WORDS) + 1):
                span = tokens[start:end]
                if not any(_is_name(token) for token in span):
                    continue  # "film", "city": common nouns that some passage capitalised are not names
                key = normalise_name(doc[span[0].i : span[-1].i + 1].text)
                found = self._names.get(key) if key else None
                if found:
                    matches.append((start, end, key, found))
        matches.sort(key=lambda match: (match[0] - match[1], match[0]))
        # Then the runs of proper nouns, where no longer name covers them.
        for start, end in _name_runs(tokens):
            words = normalise_name(doc[tokens[start].i : tokens[end - 1].i + 1].text).split()
            if words and all(word in self._words for word in words):
                candidates = set.intersection(*(self._words[word] for word in words))
                if 1 <= len(candidates) <= MAX_PARTIAL_CANDIDATES:
                    matches.append((start, end, " ".join(words), candidates))
        covered: list[tuple[int, int]] = []
        weights: dict[int, float] = defaultdict(float)
        names: list[str] = []
        for start, end, key, found in matches:
            if any(low <= start and end <= high for low, high in covered):
                continue  # "Tarnby" inside "South Tarnby"
            covered.append((start, end))
            names.append(key)
            for index in found:
                weights[index] += self.specificity(index) / len(found)
        return QuestionSeeds({self.entities[i]: w for i, w in weights.items()}, tuple(names))

    def walk(self, seeds: dict[str, float], damping: float = DEFAULT_DAMPING) -> tuple[np.ndarray, np.ndarray]:
        """Personalised PageRank from `seeds` (entity uuid -> weight): the stationary mass of every passage and of
        every entity."""
        restart = np.zeros(len(self.entities))
        for entity, weight in seeds.items():
            index = self._entity_index.get(entity)
            if index is not None and weight > 0:
                restart[index] += weight
        total = restart.sum()
        if total <= 0:
            return np.zeros(len(self.passages)), restart
        restart /= total
        on_entities = restart.copy()
        on_passages = np.zeros(len(self.passages))
        for _ in range(ITERATIONS):
            on_passages, on_entities = (
                damping * self._to_passages.dot(on_entities),
                (1.0 - damping) * restart + damping * self._to_entities.dot(on_passages),
            )
        return on_passages, on_entities

    def top_passages(self, question: str, limit: int = 10, damping: float = DEFAULT_DAMPING) -> PassageWalk:
        """The `limit` passages the walk from the question's entities reaches with the most mass, best first, and
        the entities it reaches (the seeds and their bridges)."""
        seeds = self.seeds(question)
        if not seeds.weights:
            return PassageWalk([], seeds, [])
        on_passages, on_entities = self.walk(seeds.weights, damping)
        passages = [
            WalkedPassage(self.passages[i][0], self.passages[i][1], float(on_passages[i]))
            for i in _best(on_passages, limit)
        ]
        entities = [self.entities[i] for i in _best(on_entities, limit)]
        return PassageWalk(passages, seeds, entities)


def _best(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the `limit` highest positive scores, best first."""
    reached = np.flatnonzero(scores > 0)
    return reached[np.argsort(-scores[reached], kind="stable")][:limit]


class PassageGraphCache:
    """The entity-passage graph of one store, read once and rebuilt when the store's change counter moves.

    Each `get()` asks the store for its counter (one cheap read); stores without one are re-read after `ttl_s`.
    A graph that read quickly (under `blocking_build_s`) is rebuilt before answering, so the next question sees
    a change at once; a large one is rebuilt in a background thread while questions keep the previous graph, so
    ingestion into a large knowledge base never makes the graph branch wait or time out.
    """

    def __init__(
        self, store: GraphStore, ttl_s: float = DEFAULT_TTL_S, blocking_build_s: float = BLOCKING_BUILD_S
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.blocking_build_s = blocking_build_s
        self._graph: EntityPassageGraph | None = None
        self._version: str | None = None
        self._loaded_at = 0.0
        self._build_s = 0.0
        self._lock = threading.Lock()

    def _fresh(self, version: str | None) -> bool:
        if version is not None:
            return version == self._version
        return time.monotonic() - self._loaded_at < self.ttl_s

    def _build(self, version: str | None) -> EntityPassageGraph:
        started = time.perf_counter()
        # The counter was read before the links: a write in between moves it again and triggers a new read.
        graph = EntityPassageGraph(self.store.entity_passage_links())
        self._build_s = time.perf_counter() - started
        self._graph, self._version, self._loaded_at = graph, version, time.monotonic()
        logger.info(
            "Entity-passage graph read: {entities} entities, {passages} passages in {elapsed_ms:.0f} ms",
            entities=len(graph.entities),
            passages=len(graph.passages),
            elapsed_ms=self._build_s * 1000,
        )
        return graph

    def _rebuild_in_background(self, version: str | None) -> None:
        try:
            self._build(version)
        except Exception as exc:  # noqa: BLE001 - the previous graph keeps serving; the next question tries again
            logger.warning("Entity-passage graph not re-read: {reason}", reason=cut(str(exc), 200))
        finally:
            self._lock.release()  # taken by `get` for this rebuild

    def get(self) -> EntityPassageGraph:
        """The current graph (built on first use and after every change; see the class for large graphs)."""
        version = self.store.graph_version()
        graph = self._graph
        if graph is not None and self._fresh(version):
            return graph
        if graph is not None and self._build_s > self.blocking_build_s:
            # One rebuild at a time, in the background; questions keep the previous graph until it is done.
            if self._lock.acquire(blocking=False):
                threading.Thread(
                    target=self._rebuild_in_background, args=(version,), name="passage-graph", daemon=True
                ).start()
            return graph
        with self._lock:
            return self._graph if self._graph is not None and self._fresh(version) else self._build(version)
