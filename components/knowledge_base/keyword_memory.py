"""`KeywordMemory`: an exact in-memory copy of a pgvector collection's keyword postings, kept per process and used
only while it is the database's current one.

`<table>_postings_totals` carries a `generation` that every write of a chunk's postings changes, in the
transaction that writes them (`KeywordPostings.add` / `forget`). A copy (`MemoryPostings`) is loaded in one
REPEATABLE READ snapshot (the generation, the totals, the document frequencies, every chunk's term counts) and
knows the generation it was loaded at. A question is scored in memory, and the rows it names are read in one
statement together with the database's generation (`PgvectorChunkIndex.keyword`): when the generation is the copy's,
the answer is exact for that statement's snapshot; when it is not, the question is answered by the server-side
function (exact, so never stale) and the copy is loaded again in a background thread, off the question's path.

Scores are those of the server-side function (`KeywordPostings`): BM25 with k1 1.2, b 0.75 (`components.text.bm25`),
the IDF of the collection's document frequencies (`<table>_terms`), the average length of the totals; ties broken
by chunk id byte-wise (the copy numbers the chunks in that order). The copy holds per term the chunk numbers and term
counts of its postings (int32 and uint16 arrays, term after term) and per chunk its length: about 6 bytes a
posting plus the chunk ids and the vocabulary (`MemoryPostings.nbytes`). A collection with more postings than the
caller's `max_postings` is not copied: its questions go to the function. The cap counts the copies of every collection
in the process together: a copy no question read for a minute is let go to make room for another collection's.

Copies are shared per process, one per (database, schema, collection) (`shared_memory`): every component of a
process that keyword-searches a collection reads the same copy, as they share the database's connection pool.

Usage:
```python
memory = shared_memory(url, pool, postings)
copy = memory.current(max_postings=10_000_000)   # None: not loaded (a load starts in the background), or too large
if copy is not None:
    ranked = copy.ranked(["bm25", "rank"], depth=10)   # [(chunk_id, score), ...], best first
    ...                                                # read the rows and the generation; compare with copy.generation
```
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from array import array
from typing import Any

import numpy as np
from haystack import logging

from components.knowledge_base.registry import pooled_connection
from components.text import bm25

logger = logging.getLogger(__name__)

# A load reads its chunks' term counts in batches of this many rows (a server-side cursor: the client holds one
# batch of parsed counts at a time).
LOAD_BATCH = 2000
# After a load, the next one starts no sooner than this many times the last load's duration (and at least
# MIN_RELOAD_S) after it ended: while a collection is being written, a process loads again at most a third of the
# time, and questions meanwhile go to the server-side function.
RELOAD_PAUSE = 2.0
MIN_RELOAD_S = 1.0
# A collection found too large is measured again (one sum over the document frequencies) at most this often.
RECHECK_S = 60.0
# The cap counts the postings of every collection's copy in the process: to make room for one, the copies no question
# read for this long are let go, least recently read first; copies read more recently are kept (no two collections
# take turns evicting each other), and the collection waits on the database for RECHECK_S.
IDLE_S = 60.0


class MemoryPostings:
    """One collection's postings as loaded at `generation`; immutable once made, so searches read it without a
    lock."""

    def __init__(
        self,
        generation: int,
        chunk_ids: list[str],
        lengths: np.ndarray,
        n_chunks: int,
        total_terms: int,
        df: dict[str, int],
        vocabulary: dict[str, tuple[int, int]],
        chunks: np.ndarray,
        counts: np.ndarray,
    ) -> None:
        self.generation = generation
        self.chunk_ids = chunk_ids  # in byte order of the ids: a chunk's number breaks its ties
        self.n = len(chunk_ids)
        # The statistics of the totals, as the server-side function reads them (they count the same chunks).
        self.n_chunks = n_chunks
        self.average = float(total_terms) / float(n_chunks) if n_chunks > 0 else 0.0
        self.lengths = lengths  # float64, per chunk number
        self.df = df
        self.vocabulary = vocabulary  # term -> (start, end) of its postings in `chunks` / `counts`
        self.chunks = chunks
        self.counts = counts
        self.postings = int(len(chunks))

    @property
    def nbytes(self) -> int:
        """Bytes the copy holds: its arrays, the chunk ids and the two dicts with their keys."""
        arrays = self.lengths.nbytes + self.chunks.nbytes + self.counts.nbytes
        ids = sys.getsizeof(self.chunk_ids) + sum(sys.getsizeof(chunk_id) for chunk_id in self.chunk_ids)
        terms = sum(sys.getsizeof(term) + sys.getsizeof(span) for term, span in self.vocabulary.items())
        return arrays + ids + terms + sys.getsizeof(self.vocabulary) + sys.getsizeof(self.df)

    def ranked(self, terms: list[str], depth: int) -> list[tuple[str, float]]:
        """The `depth` best chunks by BM25 over the distinct `terms` (analyzer terms), `(chunk_id, score)` best
        first, ties by chunk id; only chunks holding one of the terms."""
        if self.n <= 0 or self.n_chunks <= 0 or self.average <= 0 or depth <= 0:
            return []
        scores = np.zeros(self.n, dtype=np.float64)
        touched = 0
        for term in sorted(set(terms)):
            span = self.vocabulary.get(term)
            df = self.df.get(term, 0)
            if span is None or df <= 0:
                continue
            start, end = span
            members = self.chunks[start:end]
            idf = bm25.idf(self.n_chunks, min(df, self.n_chunks))
            scores[members] += idf * bm25.term_weight(
                self.counts[start:end].astype(np.float64), self.lengths[members], self.average
            )
            touched += end - start
        if not touched:
            return []
        # Only chunks holding a term score above 0; among them every chunk tied with the depth-th is kept, and the
        # order is (score, chunk number): the function's (score, chunk id byte-wise).
        candidates = np.flatnonzero(scores > 0)
        if depth < len(candidates):
            held = scores[candidates]
            kth = held[np.argpartition(-held, depth - 1)[depth - 1]]
            candidates = candidates[held >= kth]
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:depth]
        return [(self.chunk_ids[number], float(scores[number])) for number in order]


class KeywordMemory:
    """The in-memory copy of one collection's postings in this process, and its background loads. Thread-safe."""

    def __init__(self, pool: Any, postings: Any) -> None:
        self._pool = pool
        self._postings = postings  # the collection's `KeywordPostings` (its table names)
        self._copy: MemoryPostings | None = None
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None
        self._next_load = 0.0  # monotonic time before which no load starts
        self._too_large: tuple[int, float] | None = None  # (postings, when measured) of a collection not copied
        self._no_room_until = 0.0  # monotonic time before which no load is tried (the other copies fill the cap)
        self._used = 0.0  # monotonic time a question last read the copy
        self.loads = 0  # loads finished (tests and the benchmark read it)

    @property
    def pool(self) -> Any:
        """The connection pool the copy loads through."""
        return self._pool

    def current(self, max_postings: int) -> MemoryPostings | None:
        """The loaded copy when it is within `max_postings`, else None; without one, a load is started in the
        background when none runs and the pause after the last has passed."""
        copy = self._copy
        if copy is not None and copy.postings <= max_postings:
            self._used = time.monotonic()
            return copy
        if max_postings > 0 and copy is None and time.monotonic() >= self._no_room_until:
            too_large = self._too_large
            if too_large is None or too_large[0] <= max_postings or time.monotonic() - too_large[1] >= RECHECK_S:
                self.refresh(max_postings)
        return None

    def stale(self, generation: int, max_postings: int) -> None:
        """The database is at `generation`: when the copy is another one, load it again (in the background)."""
        copy = self._copy
        if copy is None or copy.generation != generation:
            self.refresh(max_postings)

    def refresh(self, max_postings: int) -> None:
        """Start a background load unless one runs or the pause after the last one has not passed."""
        with self._lock:
            if (self._loading is not None and self._loading.is_alive()) or time.monotonic() < self._next_load:
                return
            self._loading = threading.Thread(
                target=self._load_quietly,
                args=(max_postings,),
                name=f"keyword-memory-{self._postings.collection}",
                daemon=True,
            )
            _stop_loads_at_exit()
            self._loading.start()

    def wait(self, timeout_s: float = 60.0) -> bool:
        """Wait for a running load; True when none runs any more."""
        thread = self._loading
        if thread is not None:
            thread.join(timeout_s)
            return not thread.is_alive()
        return True

    def forget(self) -> None:
        """Drop the copy (the collection was dropped)."""
        self.wait()
        with self._lock:
            self._copy, self._too_large, self._next_load, self._no_room_until = None, None, 0.0, 0.0

    def _let_go(self) -> int:
        """Drop the copy to make room for another collection's; the postings it held."""
        with self._lock:
            copy, self._copy = self._copy, None
        return 0 if copy is None else copy.postings

    def _room(self, postings: int, max_postings: int) -> bool:
        """Whether a copy of `postings` fits under the cap beside the other collections' copies in the process, after
        letting go of those idle for IDLE_S (least recently read first)."""
        with _SHARED_LOCK:
            others = [memory for memory in _SHARED.values() if memory is not self and memory._copy is not None]
        held = sum(memory._copy.postings for memory in others if memory._copy is not None)
        now = time.monotonic()
        for memory in sorted(others, key=lambda other: other._used):
            if held + postings <= max_postings or now - memory._used < IDLE_S:
                break
            held -= memory._let_go()
        return held + postings <= max_postings

    def _load_quietly(self, max_postings: int) -> None:
        started = time.monotonic()
        try:
            self.load(max_postings)
        except LoadStopped:
            pass
        except Exception as exc:  # noqa: BLE001 - a failed load leaves questions on the server-side function
            logger.warning(
                "The in-memory keyword index of {collection} could not be loaded: {reason}",
                collection=self._postings.collection,
                reason=str(exc).splitlines()[0] if str(exc) else repr(exc),
            )
        finally:
            spent = time.monotonic() - started
            with self._lock:
                self._next_load = time.monotonic() + max(MIN_RELOAD_S, RELOAD_PAUSE * spent)

    def load(self, max_postings: int) -> MemoryPostings | None:
        """Load the copy now, in one snapshot (None, and nothing kept, when the collection has more than
        `max_postings` postings or no totals)."""
        q = self._postings.statement
        with pooled_connection(self._pool) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            row = conn.execute(
                q("SELECT generation, chunks, terms, (SELECT coalesce(sum(df), 0) FROM {terms}) FROM {totals}")
            ).fetchone()
            if row is None:
                return None
            generation, n_chunks, total_terms, postings = (int(value) for value in row)
            if postings > max_postings:
                self._too_large = (postings, time.monotonic())
                logger.info(
                    "Keyword search of {collection} stays on the database: {postings} postings, more than the "
                    "{limit} an in-memory index may hold",
                    collection=self._postings.collection,
                    postings=postings,
                    limit=max_postings,
                )
                with self._lock:
                    self._copy = None
                return None
            if not self._room(postings, max_postings):
                self._no_room_until = time.monotonic() + RECHECK_S
                logger.info(
                    "Keyword search of {collection} stays on the database for now: its {postings} postings do not fit "
                    "beside the other in-memory keyword indexes of this process (at most {limit} postings in all)",
                    collection=self._postings.collection,
                    postings=postings,
                    limit=max_postings,
                )
                return None
            df = dict(conn.execute(q("SELECT term, df FROM {terms} WHERE df > 0")).fetchall())
            vocabulary: dict[str, int] = {}
            term_ids, term_counts, per_chunk = array("i"), array("i"), array("i")
            chunk_ids: list[str] = []
            lengths = array("i")
            number = vocabulary.setdefault
            with conn.cursor(name=f"keyword_memory_{threading.get_ident()}") as cursor:
                cursor.itersize = LOAD_BATCH
                cursor.execute(
                    q(
                        "SELECT chunk_id, term_total, term_counts FROM {chunk_terms} "
                        'WHERE term_counts IS NOT NULL AND term_total > 0 ORDER BY chunk_id COLLATE "C"'
                    )
                )
                for chunk_id, length, counts in cursor:
                    if _STOPPING.is_set():
                        raise LoadStopped("the process is exiting")
                    chunk_ids.append(chunk_id)
                    lengths.append(int(length))
                    term_ids.extend([number(term, len(vocabulary)) for term in counts])
                    term_counts.extend(counts.values())
                    per_chunk.append(len(counts))
        copy = _assemble(
            generation, total_terms, n_chunks, chunk_ids, lengths, df, vocabulary, term_ids, term_counts, per_chunk
        )
        with self._lock:
            self._copy, self._too_large, self._no_room_until = copy, None, 0.0
            self._used = time.monotonic()
            self.loads += 1
        logger.debug(
            "In-memory keyword index of {collection} loaded: {chunks} chunks, {postings} postings, generation {g}",
            collection=self._postings.collection,
            chunks=copy.n,
            postings=copy.postings,
            g=generation,
        )
        return copy


