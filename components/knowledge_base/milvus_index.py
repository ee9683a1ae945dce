"""`MilvusChunkIndex`: a knowledge base's chunks in milvus-haystack's `MilvusDocumentStore`.

What goes through the integration and what through its client (milvus-haystack 0.1.0, read and measured): every call
goes through one pymilvus `MilvusClient` per file, in the integration's own layout, by `milvus_adapter` (the store's
field names from its public `to_dict`; no private member of the store):

- Writes: upserts of the rows the store's `write_documents(..., policy=OVERWRITE)` would write; the collection is
  created as its first write creates it: an ordinary Haystack collection (`id`, `text`, `vector`, meta in the dynamic
  field) with Milvus's BM25 built-in function on `text`.
- Dense and keyword search: the shared client's `search`, with the integration's filter translation
  (`milvus_haystack.filters.parse_filters`). The integration's retrieval asks for every field, so each hit carries its
  384-float vector and sparse vector back; and its scores are mapped by the `index_params` given to the constructor, so
  a reopened or attached collection built without them returns raw distances. Here the metric is read from the
  collection's own vector index and every score is translated in one place (`_translate`): squared L2 back to cosine,
  and milvus-lite's negative BM25 distances (more negative is better) to their magnitude.
- Fetching by id: `client.get` by primary key (the integration's `filter_documents` filters, returns
  vectors and stops silently at 10,000 rows).
- Evidence (sentence spans with their in-context vectors, term counts, each term's document frequency) in side
  collections on the same client, beside the integration's rows, which are never altered: `<collection>_evidence` (per
  chunk: term counts, sentence spans, and the sentence vectors as base64 float16, so one read by primary key serves the
  ranker) and `<collection>_terms` (the document frequencies and, under the empty term, the chunk count and total term
  count that BM25's average length needs); for a collection without Milvus's BM25 function (one Haystack's
  `DocumentWriter` filled), `<collection>_keywords` holds a copy of its texts and meta with that function, so that
  keyword search and its filters work there too. Evidence writes are read-modify-write under the shared client's lock:
  one writing process per collection, which milvus-lite enforces anyway.

milvus-lite traps handled: rows sit in an unindexed buffer that searches slowly until a flush, so written collections
are flushed before the next search, and `ensure_vector_index` has every flushed segment's index built (release and
load); its folder opens in one process only (`open_milvus_document_store` says so in one sentence), and every index of
one file in one process (YAML deserialisation makes a store object per component) shares one client through
`CLIENTS`, the one cache of clients here.
"""

from __future__ import annotations

import base64
import math
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from haystack import Document, logging

from components.contracts import ScoreKind
from components.knowledge_base import milvus_adapter
from components.knowledge_base.chunk_index import (
    ChunkEvidence,
    ChunkIndex,
    IndexHit,
    TermTotals,
    batches,
    check_vector,
    in_order,
    index_hit,
)
from components.knowledge_base.factory import embedding_dimension
from components.knowledge_base.keyword_terms import ENGLISH_STOP_WORDS, terms
from components.knowledge_base.milvus_adapter import MilvusLayout
from components.knowledge_base.shared_clients import SharedClient, SharedClients
from components.knowledge_base.store import KnowledgeBaseMismatch, KnowledgeBaseUnavailable, TermStatistics
from components.resilience.errors import first_line
from components.settings import default_setting, get_settings
from components.validation import clamp

logger = logging.getLogger(__name__)


def _import_pymilvus() -> None:
    """Import pymilvus with a milvus-lite path in MILVUS_URI hidden: pymilvus parses that variable at import time
    and rejects anything but a server address, while here it is our setting and may name a milvus-lite file."""
    saved = os.environ.get("MILVUS_URI")
    hidden = saved is not None and "://" not in saved
    if hidden:
        del os.environ["MILVUS_URI"]
    try:
        import pymilvus  # noqa: F401
    finally:
        if hidden:
            os.environ["MILVUS_URI"] = saved


_import_pymilvus()

# Milvus caps limit + offset of one query or search at 16,384.
METRIC: str = default_setting("milvus_metric")  # the MILVUS_METRIC setting's default
_WINDOW = 16_384
_BATCH = 1_000
_KEY_LENGTH = 1_024
_VARCHAR = 65_535
# The empty term's row in `<collection>_terms` holds the collection totals (no analyzer term is empty).
_TOTALS = ""
# Milvus collection names; the side collections add up to 12 characters.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
# The collection property naming the embedding model of a collection the assistant created (milvus-lite keeps no
# collection description).
_MODEL_PROPERTY = "research_assistant.embedding_model"
_ANALYSIS_PROPERTY = "research_assistant.text_analysis"

