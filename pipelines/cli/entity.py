"""`research entity`: the knowledge graph from the terminal — timelines, relationships and fact search."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("entity", help="explore the knowledge graph: timelines, relations, fact search")
    commands = parser.add_subparsers(dest="entity_command", metavar="COMMAND")

    timeline = commands.add_parser("timeline", help="what happened to NAME, and when (dated facts, oldest first)")
    timeline.add_argument("name", help="entity name (aliases and short names work)")
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
    relations.add_argument("name", help="entity name")
    relations.add_argument("--depth", type=int, default=2, help="hops to walk (clamped to 1-5)")

    search = commands.add_parser("search", help="facts matching TEXT")
    search.add_argument("text", help="what to look for")
    search.add_argument("--limit", type=int, default=10, help="most facts shown (clamped to 1-50)")
    search.add_argument("--as-of", dest="as_of", help="only facts valid at this ISO date")

    for sub in (timeline, relations, search):
        sub.add_argument("--collection", help="knowledge-base collection (default: KB_COLLECTION)")
        sub.add_argument("--json", action="store_true", help="print the tool-contract JSON")
    parser.set_defaults(func=run, entity_parser=parser)


def _tools(collection: str | None) -> Any:
    from components.graph.factory import graph_store_from_settings
    from components.graph.tools import GraphTools

    return GraphTools(graph_store_from_settings(collection))


def _line(item: dict[str, Any], prefix: str = "") -> str:
    when = item.get("valid_at") or "undated"
    until = f" until {item['invalid_at']}" if item.get("invalid_at") else ""
    source = item.get("document_title") or item.get("document_id")
    sure = f" · event confidence {item['confidence']:.2f}" if item.get("confidence") is not None else ""
    return f"{prefix}{when:<10}{until}  {item['fact']}\n{' ' * (len(prefix) + 12)}— {source}{sure}"


def run(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError

    command = getattr(args, "entity_command", None)
    if command is None:
        args.entity_parser.print_help()
        return 2
    tools = _tools(args.collection)
    if command == "timeline":
        if not 1 <= args.limit <= 1000:
            raise UserError("--limit must be between 1 and 1000")
        if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
            raise UserError("--min-confidence must be between 0 and 1")
        names, hits = tools.timeline_hits(args.name, args.start, args.end, args.limit)
        certain, unsure = tools.split_certain(hits, args.min_confidence)
        items = [hit.fact.contract() for hit in certain]
        less_certain = [hit.fact.contract() for hit in unsure]
        if args.json:
            payload = {"entities": names, "timeline": items, "less_certain": less_certain}
            print(json.dumps(payload, indent=2, ensure_ascii=False))
            return 0
        if not names:
            raise UserError(f"no entity called {args.name!r} is in the knowledge graph")
        window = f" from {args.start or 'the start'} to {args.end or 'now'}" if args.start or args.end else ""
        print(f"{', '.join(names)}: {len(items)} dated facts{window}")
        for item in items:
            print(_line(item))
        if less_certain:
            print(f"less certain ({len(less_certain)}, event confidence below the threshold):")
            for item in less_certain:
                print(_line(item))
        return 0
    if command == "relations":
        result = tools.get_entity_relationships(args.name, args.depth)
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
    items = tools.graph_search(args.text, args.limit, args.as_of)
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(items)} facts")
    for item in items:
        print(_line(item))
    return 0