def _assemble(
    generation: int,
    total_terms: int,
    n_chunks: int,
    chunk_ids: list[str],
    lengths: array,
    df: dict[str, int],
    vocabulary: dict[str, int],
    term_ids: array,
    term_counts: array,
    per_chunk: array,
) -> MemoryPostings:
    """The chunk-major postings read, term-major: each term's postings contiguous."""
    if n_chunks != len(chunk_ids):  # the totals and the counts are one snapshot: they agree unless a write broke them
        logger.warning("The keyword totals count {n} chunks, the term counts {m}", n=n_chunks, m=len(chunk_ids))
    terms = np.frombuffer(term_ids, dtype=np.int32) if len(term_ids) else np.zeros(0, dtype=np.int32)
    chunk_of = np.repeat(
        np.arange(len(chunk_ids), dtype=np.int32),
        np.frombuffer(per_chunk, dtype=np.int32) if len(per_chunk) else np.zeros(0, dtype=np.int32),
    )
    tf = np.frombuffer(term_counts, dtype=np.int32) if len(term_counts) else np.zeros(0, dtype=np.int32)
    order = np.argsort(terms, kind="stable")
    chunks = chunk_of[order]
    counts = tf[order].astype(np.uint16 if (tf.size == 0 or int(tf.max()) <= np.iinfo(np.uint16).max) else np.int32)
    del order, chunk_of
    ends = np.cumsum(np.bincount(terms, minlength=len(vocabulary)))
    spans = {term: (int(ends[i - 1]) if i else 0, int(ends[i])) for term, i in vocabulary.items()}
    lengths_f = np.frombuffer(lengths, dtype=np.int32).astype(np.float64) if len(lengths) else np.zeros(0)
    return MemoryPostings(generation, chunk_ids, lengths_f, n_chunks, total_terms, df, spans, chunks, counts)


