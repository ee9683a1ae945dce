"""`research ask`: one question, answered with citations, the sources it used and every source's status.

When `research serve` is running at the configured address (`HAYHOOKS_HOST`, `HAYHOOKS_PORT`), the question goes
there: the server's models and database are warm, so the answer comes in well under a second, and one quiet line
says so. Otherwise (nothing listening: a refused connection costs a few milliseconds) the question is answered in
this process. `--local` always answers here.

Both paths print the same thing from the same JSON (`ResearchResult` as the server sends it), so this module
imports nothing heavy at start; the in-process path imports the catalog when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from pipelines.arguments import int_between
from pipelines.cli import UserError

EMPTY_KB_MESSAGE = (
    "The knowledge base is empty: add documents with `research ingest PATH` (or `research ingest --demo`) "
    "and ask again."
)
# components.contracts.selection's SELECTION_HELP and DEFAULT_SOURCES, spelled out: importing the data model
# loads Haystack, and `research ask --help` must not wait for it (a test keeps them equal).
SELECTION_HELP = "kb, graph, web, arxiv, memory, auto (picked from the question) or all"
DEFAULT_SOURCES_HELP = "auto"
# A server that is not there must cost a refused connection, not a wait.
CONNECT_TIMEOUT_S = 0.3
# Beyond the question's own budget, the server's time to answer (it keeps its own budget).
READ_MARGIN_S = 15.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask a question and get a cited answer",
        description="Answer QUESTION from the selected sources; every sentence cites the chunk it comes from. "
        "When `research serve` runs at HAYHOOKS_HOST:HAYHOOKS_PORT the question is answered there (warm); "
        "otherwise in this process.",
    )
    parser.add_argument("question", help="the question, in quotes")
    parser.add_argument(
        "--sources",
        help=f"comma-separated sources to ask: {SELECTION_HELP} (default: {DEFAULT_SOURCES_HELP}, as in the app)",
    )
    parser.add_argument("--as-of", dest="as_of", metavar="DATE", help="only what was known on DATE (YYYY-MM-DD)")
    parser.add_argument(
        "--top-k", dest="top_k", type=int_between(1, 50), metavar="N", help="how many chunks to cite from (1-50)"
    )
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument("--local", action="store_true", help="answer in this process even when a server is running")
    parser.add_argument(
        "--session",
        metavar="NAME",
        help="the conversation this question belongs to: it is remembered, and a follow-up ('Who leads it?') is "
        "rewritten against the session's earlier questions",
    )
    parser.add_argument(
        "--as-typed", dest="as_typed", action="store_true", help="ask the question as typed, never rewritten"
    )
    parser.set_defaults(func=run, without_torch=embeds_without_torch)


def embeds_without_torch(args: argparse.Namespace) -> bool:
    """Whether this process can answer without torch: the embedding model has its ONNX export in the data folder
    (made by `research ingest`, or by the first question answered with torch), so a cold question skips importing
    torch and sentence-transformers (several seconds of CPU). Reads only the settings and the folder."""
    from components.embedding.runtime import settings_export_ready
    from components.settings import SettingsError, get_settings

    try:
        return settings_export_ready(get_settings())
    except SettingsError:
        return False  # the command itself reports the invalid setting, in one sentence


def _sources(value: str | None) -> list[str] | None:
    """The sources as typed (checked where the question is answered: here or by the server)."""
    return [part.strip() for part in value.split(",")] if value is not None else None


def run(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UserError('The question is empty; ask something, e.g. research ask "What is RAG?".')
    if "\x00" in args.question:
        raise UserError("The question holds a NUL character; remove it.")
    if args.as_of is not None:
        from components.text.dates import input_date

        # Checked here so that the message names the flag typed (the server's names the request's field).
        if not args.as_of.strip() or input_date(args.as_of, "--as-of") is None:
            raise UserError(f"--as-of must be a date as YYYY-MM-DD, not {args.as_of!r}")
    session = (args.session or "").strip() or None
    request = {
        "question": args.question,
        "sources": _sources(args.sources),
        "as_of": args.as_of,
        "top_k": args.top_k,
        "session_id": session,
        "as_typed": args.as_typed or None,
    }
    result = None if args.local else ask_server(request)
    answered_here = result is None
    if result is None:
        result = ask_here(request)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_result(result))
    if answered_here:
        sys.stdout.flush()
        prepare_fast_start()
    return 0


def prepare_fast_start() -> None:
    """After a question answered here with torch: export the embedding model to ONNX once, so the next cold
    question needs no torch (a few seconds, once per data folder; the answer is already printed)."""
    from components.embedding.model import get_embedding_model

    model = get_embedding_model()
    if model.runtime == "torch":
        model.use_onnx_export()  # a failure is one warning, never raised, and not tried again


# -- in this process --------------------------------------------------------------------------------------------


def _knowledge_base_is_empty() -> bool:
    from components.knowledge_base.factory import open_knowledge_base

    return open_knowledge_base().count_chunks() == 0


def ask_here(request: dict[str, Any]) -> dict[str, Any]:
    """The question answered in this process (the catalog loaded and warmed here), as the server's JSON."""
    from components.contracts.selection import DEFAULT_SOURCES, check_sources
    from pipelines.runtime import process_runtime

    try:
        sources = check_sources(request["sources"] if request["sources"] is not None else list(DEFAULT_SOURCES))
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    asks_kb = bool({"kb", "auto"} & set(sources))
    if set(sources) <= {"kb"} and _knowledge_base_is_empty():
        raise UserError(EMPTY_KB_MESSAGE)
    result = process_runtime().catalog.research(
        request["question"],
        sources=sources,
        as_of=request["as_of"],
        top_k=request["top_k"],
        session_id=request.get("session_id"),
        as_typed=bool(request.get("as_typed")),
    )
    if not result.chunks and asks_kb and _knowledge_base_is_empty():
        raise UserError(EMPTY_KB_MESSAGE)
    return result.model_dump(mode="json")


