"""`research kb copy`: move a knowledge base between backends (pgvector, Milvus, Qdrant) without re-embedding."""

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


def copy_knowledge_base(args: Any) -> int:
    """Copy documents with their chunks and stored embeddings from one backend to another."""
    from tqdm import tqdm

    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import get_settings

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
    total = source.count_chunks()
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
            target.upsert_document(document, records)
            documents += 1
            chunks += len(records)
            bar.update(len(records))
    for finish in ("ensure_vector_index", "flush"):
        # pgvector builds its HNSW index after a bulk load; Milvus seals its write buffer so searches are fast.
        step = getattr(target, finish, None)
        if callable(step):
            step()
    elapsed = time.monotonic() - started
    rate = chunks / elapsed if elapsed > 0 else float(chunks)
    print(
        f"Copied {documents} documents ({chunks} chunks) from {source_backend}:{collection} to "
        f"{args.to}:{target_collection} in {elapsed:.1f} s ({rate:.0f} chunks/s), without re-embedding."
    )
    return 0
