"""`research kb`: the knowledge base's collection. `copy` moves it between backends (pgvector, Milvus, Qdrant) without
re-embedding; `attach` points the assistant at a collection Haystack's `DocumentWriter` filled, and `enrich` adds
what the assistant keeps beside such a collection (sentence vectors, term statistics, graph facts)."""

from __future__ import annotations

import sys
import time
from typing import Any

from pipelines.cli import UserError

BACKENDS = ("pgvector", "milvus", "qdrant")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("kb", help="manage the knowledge base's backend (copy between backends)")
    commands = parser.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    copy = commands.add_parser(
        "copy",
        help="copy every document, chunk and embedding to another backend (nothing is re-embedded)",
        description="Copy the knowledge base from the current backend (KB_BACKEND, or --from) to another one. "
        "Documents already in the target with the same id are replaced; others are kept.",
    )
    copy.add_argument("--to", required=True, choices=BACKENDS, help="the backend to copy into")
    copy.add_argument(
        "--from", dest="source", choices=BACKENDS, default=None, help="the backend to copy from (default: KB_BACKEND)"
    )
    copy.add_argument("--collection", default=None, help="the collection to copy (default: KB_COLLECTION)")
    copy.add_argument("--to-collection", default=None, help="the target collection's name (default: the same)")
    copy.add_argument("--batch-size", type=int, default=500, help="chunks read per batch (default 500)")
    copy.set_defaults(func=copy_knowledge_base)

    attach = commands.add_parser(
        "attach",
        help="use an existing Haystack-written table/collection as the knowledge base (its rows are never modified)",
        description="Recognise the documents of a table (pgvector) or collection (Qdrant, Milvus) that Haystack's "
        "DocumentWriter filled, record them in the document registry, and say which settings select it. "
        "Nothing the collection holds is modified or deleted. With --enrich, also add sentence vectors, term "
        "statistics and graph facts beside it (what `research kb enrich` does).",
    )
    attach.add_argument("name", help="the table (pgvector), index (Qdrant) or collection (Milvus) to attach")
    attach.add_argument("--backend", choices=BACKENDS, default=None, help="where it is (default: KB_BACKEND)")
    attach.add_argument(
        "--document-field",
        default=None,
        help="the meta field that names a chunk's document (default: source_id, file_path, url or source)",
    )
    attach.add_argument("--enrich", action="store_true", help="enrich it now (embeds every chunk's sentences)")
    attach.set_defaults(func=attach_collection)

    enrich = commands.add_parser(
        "enrich",
        help="add sentence vectors, term statistics and graph facts beside an attached collection",
        description="Recognise new and changed documents of the knowledge base's collection (KB_COLLECTION) and add "
        "what the assistant keeps beside it: per chunk, in-context sentence vectors and term counts (for ranking, "
        "keyword search and answers); per document, the knowledge graph's entities and dated facts. Incremental: "
        "unchanged documents are skipped. The collection's own rows are never modified.",
    )
    enrich.add_argument("--collection", default=None, help="the collection (default: KB_COLLECTION)")
    enrich.add_argument("--document-field", default=None, help="as for `attach` (default: KB_DOCUMENT_FIELD)")
    enrich.add_argument(
        "--index",
        action="store_true",
        help="pgvector: also build an HNSW index on the attached table, the one change made to it (without it, "
        "dense search on the table stays exact); Qdrant and Milvus collections keep their own indexes",
    )
    enrich.set_defaults(func=enrich_collection)


def copy_knowledge_base(args: Any) -> int:
    """Copy documents with their chunks and stored embeddings from one backend to another."""
    from tqdm import tqdm

    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import get_settings
    from components.text.analyzer import term_counts

    settings = get_settings()
    source_backend = args.source or settings.kb_backend
    collection = args.collection or settings.kb_collection
    target_collection = args.to_collection or collection
    if source_backend == args.to and target_collection == collection:
        raise UserError(f"The knowledge base is already on {args.to}; choose another --to or a --to-collection.")
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1.")
    source = open_knowledge_base(settings.model_copy(update={"kb_backend": source_backend}), collection)
    target = open_knowledge_base(settings.model_copy(update={"kb_backend": args.to}), target_collection)
    if source.dimension != target.dimension:
        raise UserError(
            f"The source holds {source.dimension}-dimensional embeddings but the {args.to} collection takes "
            f"{target.dimension}; copying would need re-embedding."
        )
    total = source.count_chunks()  # the source is open: its record of the text analysis was checked
    # A source that does not say which text analysis counted its terms: the copy's are counted again, by this
    # version's, which the target records (its keyword scores then match this version's question terms).
    recount = source.index.text_analysis_unknown
    started = time.monotonic()
    documents = chunks = 0
    with tqdm(
        total=total,
        unit="chunk",
        desc=f"{source_backend} -> {args.to}",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
    ) as bar:
        for document, records in source.iter_chunks(batch_size=args.batch_size):
            if any(record.embedding is None for record in records):
                raise UserError(f"Document {document.document_id} has chunks without stored embeddings; re-ingest it.")
            if recount:
                for record in records:
                    record.term_counts = term_counts(f"{document.title}\n{record.text}")
            target.upsert_document(document, records)
            documents += 1
            chunks += len(records)
            bar.update(len(records))
    # pgvector builds its HNSW index after a bulk load; Milvus seals its write buffer so searches are fast.
    target.ensure_vector_index()
    elapsed = time.monotonic() - started
    rate = chunks / elapsed if elapsed > 0 else float(chunks)
    print(
        f"Copied {documents} documents ({chunks} chunks) from {source_backend}:{collection} to "
        f"{args.to}:{target_collection} in {elapsed:.1f} s ({rate:.0f} chunks/s), without re-embedding."
    )
    return 0


