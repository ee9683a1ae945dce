"""`research settings`: the effective settings (secrets masked), or the settings table of docs/configuration.md."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("settings", help="show the effective settings (secrets masked)")
    parser.add_argument("--markdown", action="store_true", help="print the settings table of docs/configuration.md")
    parser.add_argument("--json", action="store_true", help="print the effective settings as JSON")
    parser.set_defaults(func=run)


def settings_table() -> str:
    """A Markdown table of every setting: environment variable, default, meaning."""
    from components.settings import Settings

    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, list):
            default = ",".join(default)
        shown = "" if default is None else str(default)
        lines.append(f"| `{name.upper()}` | {f'`{shown}`' if shown else '(empty)'} | {field.description or ''} |")
    return "\n".join(lines)


def effective_settings() -> dict[str, Any]:
    """The settings in force, with every secret replaced by `set` / `unset` and URL passwords by `***`."""
    from pydantic import SecretStr

    from components.redaction import redact
    from components.settings import get_settings

    values = {}
    for name, value in get_settings().model_dump().items():
        if isinstance(value, SecretStr) or name.endswith(("_key", "_token", "_password")) or name == "database_url":
            values[name.upper()] = "set" if value else "unset"
        else:
            if isinstance(value, list):
                value = ",".join(map(str, value))
            values[name.upper()] = "" if value is None else (redact(value) if isinstance(value, str) else value)
    return values


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings_table())
        return 0
    values = effective_settings()
    if args.json:
        print(json.dumps(values, indent=2, default=str))
        return 0
    width = max(len(key) for key in values)
    for key, value in values.items():
        print(f"{key:<{width}}  {value}")
    return 0
