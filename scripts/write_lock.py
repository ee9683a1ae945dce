"""Write the install lock from a pip installation report read on standard input (see `make lock`).

Every distribution pip would install becomes one `name==version` line, the project itself left out (it is
installed editable from the tree) and local version labels dropped (`torch==2.13.0` also matches the CPU build
`2.13.0+cpu`). The file is written only when the report is complete, so a failed resolution keeps the old lock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROJECT = "research-assistant"
HEADER = """\
# The versions `make install` (and so `make run` and `make test`) installs: pip constraints, used with -c.
# Written by `make lock` from pyproject.toml with the `test` extra and torch {torch}; do not edit by hand.
# Refresh it after changing a dependency in pyproject.toml, or to take new releases; then run `make test`.
"""


def lock_lines(report: dict) -> list[str]:
    """The sorted `name==version` pins of everything in the report's install list except the project."""
    pins = {}
    for item in report["install"]:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name.lower().replace("_", "-") != PROJECT:
            pins[name.lower().replace("_", "-")] = version.split("+", 1)[0]
    if not pins:
        raise SystemExit("the report lists nothing to install; the lock was not written")
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def main() -> None:
    target = Path(sys.argv[1])
    lines = lock_lines(json.load(sys.stdin))
    torch = next((line.split("==")[1] for line in lines if line.startswith("torch==")), "(none)")
    target.write_text(HEADER.format(torch=torch) + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{target}: {len(lines)} pins")


if __name__ == "__main__":
    main()
