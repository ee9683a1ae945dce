"""`research tools`: list the tools a profile may use, run one, show which tools the manager would choose for a
question (and why), ask the agent."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pipelines.cli import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tools", help="list, run and inspect the tools (research searches, graph, documents, files, web)"
    )
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

    select = commands.add_parser("select", help="which tools (and sources) the manager chooses for a question, and why")
    select.add_argument("question")
    select.add_argument("--profile", help="tool profile (default: TOOL_PROFILE)")
    select.add_argument("--all", action="store_true", dest="show_all", help="also list the tools left out")
    select.add_argument(
        "--earlier", action="append", default=[], metavar="QUESTION", help="an earlier question of the conversation"
    )
    select.add_argument("--json", action="store_true", dest="as_json")
    select.set_defaults(func=_select)

    agent = commands.add_parser("agent", help="let the configured tool-calling chat model answer using the tools")
    agent.add_argument("question")
    agent.add_argument("--profile", help="tool profile (default: TOOL_PROFILE)")
    agent.add_argument("--max-steps", type=int, default=8)
    agent.add_argument("--json", action="store_true", dest="as_json", help="print the whole run as JSON")
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
    from components.tools.research_agent import choose_tools

    conversation = [{"role": "user", "content": text} for text in args.earlier]
    selection = choose_tools(args.question, profile=args.profile, conversation=conversation)
    if args.as_json:
        print(json.dumps(selection.to_dict(), indent=2))
        return 0
    print("tools: " + (", ".join(selection.tools) or "none"))
    print("sources: " + (", ".join(selection.sources) or "none"))
    for tool, reasons in selection.reasons.items():
        # The chosen tools, and those the question called for but the profile does not grant.
        if args.show_all or tool in selection.tools or tool == "*" or "not granted to this profile" in reasons:
            print(f"  {tool}: {'; '.join(reasons)}")
    return 0


def _agent(args: argparse.Namespace) -> int:
    from components.tools.research_agent import ResearchAgent, agent_result_json
    from pipelines.catalog_file import research_question_budget_s

    # The chat model waits as long as the catalog's research pipeline gives a question (its YAML's budget).
    agent = ResearchAgent(profile=args.profile, max_agent_steps=args.max_steps, timeout_s=research_question_budget_s())
    agent.warm_up()
    result = agent.run(question=args.question)
    if args.as_json:
        print(json.dumps(agent_result_json(result), indent=2, default=str))
        return 0 if result["status"].ok else 1
    if not result["status"].ok:
        raise UserError(result["status"].message)
    print(result["answer"] or "(no answer)")
    for call in result["tool_calls"]:
        print(
            f"  - {call['tool']}({json.dumps(call['arguments'])}): {call['status']} in {call['ms']:.0f} ms",
            file=sys.stderr,
        )
    for number, document in enumerate(result["chunks"], start=1):
        title = document.meta.get("source_title") or document.meta.get("source_id")
        print(f"[{number}] {title} ({document.meta.get('source_type')})")
    return 0