_SHARED: dict[tuple[str, str, str], KeywordMemory] = {}
_SHARED_LOCK = threading.Lock()
_STOPPING = threading.Event()
_AT_EXIT: list[bool] = []


class LoadStopped(Exception):
    """A load given up because the process is exiting."""


def _stop_loads_at_exit() -> None:
    """At the process's exit, stop the loads still running and wait for them (a few seconds at most), before the
    database connections close and an embedded server stops (registered after them, so run before them): a one-shot
    command that warmed a search up leaves no reader behind."""
    if _AT_EXIT:
        return
    _AT_EXIT.append(True)

    def stop() -> None:
        _STOPPING.set()
        for memory in list(_SHARED.values()):
            memory.wait(5.0)

    atexit.register(stop)


def shared_memory(url: str, pool: Any, postings: Any) -> KeywordMemory:
    """The process's `KeywordMemory` of the collection `postings` names on the database at `url`.

    A memory whose pool has been closed (`close_pools`, the last `DatabaseLease` of its database, before a forked
    worker starts) is let go, its copy with it: it could never load again, and a database opened again (an embedded
    server restarted, perhaps on another port) gets a memory on its new pool."""
    key = (url, postings.schema, postings.collection)
    with _SHARED_LOCK:
        for held, memory in list(_SHARED.items()):
            if memory.pool is not pool and getattr(memory.pool, "closed", False):
                del _SHARED[held]
        memory = _SHARED.get(key)
        if memory is None:
            memory = _SHARED[key] = KeywordMemory(pool, postings)
        return memory
