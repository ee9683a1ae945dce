"""`research ask`: one question, answered with citations, the sources it used and every source's status."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap

from components.contracts.selection import SELECTION_HELP, check_sources
from pipelines.cli import UserError

EMPTY_KB_MESSAGE = (
    "The knowledge base is empty: add documents with `research ingest PATH` (or `research ingest --demo`) "
    "and ask again."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask a question and get a cited answer",
        description="Answer QUESTION from the selected sources; every sentence cites the chunk it comes from.",
    )
    parser.add_argument("question", help="the question, in quotes")
    parser.add_argument(
        "--sources",
        help=f"comma-separated sources to ask: {SELECTION_HELP} (default: every source)",
    )
    parser.add_argument("--as-of", dest="as_of", metavar="DATE", help="only what was known on DATE (YYYY-MM-DD)")
    parser.add_argument("--top-k", dest="top_k", type=int, metavar="N", help="how many chunks to cite from (1-50)")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument(
        "--session",
        metavar="NAME",
        help="the conversation this question belongs to: it is remembered, and a follow-up ('Who leads it?') is "
        "rewritten against the session's earlier questions",
    )
    parser.add_argument(
        "--as-typed", dest="as_typed", action="store_true", help="ask the question as typed, never rewritten"
    )
    parser.set_defaults(func=run)


def _sources(value: str | None) -> list[str] | None:
    try:
        return check_sources(value.split(",")) if value is not None else None
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def _knowledge_base_is_empty() -> bool:
    from components.knowledge_base.factory import open_knowledge_base

    return open_knowledge_base().count_chunks() == 0


def run(args: argparse.Namespace) -> int:
    from pipelines.catalog import get_catalog

    sources = _sources(args.sources)
    if not args.question.strip():
        raise UserError('The question is empty; ask something, e.g. research ask "What is RAG?".')
    kb_only = sources is not None and set(sources) <= {"kb"}
    if kb_only and _knowledge_base_is_empty():
        raise UserError(EMPTY_KB_MESSAGE)
    session = (getattr(args, "session", None) or "").strip() or None
    result = get_catalog().research(
        args.question,
        sources=sources,
        as_of=args.as_of,
        top_k=args.top_k,
        session_id=session,
        as_typed=getattr(args, "as_typed", False),
    )
    if not result.chunks and (sources is None or "kb" in sources) and _knowledge_base_is_empty():
        raise UserError(EMPTY_KB_MESSAGE)
    if args.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
        return 0
    sys.stdout.write(format_result(result))
    return 0


def format_result(result) -> str:  # noqa: ANN001 - a ResearchResult; imported lazily to keep --help fast
    """The answer, a table of the numbered sources and the sources' statuses, as terminal text."""
    width = min(shutil.get_terminal_size((100, 20)).columns, 120)
    lines = []
    if result.answered_as:
        lines += [f"Answered as: {result.answered_as}  (--as-typed asks {result.asked!r} as typed)", ""]
    lines += ["Answer", textwrap.fill(result.answer, width=width, initial_indent="  ", subsequent_indent="  "), ""]
    unsupported = [sentence for sentence in result.sentences if not sentence.supported]
    if unsupported and result.chunks:
        lines.append("Not supported by the cited source:")
        lines += [textwrap.shorten(f"  ! {sentence.text}", width=width) for sentence in unsupported]
        lines.append("")
    if result.chunks:
        lines.append("Sources")
        rows = [("n", "title", "type", "relevance", "link")]
        for number, chunk in enumerate(result.chunks, start=1):
            title = chunk.source_title or chunk.source_id
            link = chunk.source_url or chunk.metadata.get("document_id") or chunk.source_id
            rows.append((str(number), title, chunk.source_type.value, f"{chunk.semantic_relevance:.2f}", str(link)))
        lines += _table(rows, width)
        lines.append("")
    lines.append("Source status")
    status_rows = [("source", "status", "time", "found", "note")]
    for status in result.statuses:
        status_rows.append(
            (
                status.source,
                status.status.value,
                f"{status.execution_time_ms:.0f} ms",
                str(status.total_found),
                status.message,
            )
        )
    lines += _table(status_rows, width)
    if "total_ms" in result.timings:
        lines.append(f"\nAnswered in {result.timings['total_ms']:.0f} ms.")
    return "\n".join(lines) + "\n"


def _table(rows: list[tuple[str, ...]], width: int) -> list[str]:
    """Left-aligned columns; the second-widest column is shortened to fit the terminal."""
    columns = len(rows[0])
    widths = [max(len(row[index]) for row in rows) for index in range(columns)]
    budget = width - 2 - 2 * (columns - 1)
    while sum(widths) > budget and max(widths) > 12:
        widest = widths.index(max(widths))
        widths[widest] -= 1
    out = []
    for row in rows:
        cells = [cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…" for i, cell in enumerate(row)]
        out.append("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)).rstrip())
    return out