# -- through a running server -----------------------------------------------------------------------------------


def server_address() -> tuple[str, int, str | None]:
    """Where `research serve` listens by the settings (a wildcard bind is reached on loopback) and its token.

    The settings model is loaded anyway: every line printed passes the secret redaction, which reads it."""
    from components.settings import get_settings

    settings = get_settings()
    host = settings.hayhooks_host
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    return host, settings.hayhooks_port, token


def ask_server(request: dict[str, Any]) -> dict[str, Any] | None:
    """The question answered by the server at the configured address, or None when no server answers there (not
    listening, not this product's server, not ready yet, or failing: the caller then answers in-process).
    A request the server refuses as bad input (422) or a token it does not accept is the user's to fix."""
    import http.client

    from pipelines.catalog_file import research_question_budget_s

    host, port, token = server_address()
    connection = http.client.HTTPConnection(host, port, timeout=CONNECT_TIMEOUT_S)
    try:
        connection.connect()
    except OSError:
        return None
    try:
        # The server may take the research pipeline's budget (its YAML's, else QUESTION_BUDGET_S): waiting less
        # would hang up on an answer on its way and ask the question a second time here.
        connection.sock.settimeout(research_question_budget_s() + READ_MARGIN_S)
        body = json.dumps({key: value for key, value in request.items() if value is not None})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request("POST", "/research/run", body=body.encode("utf-8"), headers=headers)
        response = connection.getresponse()
        payload = response.read()
    except (OSError, http.client.HTTPException) as exc:  # a timeout is an OSError
        print(
            f"(the server at {host}:{port} did not answer: {exc or type(exc).__name__}; answering here)",
            file=sys.stderr,
        )
        return None
    finally:
        connection.close()
    if response.status == 401:
        raise UserError(
            f"The server at {host}:{port} wants a token: set API_TOKEN to the server's (or ask with --local)."
        )
    if response.status == 422:
        raise UserError(_detail(payload) or "The server refused the question as invalid.")
    if response.status != 200:
        return None  # not ready yet (404 until its pipelines are deployed), or another program on the port
    try:
        result = json.loads(payload)["result"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(result, dict) or "answer" not in result:
        return None
    print(f"(answered by the server at {host}:{port}; --local answers here)", file=sys.stderr)
    return result


def _detail(payload: bytes) -> str:
    """The one sentence of an HTTP error body (`{"detail": ...}` as a string or FastAPI's list of errors)."""
    try:
        detail = json.loads(payload).get("detail")
    except (ValueError, AttributeError):
        return ""
    if isinstance(detail, list):
        detail = "; ".join(str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in detail)
    return str(detail or "").removeprefix("Value error, ")


# -- the answer as terminal text --------------------------------------------------------------------------------


def _confidence(value: Any, sure: Any = None) -> str:
    """'sure (0.91)' / 'not sure (0.22)' when the result says whether it is sure, else 'confidence 0.42'; empty
    when it carries no confidence."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    if isinstance(sure, bool):
        return f"{'sure' if sure else 'not sure'} ({value:.2f})"
    return f"confidence {value:.2f}"


def format_result(result: dict[str, Any]) -> str:
    """The answer (with its confidence when the result has one), what `auto` chose and why, a table of the
    numbered sources and every source's status, as terminal text. `result` is `ResearchResult` as JSON; fields
    a result may not carry (the short answer's confidence, the parts of a multi-part question) are optional."""
    import shutil

    width = min(shutil.get_terminal_size((100, 20)).columns, 120)
    lines = []
    if result.get("answered_as"):
        lines += [f"Answered as: {result['answered_as']}  (--as-typed asks {result.get('asked', '')!r} as typed)", ""]
    short = str(result.get("short_answer") or "")
    # A short answer is shown only when the product is sure of it; one held back is shown as evidence, not a claim.
    confidence = result.get("short_answer_confidence")
    if short:
        shown = _confidence(confidence, True)
        lines.append(f"Short answer: {short}" + (f"  [{shown}]" if shown else ""))
    elif _confidence(confidence):
        lines.append(f"Short answer: not sure (confidence {confidence:.2f}), so none is given; see the sentences.")
    parts = [part for part in result.get("parts") or [] if isinstance(part, dict)]
    for part in parts if len(parts) > 1 else []:
        sure = part.get("sure")
        shown = _confidence(part.get("short_answer_confidence"), sure)
        answer = part.get("short_answer") if sure is not False else ""
        text = textwrap.shorten(f"- {part.get('question', '')}: {answer or '(no short answer)'}", width=width - 24)
        lines.append(f"  {text}" + (f"  [{shown}]" if shown else ""))
    if lines:
        lines.append("")
    lines += [
        "Answer",
        textwrap.fill(result.get("answer", ""), width=width, initial_indent="  ", subsequent_indent="  "),
        "",
    ]
    chunks = result.get("chunks") or []
    unsupported = [sentence for sentence in result.get("sentences") or [] if not sentence.get("supported", True)]
    if unsupported and chunks:
        lines.append("Not supported by the cited source:")
        lines += [textwrap.shorten(f"  ! {sentence.get('text', '')}", width=width) for sentence in unsupported]
        lines.append("")
    if chunks:
        lines.append("Sources")
        rows = [("n", "title", "type", "relevance", "link")]
        for number, chunk in enumerate(chunks, start=1):
            title = chunk.get("source_title") or chunk.get("source_id") or ""
            metadata = chunk.get("metadata") or {}
            link = chunk.get("source_url") or metadata.get("document_id") or chunk.get("source_id") or ""
            relevance = chunk.get("semantic_relevance")
            rows.append(
                (
                    str(number),
                    str(title),
                    str(chunk.get("source_type", "")),
                    f"{relevance:.2f}" if isinstance(relevance, (int, float)) else "",
                    str(link),
                )
            )
        lines += _table(rows, width)
        lines.append("")
    selection = result.get("source_selection")
    if selection:
        lines.append(textwrap.shorten(_selection_line(selection), width=width))
    lines.append("Source status")
    status_rows = [("source", "status", "time", "found", "note")]
    for status in result.get("statuses") or []:
        status_rows.append(
            (
                str(status.get("source", "")),
                str(status.get("status", "")),
                f"{status.get('execution_time_ms') or 0:.0f} ms",
                str(status.get("total_found", 0)),
                str(status.get("message") or ""),
            )
        )
    lines += _table(status_rows, width)
    timings = result.get("timings") or {}
    if "total_ms" in timings:
        lines.append(f"\nAnswered in {timings['total_ms']:.0f} ms.")
    return "\n".join(lines) + "\n"


def _selection_line(selection: dict[str, Any]) -> str:
    """What `auto` chose and why, on one line, as the app's Ask page says it."""
    reasons = selection.get("reasons") or {}
    chosen = selection.get("sources") or list(reasons)
    why = "; ".join(f"{source}: {', '.join(reasons.get(source) or []) or 'chosen'}" for source in chosen)
    return f"Sources chosen from the question (auto): {why or 'none'}"


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