# The analyzer of the BM25 function: Milvus's standard tokenizer with the product's one stop-word list, so Milvus
# and `keyword_terms.terms` drop the same words.
ANALYZER_PARAMS: dict[str, Any] = {
    "tokenizer": "standard",
    "filter": ["lowercase", {"type": "stop", "stop_words": list(ENGLISH_STOP_WORDS)}],
}


def is_lite(uri: str) -> bool:
    """Whether `uri` names a milvus-lite file rather than a server."""
    return uri.endswith(".db") and "://" not in uri


def lite_folder_in_use(folder: Path) -> bool:
    """Whether another process holds milvus-lite's lock on `folder` (a non-blocking flock on its LOCK file)."""
    import fcntl

    lock_file = folder / "LOCK"
    if not lock_file.exists():
        return False
    fd = os.open(lock_file, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # closing the descriptor releases it
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _open_in_this_process(folder: Path) -> bool:
    """Whether milvus-lite already serves `folder` in this process (its lock is then ours, not another's)."""
    return CLIENTS.holds(str(folder)) or milvus_adapter.held_by_this_process(folder)


def open_milvus_document_store(collection: str, *, uri: str, metric: str = METRIC) -> Any:
    """The `MilvusDocumentStore` the assistant writes a knowledge base into: collection `collection` with
    Milvus's BM25 function on `text` (the product's stop words), `index_params` for `metric` (so Haystack's own
    retrievers score a reopened collection correctly too), a server's token as the env-var `Secret` `MILVUS_TOKEN`
    (never a value), and `drop_old=False`.

    Raises `KnowledgeBaseUnavailable` with one sentence when a milvus-lite file is open in another process or the
    server cannot be reached.
    """
    from haystack.utils import Secret
    from milvus_haystack import MilvusDocumentStore
    from milvus_haystack.function import BM25BuiltInFunction

    if not isinstance(collection, str) or not _NAME.match(collection):
        raise ValueError(
            f"Collection name {collection!r} is not allowed in Milvus: use letters, digits and underscores, starting "
            "with a letter or underscore."
        )
    connection_args: dict[str, Any] = {"uri": uri}
    if is_lite(uri):
        folder = Path(uri).expanduser().resolve()
        folder.parent.mkdir(parents=True, exist_ok=True)
        if not _open_in_this_process(folder) and lite_folder_in_use(folder):
            raise KnowledgeBaseUnavailable(
                f"The Milvus Lite database {folder} is open in another process (milvus-lite allows one process per "
                "folder): close that process, set MILVUS_URI to a Milvus server, or use KB_BACKEND=pgvector."
            )
        connection_args["uri"] = str(folder)
    else:
        connection_args["token"] = Secret.from_env_var("MILVUS_TOKEN", strict=False)
    try:
        return MilvusDocumentStore(
            collection_name=collection,
            connection_args=connection_args,
            index_params={"metric_type": metric, "index_type": "AUTOINDEX", "params": {}},
            search_params={"metric_type": metric, "params": {}},
            sparse_vector_field="sparse",
            builtin_function=[
                BM25BuiltInFunction(
                    input_field_names="text",
                    output_field_names="sparse",
                    analyzer_params=ANALYZER_PARAMS,
                    function_name=f"{collection}_bm25",
                )
            ],
            drop_old=False,
        )
    except Exception as exc:  # noqa: BLE001 - pymilvus raises anything when it cannot connect
        raise KnowledgeBaseUnavailable(
            f"Cannot reach Milvus at {_where(uri)}: {first_line(exc)}; check MILVUS_URI and MILVUS_TOKEN, or use "
            "KB_BACKEND=pgvector."
        ) from exc


def document_store_for(settings: Any, collection: str, dimension: int) -> Any:
    """The `MilvusDocumentStore` of `collection` for the catalog, as the settings say: `MILVUS_URI` (empty: the
    milvus-lite file `RESEARCH_DATA_DIR/milvus/knowledge_base.db`), `MILVUS_TOKEN` read from the environment when
    used, `MILVUS_METRIC`. The dimension is the first write's (the integration creates the collection then)."""
    uri = settings.milvus_uri or str(settings.data_dir / "milvus" / "knowledge_base.db")
    return open_milvus_document_store(collection, uri=uri, metric=settings.milvus_metric)


def open_chunk_index(
    document_store: Any, embedding_model: str | None = None, checks_text_analysis: bool = True
) -> MilvusChunkIndex:
    """The chunk index over `document_store`, for `embedding_model` (default: the settings'), with the dimension of
    the settings' model."""
    settings = get_settings()
    model = embedding_model or settings.embedding_model
    return MilvusChunkIndex(
        document_store,
        embedding_model=model,
        dimension=embedding_dimension(settings),
        checks_text_analysis=checks_text_analysis,
    )


def collection_names(document_store: Any) -> list[str]:
    """The collections Milvus holds, listed by the store's own client (a `MilvusDocumentStore` creates its collection
    at its first write, not when made)."""
    return list(document_store.client.list_collections())


def _stop_lite_server(key: str, entry: SharedClient) -> None:
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(key)


# The Milvus clients of this process, one per milvus-lite file. milvus-lite locks its folder to one process, and every
# `MilvusDocumentStore` opens its own client; two store objects for one file (a writer and a retriever loaded from one
# `pipelines.yaml`) would keep separate flush bookkeeping and release the folder at different times. So every index of
# a file calls the first store's client, and milvus-lite's server for the file stops when the last index closes (every
# store object of the file in this process then needs reopening). Server URIs are not shared.
CLIENTS = SharedClients(close=_stop_lite_server)


def _acquire(document_store: Any, key: str | None) -> SharedClient:
    if key is None:
        return SharedClient(document_store.client, users=1)
    return CLIENTS.acquire(key, lambda: document_store.client)


def _lite_key(document_store: Any) -> str | None:
    uri = str((document_store.connection_args or {}).get("uri", ""))
    return str(Path(uri).expanduser().resolve()) if is_lite(uri) else None


# -- the index ----------------------------------------------------------------------------------------------------


class MilvusChunkIndex(ChunkIndex):
    """The chunks of one knowledge base in a `MilvusDocumentStore` (milvus-lite file, Milvus server or cluster).

    Usage:
    ```python
    store = open_milvus_document_store("research", uri="kb.db")
    index = MilvusChunkIndex(store, embedding_model="all-MiniLM-L6-v2", dimension=384)
    index.write([record_to_document(document, chunk) for chunk in chunks], [ChunkEvidence.of(c) for c in chunks])
    hits = index.dense(query_vector, limit=5, filters=search_filters_to_haystack(SearchFilters(doc_types=("pdf",))))
    ```
    """

    backend = "milvus"

    def __init__(
        self, document_store: Any, *, embedding_model: str = "", dimension: int = 384, checks_text_analysis: bool = True
    ) -> None:
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        self.checks_text_analysis = checks_text_analysis  # False: a reader that never keyword-searches or writes
        self.document_store = document_store
        self.embedding_model = embedding_model
        self.dimension = int(dimension)
        self.collection = document_store.collection_name
        self.layout = MilvusLayout.of(document_store)
        self.evidence_name = f"{self.collection}_evidence"
        self.terms_name = f"{self.collection}_terms"
        self.keywords_name = f"{self.collection}_keywords"
        self._names: tuple[str, ...] = (self.collection, self.evidence_name, self.terms_name)
        self._lite_key = _lite_key(document_store)  # None on a server
        self._shared = _acquire(document_store, self._lite_key)
        self._open_lock = threading.Lock()
        self._opened = False
        self._metric = "COSINE"
        self._output: list[str] = []
        self._keyword_ready = False
        self._analysis_beside = False  # an attached collection: its text analysis is recorded on its terms collection
        self._closed = False
        try:
            self._open()  # an existing collection is checked now (layout, model, dimension), not at the first search
        except BaseException:
            self.close()
            raise

    @property
    def client(self) -> Any:
        return self._shared.client

    # -- opening ------------------------------------------------------------------------------------------------

    def _open(self) -> bool:
        """Read the collection's shape once it exists (False until then): metric, fields, the BM25 function."""
        if self._opened:
            return True
        with self._open_lock:
            if self._opened:
                return True
            if not self.client.has_collection(self.collection):
                self._check_old_layout()
                return False
            description = self.client.describe_collection(self.collection)
            self._check_shape(description)
            self._read_shape(description)
            self._ensure_evidence_collections()
            for name in self._names:
                # milvus-lite reopens collections released; searches on them fail until they are loaded.
                self.client.load_collection(name)
            if self._analysis_beside:
                self._check_analysis_beside()
            self._opened = True
            return True

    def _check_analysis_beside(self) -> None:
        """The text analysis that counts an attached collection's terms (enrichment), recorded on its terms
        collection when that holds none yet, and checked whenever the collection is opened."""
        recorded = (self.client.describe_collection(self.terms_name).get("properties") or {}).get(_ANALYSIS_PROPERTY)
        holds = milvus_adapter.count(self.client, self.terms_name) > 0
        analysis = self.check_text_analysis(recorded, holds_chunks=holds)
        if analysis is not None and recorded is None:
            self.client.alter_collection_properties(self.terms_name, {_ANALYSIS_PROPERTY: analysis})

    def _check_old_layout(self) -> None:
        """One sentence instead of an empty knowledge base when this name holds an earlier version's collections."""
        old = f"{self.collection}_chunks"
        if self.client.has_collection(old) and self.client.has_collection(f"{self.collection}_documents"):
            fields = self.client.describe_collection(old).get("fields", [])
            if any(item.get("is_primary") and item["name"] == "chunk_id" for item in fields):
                raise KnowledgeBaseMismatch(
                    f"Milvus holds knowledge base {self.collection!r} in an earlier version's layout (collections "
                    f"{old}, {self.collection}_documents, {self.collection}_sources); re-ingest it under another "
                    "KB_COLLECTION, or drop those collections."
                )

    def _check_shape(self, description: dict[str, Any]) -> None:
        fields = {item["name"]: item for item in description.get("fields", [])}
        primary = next((name for name, item in fields.items() if item.get("is_primary")), None)
        if primary != self.layout.primary or self.layout.vector not in fields:
            raise KnowledgeBaseMismatch(
                f"Milvus collection {self.collection!r} is not a Haystack collection (no primary key "
                f"{self.layout.primary!r} and vector {self.layout.vector!r}); give the store its field names, or use "
                "another collection."
            )
        dimension = int(fields[self.layout.vector].get("params", {}).get("dim", self.dimension))
        properties = description.get("properties") or {}
        self.check_embeddings(dimension, properties.get(_MODEL_PROPERTY))
        recorded = properties.get(_ANALYSIS_PROPERTY)
        # A collection the assistant did not make (attached) is never altered: its record is beside it.
        self._analysis_beside = recorded is None and not properties.get(_MODEL_PROPERTY)
        if not self._analysis_beside:
            self.check_text_analysis(recorded, holds_chunks=True)

    def _read_shape(self, description: dict[str, Any]) -> None:
        layout = self.layout
        index = milvus_adapter.vector_index(self.client, self.collection, layout.vector)
        self._metric = str((index or {}).get("metric_type") or "COSINE").upper()
        skip = {layout.vector, layout.sparse, layout.primary, layout.text}
        vector_types = {"FLOAT_VECTOR", "SPARSE_FLOAT_VECTOR", "BINARY_VECTOR", "FLOAT16_VECTOR", "BFLOAT16_VECTOR"}
        own = [
            item["name"]
            for item in description.get("fields", [])
            if item["name"] not in skip and getattr(item.get("type"), "name", str(item.get("type"))) not in vector_types
        ]
        self._output = [layout.primary, layout.text, *own]
        if description.get("enable_dynamic_field"):
            self._output.append("$meta")
        functions = description.get("functions") or []
        self._keyword_ready = any(layout.sparse in (function.get("output_field_names") or []) for function in functions)

    def _ensure_evidence_collections(self) -> None:
        from pymilvus import DataType

        client = self.client
        if not client.has_collection(self.evidence_name):
            schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=_KEY_LENGTH)
            schema.add_field("counts", DataType.JSON)
            schema.add_field("total", DataType.INT64)
            schema.add_field("spans", DataType.JSON)
            schema.add_field("vectors", DataType.VARCHAR, max_length=_VARCHAR)
            schema.add_field("placeholder", DataType.FLOAT_VECTOR, dim=2)  # Milvus requires a vector field
            self._create(self.evidence_name, schema, "placeholder", "L2")
        if not self._keyword_ready:
            # A collection without Milvus's BM25 function (one Haystack's DocumentWriter filled): keyword search runs
            # on a copy of its texts and meta here, made by `add_evidence` (enrichment) and kept by writes.
            if self.keywords_name not in self._names:
                self._names = (*self._names, self.keywords_name)
            if not client.has_collection(self.keywords_name):
                from pymilvus import Function, FunctionType

                schema = client.create_schema(auto_id=False, enable_dynamic_field=True)
                schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=_VARCHAR)
                schema.add_field(
                    "text", DataType.VARCHAR, max_length=_VARCHAR, enable_analyzer=True, analyzer_params=ANALYZER_PARAMS
                )
                schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
                schema.add_function(
                    Function(
                        name=f"{self.keywords_name}_bm25",
                        input_field_names=["text"],
                        output_field_names=["sparse"],
                        function_type=FunctionType.BM25,
                    )
                )
                self._create(self.keywords_name, schema, "sparse", "BM25", "SPARSE_INVERTED_INDEX")
        if not client.has_collection(self.terms_name):
            schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("term", DataType.VARCHAR, is_primary=True, max_length=_KEY_LENGTH)
            schema.add_field("df", DataType.INT64)
            schema.add_field("total", DataType.INT64)
            schema.add_field("placeholder", DataType.FLOAT_VECTOR, dim=2)
            self._create(self.terms_name, schema, "placeholder", "L2")

    def _create(self, name: str, schema: Any, vector_field: str, metric: str, index_type: str = "AUTOINDEX") -> None:
        index = self.client.prepare_index_params()
        index.add_index(field_name=vector_field, index_type=index_type, metric_type=metric)
        self.client.create_collection(name, schema=schema)
        # Not waiting for the build: pymilvus polls it with an RPC milvus-lite lacks (and sleeps 0.5 s a field).
        self.client.create_index(name, index, sync=False)

    # -- writes -------------------------------------------------------------------------------------------------

    def write(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        if not chunks:
            return
        self.check_chunks(chunks, evidence)
        for doc in chunks:
            if len((doc.content or "").encode("utf-8")) > _VARCHAR:
                raise ValueError(f"Chunk {doc.id} is longer than Milvus's 65,535-byte text limit; split it.")
        # None values are absent meta, not a type the integration would warn about and drop one by one.
        clean = [
            Document(id=doc.id, content=doc.content, embedding=doc.embedding, meta=_meta_values(doc.meta))
            for doc in chunks
        ]
        if not self._open():
            self._create_collection(clean)
        self._open()
        milvus_adapter.upsert_documents(self.client, self.document_store, self.layout, clean, _BATCH)
        with self._shared.lock:
            self._shared.dirty.add(self.collection)
        self.add_evidence(clean, evidence)

    def _create_collection(self, chunks: list[Document]) -> None:
        """Create the collection as the integration's first write would (`milvus_adapter.create_collection`) and
        load it. The collection records the embedding model (only on a collection this index made)."""
        with self._open_lock:
            if self.client.has_collection(self.collection):
                return
            dimension = len(chunks[0].embedding) if chunks[0].embedding is not None else self.dimension
            milvus_adapter.create_collection(self.client, self.document_store, self.layout, dimension)
            # What counted the terms of its keyword index, checked whenever the collection is opened again.
            recorded = {_ANALYSIS_PROPERTY: self.check_text_analysis(None, holds_chunks=False)}
            if self.embedding_model:
                recorded[_MODEL_PROPERTY] = self.embedding_model
            self.client.alter_collection_properties(self.collection, recorded)
            self.client.load_collection(self.collection)

    def add_evidence(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """The side rows: sentences, term counts, document frequencies, and the keyword copy of a collection
        without BM25."""
        if not chunks or not self._open():
            return
        self._write_evidence([str(doc.id) for doc in chunks], evidence)
        if not self._keyword_ready:
            self._upsert(
                self.keywords_name,
                [{**_meta_values(doc.meta, "sparse"), "id": str(doc.id), "text": doc.content or ""} for doc in chunks],
            )
        with self._shared.lock:
            self._shared.dirty.update(self._names[1:])  # the side collections: an attached collection is only read

    def _write_evidence(self, chunk_ids: list[str], evidence: list[ChunkEvidence]) -> None:
        by_id = {item.chunk_id: item for item in evidence}
        rows: list[dict[str, Any]] = []
        # Sentence vectors ride in the chunk's evidence row as base64 float16 (one row read per chunk: fetching them
        # as 120 separate float vectors took 8.9 ms for 20 chunks, the whole row 1.4 ms); a chunk keeps as many
        # sentences as fit Milvus's text limit (63 at 384 dimensions).
        fitting = _VARCHAR // (4 * math.ceil(2 * self.dimension / 3))
        for chunk_id in chunk_ids:
            item = by_id.get(chunk_id)
            if item is None:
                continue
            spans, vectors = item.sentences(self.dimension, fitting)
            counts = {str(term): int(n) for term, n in (item.term_counts or {}).items() if n}
            if counts or vectors is not None:
                rows.append(
                    {
                        "chunk_id": chunk_id,
                        "counts": counts,
                        "total": sum(counts.values()),
                        "spans": spans,
                        "vectors": "" if vectors is None else _pack(vectors),
                        "placeholder": [1.0, 0.0],
                    }
                )
        with self._shared.lock:
            # The chunks' earlier evidence goes first (with its share of the document frequencies).
            self._forget_evidence(chunk_ids)
            self._upsert(self.evidence_name, rows)
            self._count_terms([row["counts"] for row in rows], +1)

    def _forget_evidence(self, chunk_ids: list[str]) -> None:
        """Remove the stored evidence of these chunks and take their terms out of the document frequencies."""
        old = self._get(self.evidence_name, chunk_ids, ["chunk_id", "counts"])
        if old:
            self.client.delete(self.evidence_name, ids=[row["chunk_id"] for row in old])
            self._count_terms([row.get("counts") for row in old], -1)

    def _count_terms(self, counts: list[dict[str, int] | None], sign: int) -> None:
        """Add (sign +1) or take away (-1) these chunks' terms in the document frequencies and the totals."""
        if not any(counts):
            return
        touched = sorted({term for chunk in counts for term in chunk or {}})
        totals = self._totals([_TOTALS, *touched])
        totals.add(counts, sign)
        rows = [{"term": _TOTALS, "df": max(0, totals.chunks), "total": max(0, totals.terms)}]
        rows += [{"term": term, "df": totals.df[term], "total": 0} for term in touched if totals.df[term] > 0]
        self._upsert(self.terms_name, [{**row, "placeholder": [1.0, 0.0]} for row in rows])
        gone = [term for term in touched if totals.df[term] <= 0]
        if gone:
            self.client.delete(self.terms_name, ids=gone)

    def _totals(self, terms: list[str]) -> TermTotals:
        """The stored totals and the document frequencies of `terms` (one read by primary key)."""
        rows = {row["term"]: row for row in self._get(self.terms_name, terms, ["term", "df", "total"])}
        totals = rows.pop(_TOTALS, {"df": 0, "total": 0})
        return TermTotals(int(totals["df"]), int(totals["total"]), {term: int(row["df"]) for term, row in rows.items()})

    def delete(self, chunk_ids: list[str]) -> None:
        ids = [str(chunk_id) for chunk_id in chunk_ids]
        if not ids or not self._open():
            return
        with self._shared.lock:
            for batch in batches(ids, _BATCH):
                # By primary key: a filter expression makes milvus-lite scan every row.
                self.client.delete(self.collection, ids=batch)
            self._forget_evidence(ids)
            if not self._keyword_ready:
                self.client.delete(self.keywords_name, ids=ids)
            self._shared.dirty.update(self._names)

    def _upsert(self, name: str, rows: list[dict[str, Any]]) -> None:
        for batch in batches(rows, _BATCH):
            self.client.upsert(name, batch)

    def _get(self, name: str, ids: list[str], fields: list[str]) -> list[dict[str, Any]]:
        return [row for batch in batches(ids, _BATCH) for row in self.client.get(name, ids=batch, output_fields=fields)]

    def _flush(self) -> None:
        """Flush the collections written since their last flush (searches of the write buffer are slow)."""
        with self._shared.lock:
            dirty = [name for name in self._shared.dirty if name in self._names]
            if not dirty:
                return
            started = time.monotonic()
            for name in dirty:
                self.client.flush(name)
            self._shared.dirty.difference_update(dirty)
            logger.debug(
                "Flushed Milvus collections {names} in {ms} ms",
                names=dirty,
                ms=round((time.monotonic() - started) * 1000),
            )

    def ensure_vector_index(self, wait_s: float = 120.0) -> bool:
        """Flush what was written and wait (up to `wait_s`) until its indexes are built; ingestion calls this once
        after a run.

        milvus-lite builds a flushed segment's index in a background thread of this process and meanwhile searches
        it by brute force: measured at 10k chunks, 150 ms a dense search for the 11 s that build took, 12 ms after;
        `describe_index` reports "Finished" from the start. But it builds every missing segment index before
        `load_collection` returns, so on milvus-lite this releases, flushes and loads the collections
        (`milvus_adapter.seal`; searches in that window wait for the load); on a server it polls `describe_index`.
        """
        if not self._open():
            return True
        if self._lite_key is not None:
            with self._shared.lock:
                milvus_adapter.seal(self.client, list(self._names))
                self._shared.dirty.difference_update(self._names)
            return True
        self._flush()
        deadline = time.monotonic() + wait_s
        for field_name in filter(None, (self.layout.vector, self.layout.sparse)):
            while time.monotonic() < deadline:
                try:
                    state = self.client.describe_index(self.collection, field_name)
                except Exception:  # noqa: BLE001 - no such index, or a server that does not report progress
                    break
                if not state.get("pending_index_rows") and state.get("state", "Finished") == "Finished":
                    break
                time.sleep(0.2)
        return True

    # -- reads --------------------------------------------------------------------------------------------------

    def count(self) -> int:
        return milvus_adapter.count(self.client, self.collection) if self._open() else 0

    def fetch(self, chunk_ids: list[str], with_embeddings: bool = False) -> list[Document]:
        ids = [str(chunk_id) for chunk_id in chunk_ids]
        if not ids or not self._open():
            return []
        fields = [*self._output, self.layout.vector] if with_embeddings else self._output
        return in_order(ids, {doc.id: doc for doc in map(self._document, self._get(self.collection, ids, fields))})

    def iter_documents(self, batch_size: int = 1000, with_embeddings: bool = False) -> Iterator[list[Document]]:
        if not self._open():
            return
        fields = [*self._output, self.layout.vector] if with_embeddings else self._output
        self._flush()
        iterator = self.client.query_iterator(
            self.collection,
            batch_size=max(1, min(batch_size, _WINDOW)),
            filter="",
            output_fields=fields,
        )
        try:
            while batch := iterator.next():
                yield [self._document(row) for row in batch]
        finally:
            iterator.close()

    def _search(
        self, name: str, data: Any, field: str, limit: int, filters: dict | None, fields: list[str], params: dict
    ) -> list[Any]:
        """The hits of one search of collection `name` (the integration's filter translation)."""
        results = self.client.search(
            name,
            data=[data],
            anns_field=field,
            limit=clamp(limit, 1, _WINDOW, "limit"),
            filter=_expression(filters),
            output_fields=fields,
            search_params=params,
        )
        return list(results[0]) if results else []

    def dense(self, embedding: np.ndarray, limit: int, filters: dict | None = None) -> list[IndexHit]:
        vector = check_vector(embedding, self.dimension)
        if not self._open():
            return []
        self._flush()
        store = self.document_store
        params = {"metric_type": self._metric, "params": dict((store.search_params or {}).get("params") or {})}
        hits = self._search(self.collection, vector.tolist(), self.layout.vector, limit, filters, self._output, params)
        kind = ScoreKind.L2 if self._metric == "L2" else ScoreKind.COSINE
        return [self._translate(item, kind) for item in hits]

    def keyword(
        self, query: str, limit: int, filters: dict | None = None, query_embedding: np.ndarray | None = None
    ) -> list[IndexHit]:
        if not terms(query) or not self._open():
            return []  # only stop words or punctuation: nothing to match
        vector = None if query_embedding is None else check_vector(query_embedding, self.dimension)
        self._flush()
        fields = [*self._output, self.layout.vector] if vector is not None else self._output
        bm25 = {"metric_type": "BM25"}
        if self._keyword_ready:
            found = self._search(self.collection, query, self.layout.sparse, limit, filters, fields, bm25)
            return [self._translate(item, ScoreKind.BM25, vector) for item in found]
        # A collection without Milvus's BM25 function: BM25 over its keyword copy (empty until `add_evidence` has
        # copied its chunks), the hits read back from the collection by primary key.
        found = self._search(self.keywords_name, query, "sparse", limit, filters, ["id"], bm25)
        primary = self.layout.primary
        rows = {
            str(row[primary]): row for row in self._get(self.collection, [str(item["id"]) for item in found], fields)
        }
        return [
            self._translate({**item, "entity": rows[str(item["id"])]}, ScoreKind.BM25, vector)
            for item in found
            if str(item["id"]) in rows
        ]

    def _translate(self, item: Any, kind: ScoreKind, query_vector: np.ndarray | None = None) -> IndexHit:
        """A search result as an `IndexHit`: the one place Milvus scores are translated."""
        entity = dict(item.get("entity") or {})
        entity.setdefault(self.layout.primary, item.get("id"))
        document = self._document(entity)
        distance = float(item.get("distance", 0.0))
        if kind is ScoreKind.L2:  # Milvus returns squared L2; for unit vectors cosine = 1 - d^2 / 2
            return index_hit(document, distance, kind, 1.0 - max(distance, 0.0) / 2.0)
        if kind is ScoreKind.COSINE:  # COSINE, or IP of unit vectors
            return index_hit(document, distance, kind, distance)
        # milvus-lite returns BM25 negated (more negative is better); servers positive
        return index_hit(document, abs(distance), kind, query=query_vector)

    def _document(self, row: dict[str, Any]) -> Document:
        layout = self.layout
        data = dict(row)
        embedding = data.pop(layout.vector, None)
        if layout.sparse:
            data.pop(layout.sparse, None)
        meta = data.pop("$meta", None) or {}
        if embedding is not None and milvus_adapter.is_placeholder(embedding):
            embedding = None  # the integration's placeholder for a document written without one
        return Document(
            id=str(data.pop(layout.primary)),
            content=data.pop(layout.text, "") or "",
            meta={**meta, **data},  # after the pops above: what is left of the row is meta
            embedding=None if embedding is None else [float(value) for value in embedding],
        )

    # -- evidence -----------------------------------------------------------------------------------------------

    def evidence(self, chunk_ids: list[str]) -> dict[str, ChunkEvidence]:
        """The evidence rows of these chunks (one read by primary key)."""
        ids = sorted({str(chunk_id) for chunk_id in chunk_ids})
        if not ids or not self._open():
            return {}
        self._flush()
        return {
            row["chunk_id"]: ChunkEvidence.stored(
                row["chunk_id"], row.get("spans"), _unpack(row.get("vectors") or "", self.dimension), row.get("counts")
            )
            for row in self._get(self.evidence_name, ids, ["chunk_id", "counts", "spans", "vectors"])
        }

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """One lookup by primary key in `<collection>_terms`."""
        wanted = sorted({str(term) for term in terms if term})
        if not self._open():
            return None
        self._flush()
        return self._totals([_TOTALS, *wanted]).statistics(wanted)

    # -- housekeeping -------------------------------------------------------------------------------------------

    def drop(self) -> None:
        with self._shared.lock:
            for name in self._names:
                self.client.drop_collection(name)
                self._shared.dirty.discard(name)
        self._opened = False

    def close(self) -> None:
        """Flush pending rows and let go of the shared client."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._opened:
                self._flush()
        finally:
            if self._lite_key is not None:
                CLIENTS.release(self._lite_key)
            self._opened = False


def _pack(vectors: np.ndarray) -> str:
    """Sentence vectors as the text Milvus stores: base64 of their float16 bytes."""
    return base64.b64encode(np.asarray(vectors, dtype=np.float16).tobytes()).decode("ascii")


def _unpack(text: str, dimension: int) -> np.ndarray | None:
    if not text:
        return None
    return np.frombuffer(base64.b64decode(text), dtype=np.float16).reshape(-1, dimension).astype(np.float32)


def _meta_values(meta: dict[str, Any] | None, skip: str | None = None) -> dict[str, Any]:
    return {key: value for key, value in (meta or {}).items() if value is not None and key != skip}


def _expression(filters: dict | None) -> str:
    """The Milvus expression for Haystack filters, by the integration's own translation ("" for none)."""
    if not filters:
        return ""
    from milvus_haystack.filters import parse_filters

    return parse_filters(filters)


def _where(uri: str) -> str:
    """Where a Milvus URI points, without credentials."""
    if is_lite(uri):
        return uri
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.hostname}{':' + str(parts.port) if parts.port else ''}"
