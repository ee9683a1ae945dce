"""`research docs list|show|delete`: what the knowledge base holds."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pipelines.arguments import non_negative_int, positive_int
from pipelines.cli import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("docs", help="list, show and delete the documents of the knowledge base")
    commands = parser.add_subparsers(dest="docs_command", metavar="ACTION", required=True)

    listing = commands.add_parser("list", help="list documents, newest first")
    listing.add_argument("--limit", type=positive_int, default=20, help="documents per page (default 20)")
    listing.add_argument("--offset", type=non_negative_int, default=0, help="documents to skip (default 0)")
    listing.add_argument("--search", default=None, help="only documents whose title or source contains this text")
    listing.set_defaults(func=list_documents, without_torch=True)

    show = commands.add_parser("show", help="show a document's metadata and chunks")
    show.add_argument("document_id", metavar="ID")
    show.add_argument("--full", action="store_true", help="print every chunk's whole text")
    show.set_defaults(func=show_document, without_torch=True)

    delete = commands.add_parser("delete", help="delete a document with its chunks and graph facts")
    delete.add_argument("document_id", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    delete.set_defaults(func=delete_document)


def _store() -> Any:
    from components.knowledge_base.factory import open_knowledge_base

    return open_knowledge_base()


def _existing_store() -> Any | None:
    """The knowledge base to read, checked to exist before it is opened (opening it would create its collection):
    None when the collection is the default one and nothing was ingested yet (nothing to show); a collection
    KB_COLLECTION names that does not exist is one sentence naming those that do. Nothing is created."""
    from components.knowledge_base.factory import (
        CollectionNotFound,
        document_store_for,
        knowledge_base_for,
        require_collection,
    )
    from components.settings import default_setting, get_settings

    settings = get_settings()
    store = document_store_for(settings)
    try:
        require_collection(store)
    except CollectionNotFound:
        if settings.kb_collection == default_setting("kb_collection"):
            return None
        raise
    return knowledge_base_for(store, settings.embedding_model, document_field=settings.kb_document_field)


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def list_documents(args: argparse.Namespace) -> int:
    store = _existing_store()
    if store is None:
        print("No documents.")
        return 0
    summaries, total = store.list_documents(limit=args.limit, offset=args.offset, search=args.search)
    if not summaries:
        what = f" matching {args.search!r}" if args.search else ""
        print(f"No documents{what} (of {total})." if args.offset and total else f"No documents{what}.")
        return 0
    print(f"{'ID':<28} {'TYPE':<5} {'DATE':<10} {'CHUNKS':>6}  TITLE")
    for summary in summaries:
        doc = summary.document
        date = doc.date.isoformat() if doc.date else "-"
        print(f"{doc.document_id:<28} {doc.doc_type:<5} {date:<10} {summary.chunk_count:>6}  {_shorten(doc.title, 70)}")
    first = args.offset + 1
    print(f"Documents {first}-{args.offset + len(summaries)} of {total}.")
    return 0


def _document(document_id: str) -> tuple[Any, list[Any]]:
    store = _existing_store()
    found = store.get_document(document_id) if store is not None else None
    if found is None:
        raise UserError(f"No document has the id {document_id!r}; `research docs list` shows the ids.")
    return found


def show_document(args: argparse.Namespace) -> int:
    document, chunks = _document(args.document_id)
    rows = [
        ("id", document.document_id),
        ("title", document.title),
        ("type", document.doc_type),
        ("source", document.source),
        ("url", document.url or "-"),
        ("date", document.date.isoformat() if document.date else "-"),
        ("ingested", document.ingested_at.isoformat(timespec="seconds") if document.ingested_at else "-"),
        ("content hash", document.content_hash),
        ("chunks", str(len(chunks))),
    ]
    rows += [(key, str(value)) for key, value in sorted((document.metadata or {}).items())]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    for chunk in chunks:
        where = [f"chunk {chunk.chunk_index + 1}/{len(chunks)}"]
        if chunk.metadata.get("page_number") is not None:
            where.append(f"page {chunk.metadata['page_number']}")
        if chunk.metadata.get("section_title"):
            where.append(f"section {chunk.metadata['section_title']!r}")
        print(f"\n[{', '.join(where)}] {chunk.chunk_id}")
        print(chunk.text if args.full else _shorten(chunk.text, 300))
    return 0


def delete_document(args: argparse.Namespace) -> int:
    document, chunks = _document(args.document_id)
    if not args.yes:
        if not sys.stdin.isatty():
            raise UserError(
                f"Not deleting {document.document_id}: confirming needs an interactive terminal; pass --yes to delete."
            )
        answer = input(f"Delete {document.title!r} ({document.document_id}) and its {len(chunks)} chunks? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing deleted.")
            return 0
    from components.knowledge_base.knowledge_base import ProtectedDocument
    from ingest.ingestor import Ingestor

    try:
        deleted = Ingestor(store=_store()).delete(document.document_id)
    except ProtectedDocument as exc:
        raise UserError(str(exc)) from exc
    gone = f"Deleted {document.document_id} ({document.title})."
    print(gone if deleted else f"{document.document_id} was already gone.")
    return 0
