"""`research arxiv`: search arXiv, add papers to the knowledge base, and print BibTeX."""

from __future__ import annotations

import argparse
import json
import re

# components.contracts.ARXIV_SORT_OPTIONS, spelled out: importing the data model loads Haystack (and torch), and
# `research --help` must not wait for that (a test keeps the two equal).
ARXIV_SORT_OPTIONS = ("relevance", "date")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("arxiv", help="search arXiv, ingest papers, print BibTeX")
    commands = parser.add_subparsers(dest="arxiv_command", metavar="ACTION")

    search = commands.add_parser("search", help="search arXiv and list the papers, most relevant first")
    search.add_argument("query", help="the question, or arXiv field syntax such as 'ti:transformer AND au:vaswani'")
    search.add_argument("-n", "--num-results", type=int, default=5, help="papers to return (1-50, default 5)")
    search.add_argument("--sort", choices=ARXIV_SORT_OPTIONS, default="relevance", help="order of the search")
    search.add_argument(
        "--category",
        action="append",
        dest="categories",
        metavar="CAT",
        help="arXiv category such as cs.CL (repeatable: any of them)",
    )
    search.add_argument("--from", dest="date_from", metavar="DATE", help="submitted on or after (YYYY-MM-DD)")
    search.add_argument("--to", dest="date_to", metavar="DATE", help="submitted on or before (YYYY-MM-DD)")
    search.add_argument("--full-text", action="store_true", help="read the PDFs (the abstract if a PDF fails)")
    search.add_argument("--json", action="store_true", help="print the chunks and the status as JSON")
    search.set_defaults(func=run_search)

    ingest = commands.add_parser("ingest", help="add arXiv papers to the knowledge base by identifier")
    ingest.add_argument("ids", nargs="+", metavar="ID", help="arXiv identifiers (2005.11401, hep-ex/0307015, URLs)")
    ingest.add_argument("--full-text", action="store_true", help="ingest the PDF's text (the abstract if it fails)")
    ingest.set_defaults(func=run_ingest)

    bibtex = commands.add_parser("bibtex", help="print BibTeX for arXiv papers")
    bibtex.add_argument("ids", nargs="+", metavar="ID", help="arXiv identifiers")
    bibtex.set_defaults(func=run_bibtex)

    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def run_search(args: argparse.Namespace) -> int:
    from components.arxiv import ArxivSearch
    from pipelines.cli import UserError

    if not 1 <= args.num_results <= 50:
        raise UserError("--num-results must be between 1 and 50")
    component = ArxivSearch(num_results=args.num_results, sort_by=args.sort)
    result = component.run(
        query=args.query,
        categories=args.categories,
        date_from=args.date_from,
        date_to=args.date_to,
        full_text=args.full_text,
    )
    status = result["status"]
    if args.json:
        payload = {"documents": [doc.to_dict() for doc in result["documents"]], "status": status.to_dict()}
        print(json.dumps(payload, indent=2, default=str, ensure_ascii=False))
        return 0 if status.ok else 1
    if not status.ok:
        raise UserError(f"arXiv search failed ({status.status.value}): {status.message}")
    seen: set[str] = set()
    rank = 0
    for doc in result["documents"]:
        meta = doc.meta
        if meta["paper_id"] in seen:
            continue
        seen.add(meta["paper_id"])
        rank += 1
        authors = ", ".join(meta["authors"][:3]) + (" et al." if len(meta["authors"]) > 3 else "")
        print(f"[{rank}] {meta['paper_id']}  {meta['paper_title']}")
        print(
            f"     {authors} · {meta.get('publication_date') or 'undated'} · "
            f"{', '.join(meta['arxiv_categories'])} · relevance {doc.score:.2f}"
        )
        print(f"     {meta['arxiv_url']}")
    if not rank:
        print("No papers found.")
    note = f" ({status.message})" if status.message else ""
    print(f"arxiv: {status.status.value}, {status.total_found} found in {status.execution_time_ms:.0f} ms{note}")
    return 0


def run_ingest(args: argparse.Namespace) -> int:
    from components.arxiv import ingest_arxiv
    from ingest.ingestor import Ingestor

    outcome = ingest_arxiv(args.ids, full_text=args.full_text, ingestor=Ingestor())
    for paper in outcome.papers:
        kind = "full text" if outcome.full_text.get(paper.paper_id) else "abstract"
        print(f"{paper.paper_id}  {paper.title} ({kind})")
    for paper_id, reason in outcome.failed:
        print(f"{paper_id}: {reason}")
    for paper_id in outcome.not_found:
        print(f"{paper_id}: not found on arXiv")
    if outcome.report is not None:
        print(outcome.report.summary())
    return 0 if outcome.papers and not outcome.not_found else 1


def run_bibtex(args: argparse.Namespace) -> int:
    from components.arxiv import bibtex_for_paper, fetch_papers, normalise_id
    from components.resilience import SourceError
    from pipelines.cli import UserError

    try:
        ids = [normalise_id(paper_id) for paper_id in args.ids]
    except SourceError as exc:
        raise UserError(str(exc)) from None
    papers, problem = fetch_papers(ids)
    if problem:
        raise UserError(f"arXiv could not be asked: {problem}")
    found = {paper.paper_id for paper in papers}
    for paper in papers:
        print(bibtex_for_paper(paper))
    missing = [paper_id for paper_id in ids if re.sub(r"v\d+$", "", paper_id) not in found]
    if missing:
        raise UserError(f"not found on arXiv: {', '.join(missing)}")
    return 0
