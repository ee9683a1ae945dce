"""`research status`: what is configured, what is reachable, how much it holds, and how the tools are doing."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("status", help="show what is configured and reachable, with counts and telemetry")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.status import collect_status

    report = collect_status()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0 if report["healthy"] else 1
    _print_report(report)
    return 0 if report["healthy"] else 1


def _print_report(report: dict[str, Any]) -> None:
    print("Research assistant status")
    for part in report["parts"]:
        mark = "ok " if part["reachable"] else "-- "
        if part.get("optional") and not part["reachable"]:
            mark = ".. "
        print(f"  {mark}{part['name']:<16} {part['detail']}")
        for key, value in part.get("counts", {}).items():
            print(f"       {key}: {value}")
    tools = report.get("tools") or []
    if tools:
        print("Tools")
        print(
            f"  {'name':<24} {'enabled':<8} {'calls':>6} {'ok':>5} {'fail':>5} "
            f"{'p50 ms':>8} {'p95 ms':>8} {'cached':>7}"
        )
        for tool in tools:
            stats = tool.get("telemetry") or {}
            failures = sum((stats.get("failures") or {}).values())
            p50 = stats.get("p50_ms")
            p95 = stats.get("p95_ms")
            print(
                f"  {tool['name']:<24} {('yes' if tool.get('enabled') else 'no'):<8} {stats.get('calls', 0):>6} "
                f"{stats.get('successes', 0):>5} {failures:>5} {(f'{p50:.1f}' if p50 is not None else '-'):>8} "
                f"{(f'{p95:.1f}' if p95 is not None else '-'):>8} {stats.get('cache_hits', 0):>7}"
            )
