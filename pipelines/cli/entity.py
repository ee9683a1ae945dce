"""`research entity`: the knowledge graph from the terminal — timelines, relationships and fact search."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pipelines.arguments import non_blank, positive_int

# The graph's entity kinds (components.graph.model.ENTITY_KINDS), spelled out: importing the data model loads
# Haystack, and the parser imports nothing heavy (a test keeps the two equal).
ENTITY_KINDS = ("person", "organization", "place", "product", "work", "event", "other")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("entity", help="explore the knowledge graph: timelines, relations, fact search")
    commands = parser.add_subparsers(dest="entity_command", metavar="COMMAND")

    timeline = commands.add_parser(
        "timeline",
        help="what happened to NAME, and when (dated facts, oldest first; facts dated only by their document "
        "listed apart)",
    )
    timeline.add_argument("name", metavar="NAME", type=non_blank, help="entity name (aliases and short names work)")
    timeline.add_argument("--from", dest="start", help="ISO start date: YYYY, YYYY-MM or YYYY-MM-DD")
    timeline.add_argument("--to", dest="end", help="ISO end date: YYYY, YYYY-MM or YYYY-MM-DD")
    timeline.add_argument("--limit", type=int, default=200, help="most facts shown (1-1000)")
    timeline.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        help="event confidence (0-1) a fact needs to be on the timeline; the others are listed as less certain "
        "(default: the fitted threshold)",
    )

    relations = commands.add_parser("relations", help="how NAME is connected to other entities")
    relations.add_argument("name", metavar="NAME", type=non_blank, help="entity name")
    relations.add_argument("--depth", type=int, default=2, help="hops to walk (clamped to 1-5)")

    search = commands.add_parser("search", help="facts matching TEXT")
    search.add_argument("text", metavar="TEXT", type=non_blank, help="what to look for")
    search.add_argument("--limit", type=int, default=10, help="most facts shown (clamped to 1-50)")
    search.add_argument("--as-of", dest="as_of", help="only facts valid at this ISO date")

    listing = commands.add_parser("list", help="the entities of the graph with their kinds, most facts first")
    listing.add_argument(
        "--kind", action="append", choices=ENTITY_KINDS, help="only entities of this kind (repeatable)"
    )
    listing.add_argument(
        "--limit", type=positive_int, default=100, help="most entities shown (default 100, at most 500)"
    )

    for sub in (timeline, relations, search, listing):
        sub.add_argument("--collection", help="knowledge-base collection (default: KB_COLLECTION)")
        what = "the entities as JSON" if sub is listing else "the tool-contract JSON"
        sub.add_argument("--json", action="store_true", help=f"print {what}")
    parser.set_defaults(func=run, entity_parser=parser)


def _tools(collection: str | None) -> Any:
    """The graph tools over the collection's graph; `GraphNotFound` (one sentence naming the collections that have
    a graph) when it has none: a read creates nothing."""
    from components.graph.factory import graph_store_from_settings, require_graph
    from components.graph.tools import GraphTools

    return GraphTools(require_graph(graph_store_from_settings(collection)))


def _no_entity(name: str) -> Exception:
    from pipelines.cli import UserError

    return UserError(f"no entity called {name!r} is in the knowledge graph")


def _when(item: dict[str, Any]) -> str:
    """A fact's date as the Entities page shows it: its own, or for a fact only its document dates, that."""
    if item.get("undated"):
        return f"undated, from a document of {item.get('document_date') or 'unknown date'}"
    return item.get("valid_at") or "undated"


def _line(item: dict[str, Any], prefix: str = "") -> str:
    """A fact in two lines: its date and text, then its document and event confidence; a fact only its document
    dates leads with that and its document's title instead, as on the Entities page."""
    when, indent = _when(item), " " * (len(prefix) + 12)
    source = item.get("document_title") or item.get("document_id")
    sure = f" · event confidence {item['confidence']:.2f}" if item.get("confidence") is not None else ""
    if item.get("undated"):
        return f"{prefix}{when} · {source}{sure}\n{indent}{item['fact']}"
    until = f" until {item['invalid_at']}" if item.get("invalid_at") else ""
    return f"{prefix}{when:<10}{until}  {item['fact']}\n{indent}— {source}{sure}"