def _progress_bar() -> Any:
    """A progress callback drawing one bar per stage on a terminal (nothing otherwise), and its closer."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def progress(step: Any) -> None:
        bar = bars.get(step.stage)
        if bar is None:
            bar = bars[step.stage] = tqdm(
                total=step.total,
                unit={"reading": "chunk", "indexing": "block"}.get(step.stage, "doc"),
                desc=step.stage,
                file=sys.stderr,
                disable=not sys.stderr.isatty(),
            )
        bar.total = max(bar.total or 0, step.total)
        bar.n = step.done
        bar.refresh()

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return progress, close


def _enricher(settings: Any, collection: str, document_field: str | None, existing: bool = False) -> Any:
    """The enricher of `collection`; with `existing`, a collection that does not exist is a UserError (nothing is
    created: opening the integration's store would create it)."""
    from components.knowledge_base.enrichment import KnowledgeBaseEnricher
    from components.knowledge_base.factory import document_store_for, knowledge_base_for, require_collection
    from components.knowledge_base.store import KnowledgeBaseUnavailable

    try:
        store = document_store_for(settings, collection)
        if existing:
            require_collection(store)
        knowledge_base = knowledge_base_for(store, settings.embedding_model, document_field=settings.kb_document_field)
        from ingest.ingestor import default_hooks

        hooks = default_hooks(collection=knowledge_base.collection)
        return KnowledgeBaseEnricher(knowledge_base, hooks=hooks, document_field=document_field)
    except (KnowledgeBaseUnavailable, ValueError) as exc:
        raise UserError(str(exc)) from exc


def _run(enricher: Any, enrich: bool, index: bool = False) -> Any:
    """Recognise (and enrich) with a progress bar; with `index`, then build the vector index an attached pgvector
    table lacks."""
    from components.knowledge_base.enrichment import EnrichProgress
    from components.knowledge_base.store import KnowledgeBaseUnavailable

    progress, close = _progress_bar()
    try:
        report = enricher.enrich(progress) if enrich else enricher.recognise(progress)
        if index and enricher.index.backend == "pgvector":
            enricher.index.ensure_vector_index(
                users_table=True, progress=lambda done, total: progress(EnrichProgress("indexing", done, total))
            )
        elif index:
            print(f"The {enricher.index.backend} collection keeps its own vector index; nothing to build.")
        return report
    except (KnowledgeBaseUnavailable, ValueError) as exc:
        raise UserError(str(exc)) from exc
    finally:
        close()
        enricher.knowledge_base.close()


def attach_collection(args: Any) -> int:
    """Recognise an existing Haystack collection's documents (and enrich them with --enrich)."""
    from components.settings import get_settings

    settings = get_settings()
    backend = args.backend or settings.kb_backend
    settings = settings.model_copy(update={"kb_backend": backend})
    document_field = args.document_field or settings.kb_document_field
    enricher = _enricher(settings, args.name, document_field, existing=True)
    if enricher.index.count() == 0:
        enricher.knowledge_base.close()
        raise UserError(f"The {backend} collection {args.name!r} holds no documents; nothing to attach.")
    report = _run(enricher, args.enrich)
    print(report.summary())
    lines = [f"KB_BACKEND={backend}", f"KB_COLLECTION={args.name}"]
    if document_field:
        lines.append(f"KB_DOCUMENT_FIELD={document_field}")
    print("To ask it, set these (environment or .env):\n  " + "\n  ".join(lines))
    if not args.enrich:
        print("Then `research kb enrich` adds sentence vectors, keyword statistics and graph facts beside it.")
    return 0


def enrich_collection(args: Any) -> int:
    """Enrich the knowledge base's collection (or --collection)."""
    from components.settings import get_settings

    settings = get_settings()
    # A mistyped --collection is refused as `attach` refuses it: opening the store would create an empty one.
    enricher = _enricher(
        settings,
        args.collection or settings.kb_collection,
        args.document_field or settings.kb_document_field,
        existing=True,
    )
    report = _run(enricher, True, index=args.index)
    print(report.summary())
    return 1 if report.problems and not report.enriched else 0
