"""`research tools`: list the tools a profile may use, run one, show the `auto` source selection, ask the agent."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pipelines.cli import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("tools", help="list, run and inspect the tools (calculator, files, web, Wikipedia)")
    commands = parser.add_subparsers(dest="tools_command", metavar="SUBCOMMAND")

    listing = commands.add_parser("list", help="every tool, whether the profile enables it, and its schemas")
    listing.add_argument("--profile", help="tool profile (default: TOOL_PROFILE)")
    listing.add_argument("--json", action="store_true", dest="as_json", help="print JSON with the schemas")
    listing.set_defaults(func=_list)

    run = commands.add_parser("run", help="run one tool with JSON arguments")
    run.add_argument("name", help="tool name, e.g. calculator")
    run.add_argument(
        "--json", dest="arguments", default="{}", help='arguments as a JSON object, e.g. \'{"expression": "2+2"}\''
    )
    run.add_argument("--profile", help="tool profile (default: TOOL_PROFILE)")
    run.set_defaults(func=_run)

    select = commands.add_parser("select", help="which sources `auto` would ask for a question, and why")
    select.add_argument("question")
    select.add_argument("--json", action="store_true", dest="as_json")
    select.set_defaults(func=_select)

    agent = commands.add_parser("agent", help="let the configured tool-calling chat model answer using the tools")
    agent.add_argument("question")
    agent.add_argument("--profile", help="tool profile (default: TOOL_PROFILE)")
    agent.add_argument("--max-steps", type=int, default=8)
    agent.set_defaults(func=_agent)

    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _list(args: argparse.Namespace) -> int:
    from components.tools.registry import list_tools

    tools = list_tools(args.profile)
    if args.as_json:
        print(json.dumps(tools, indent=2))
        return 0
    width = max(len(tool["name"]) for tool in tools)
    for tool in tools:
        flag = "enabled " if tool["enabled"] else "disabled"
        params = ", ".join(tool["input_schema"].get("properties", {}))
        print(f"{tool['name']:<{width}}  {flag}  ({params})  {tool['description']}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from components.tools.executor import ToolExecutor

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise UserError(f"--json is not valid JSON: {exc.msg} at character {exc.pos}.") from None
    if not isinstance(arguments, dict):
        raise UserError("--json must be a JSON object of the tool's arguments.")
    outcome = ToolExecutor(profile=args.profile).run(args.name, arguments)
    print(json.dumps(outcome.to_dict(), indent=2))
    if not outcome.status.ok:
        print(f"research: {args.name}: {outcome.status.message}", file=sys.stderr)
        return 1
    return 0


def _select(args: argparse.Namespace) -> int:
    from components.tools.source_selection import select_sources

    selection = select_sources(args.question)
    if args.as_json:
        print(json.dumps(selection.to_dict(), indent=2))
        return 0
    print("sources: " + (", ".join(selection.sources) or "none"))
    for source, reasons in selection.reasons.items():
        print(f"  {source}: {'; '.join(reasons)}")
    return 0


def _agent(args: argparse.Namespace) -> int:
    from haystack.dataclasses import ChatMessage

    from components.tools.agent import build_tool_agent

    agent = build_tool_agent(profile=args.profile, max_agent_steps=args.max_steps)
    agent.warm_up()
    try:
        result = agent.run(messages=[ChatMessage.from_user(args.question)])
    except Exception as exc:  # noqa: BLE001 - the chat server's faults become one sentence
        raise UserError(f"the chat model failed: {str(exc).splitlines()[0][:300]}") from None
    last = result.get("last_message")
    print(last.text if last is not None and last.text else "(no answer)")
    return 0
