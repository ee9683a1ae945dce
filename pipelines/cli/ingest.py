"""`research ingest PATH... [--force] [--demo]`: ingest files and folders into the knowledge base."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: `research --help` loads no command's work
    from ingest.report import IngestProgress, IngestReport


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="ingest files and folders (txt, md, html, pdf, docx) into the knowledge base",
        description="Ingest files and folders into the knowledge base. Unchanged files are skipped, changed files "
        "replaced; a file that fails is reported and the others are still ingested.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (folders are walked recursively)")
    parser.add_argument("--force", action="store_true", help="re-ingest files even when they have not changed")
    parser.add_argument(
        "--reextract",
        action="store_true",
        help="extract the knowledge graph of unchanged files again (from the stored text, without re-embedding); "
        "documents a previous extractor version read are re-extracted on every ingest anyway, and documents whose "
        "extraction failed on the next ingests (3 attempts)",
    )
    parser.add_argument("--demo", action="store_true", help="ingest the demo corpus shipped with the package")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError

    if not args.paths and not args.demo:
        raise UserError("Give at least one file or folder to ingest, or --demo for the demo corpus.")
    from tqdm import tqdm

    from components.ingestion.formats import SUPPORTED_SUFFIXES
    from ingest.demo import demo_items
    from ingest.ingestor import Ingestor, collect_files
    from ingest.report import printable

    items, missing = collect_files(args.paths)
    if args.demo:
        items = demo_items() + items
    if not items and not missing:
        suffixes = ", ".join(sorted(SUPPORTED_SUFFIXES))
        print(f"No files to ingest: nothing under {', '.join(args.paths)} has a supported suffix ({suffixes}).")
        return 0
    ingestor = Ingestor()
    # disable=None: a bar only when stderr is a terminal, so logs and pipes stay clean.
    bar = tqdm(total=len(items), unit="file", file=sys.stderr, disable=None, dynamic_ncols=True)

    def progress(snapshot: IngestProgress) -> None:
        bar.total = snapshot.files_total
        bar.n = snapshot.files_done
        bar.set_description_str(printable(snapshot.current.rsplit("/", 1)[-1][-32:]), refresh=False)
        bar.set_postfix_str(f"{snapshot.chunks_done} chunks, {snapshot.rate:.1f} chunks/s", refresh=False)
        bar.refresh()

    try:
        report = ingestor.ingest_items(items, progress=progress, force=args.force, reextract=args.reextract)
    finally:
        bar.close()
    report.failed[:0] = missing
    # The ONNX export a cold `research ask` embeds its question with was made when the ingestor warmed up.
    print_report(report, as_json=args.json)
    return 1 if report.failed else 0


def print_report(report: IngestReport, as_json: bool = False) -> None:
    """The report on stdout: one summary line, then each failure with its reason."""
    from ingest.report import printable

    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
        return
    print(report.summary())
    for source, reason in report.failed:
        print(f"  failed: {printable(source)}: {printable(reason)}")
    for note in report.notes:
        print(note)