def _dated(item: dict[str, Any]) -> bool:
    """Whether a fact goes on the timeline: its own sentence dates it (the Entities page's rule)."""
    return bool(item.get("valid_at")) and not item.get("undated")


def _timeline(tools: Any, args: argparse.Namespace) -> int:
    from components.graph.tools import parse_bound
    from pipelines.cli import UserError

    if not 1 <= args.limit <= 1000:
        raise UserError("--limit must be between 1 and 1000")
    if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
        raise UserError("--min-confidence must be between 0 and 1")
    # Checked here so that the messages name the flags typed (the tools' name their parameters).
    start, end = parse_bound(args.start, "--from"), parse_bound(args.end, "--to", end=True)
    if start and end and start > end:
        raise UserError(f"--from {args.start} is after --to {args.end}")
    names, hits = tools.timeline_hits(args.name, args.start, args.end, args.limit)
    if not names:
        raise _no_entity(args.name)
    certain, unsure = tools.split_certain(hits, args.min_confidence)
    facts = [hit.fact.contract() for hit in certain]
    dated = [item for item in facts if _dated(item)]
    undated = [item for item in facts if not _dated(item)]
    less_certain = [hit.fact.contract() for hit in unsure]
    if args.json:
        # `timeline` keeps every certain fact, each marked `undated` or not, as before; `dated` and `undated` split
        # it as the timeline is drawn.
        payload = {
            "entities": names,
            "timeline": facts,
            "dated": dated,
            "undated": undated,
            "less_certain": less_certain,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    window = f" from {args.start or 'the start'} to {args.end or 'now'}" if args.start or args.end else ""
    counted = f"{len(dated)} dated facts{window}" + (f", {len(undated)} undated" if undated else "")
    print(f"{', '.join(names)}: {counted}")
    for item in dated:
        print(_line(item))
    if undated:
        print(f"undated ({len(undated)}, the text gives them no date of their own):")
        for item in undated:
            print(_line(item))
    if less_certain:
        print(f"less certain ({len(less_certain)}, event confidence below the threshold):")
        for item in less_certain:
            print(_line(item))
    return 0


def _list(tools: Any, args: argparse.Namespace) -> int:
    entities = tools.store.list_entities(args.kind, min(args.limit, 500))
    if args.json:
        rows = [
            {
                "uuid": e.uuid,
                "name": e.name,
                "kind": e.kind,
                "kind_confidence": e.confidence,
                "fact_count": e.fact_count,
                "aliases": e.aliases,
            }
            for e in entities
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    kinds = f" ({', '.join(args.kind)})" if args.kind else ""
    print(f"{len(entities)} entities{kinds}, most facts first")
    if entities:
        width = min(max(len(e.name) for e in entities), 40)
        print(f"{'NAME':<{width}}  {'KIND':<12} {'CONF':>4} {'FACTS':>5}")
    for e in entities:
        sure = f"{e.confidence:.2f}" if e.confidence is not None else "-"
        print(f"{e.name:<{width}}  {e.kind:<12} {sure:>4} {e.fact_count:>5}")
    return 0


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "entity_command", None)
    if command is None:
        args.entity_parser.print_help()
        return 2
    tools = _tools(args.collection)
    if command == "timeline":
        return _timeline(tools, args)
    if command == "list":
        return _list(tools, args)
    if command == "relations":
        result = tools.get_entity_relationships(args.name, args.depth)
        if result["search_method"] != "graph_traversal":
            # No entity has the name (the tool then searches the facts' text): the same answer as the timeline's.
            raise _no_entity(args.name)
        if args.json:
            print(json.dumps(result, indent=2, ensure_ascii=False))
            return 0
        print(
            f"{result['central_entity']} ({result['search_method']}, depth {result['depth']}): "
            f"{len(result['related_facts'])} facts"
        )
        for item in result["related_facts"]:
            others = [name for name in item.get("entities", []) if name != result["central_entity"]]
            print(
                _line(item, prefix=f"hop {item.get('hop', 0)}  ")
                + (f"\n      links: {', '.join(others)}" if others else "")
            )
        return 0
    from components.graph.tools import parse_bound

    parse_bound(args.as_of, "--as-of", end=True)  # a malformed date named by the flag typed
    items = tools.graph_search(args.text, args.limit, args.as_of)
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(items)} facts")
    for item in items:
        print(_line(item))
    return 0
