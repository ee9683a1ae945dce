"""Imports of the product's own modules sit at the top of the file. An import inside a function (a "late" import)
is kept only for a reason written on its line as a `# late: why` comment, e.g. `# late: loads torch` for an
optional dependency or a heavy library that a light path must not pay for. The layers test already forbids import
circles (counting late imports), so dodging a circle is never a reason.

Checked: every module under `components/`, `ingest/` and `pipelines/`, except `pipelines/cli/`. Each command
module there is imported to build the parser of `research --help`, and the CLI's cold start (`--help`, `ask`
answered by a running server) must not load what the other commands need; so a command imports what it uses when
it runs. That is a rule for the whole package rather than a reason checked import by import: not every import a
command makes late is heavy on its own.

"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_layers import write_tree

ROOT = Path(__file__).resolve().parent.parent
OWN_PACKAGES = frozenset({"components", "ingest", "pipelines", "app"})
CHECKED = ("components", "ingest", "pipelines")
EXEMPT_PACKAGES = ("pipelines/cli/",)  # see the module docstring
REASON_MARK = "# late:"


def _is_own(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in OWN_PACKAGES
    return any(alias.name.split(".")[0] in OWN_PACKAGES for alias in node.names)


def _has_reason(lines: list[str], node: ast.stmt) -> bool:
    """Whether a `# late: REASON` comment with a non-empty reason is on one of the statement's lines."""
    for line in lines[node.lineno - 1 : node.end_lineno]:
        _, mark, reason = line.partition(REASON_MARK)
        if mark and reason.strip():
            return True
    return False


def unexplained_late_imports(path: Path, root: Path) -> list[str]:
    """`file:line statement` for each import of the product's own modules inside a function of `path` (nested
    functions, methods and lambdas included) with no `# late:` reason on its line."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom) and _is_own(child):
                if not _has_reason(lines, child):
                    found.append(f"{path.relative_to(root).as_posix()}:{child.lineno} {ast.unparse(child)}")
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(text, filename=str(path)), False)
    return found


def _listed(relative: str, prefixes: frozenset[str] | tuple[str, ...]) -> bool:
    return any(relative == prefix or (prefix.endswith("/") and relative.startswith(prefix)) for prefix in prefixes)


def checked_files(root: Path) -> list[Path]:
    return [
        path
        for package in CHECKED
        for path in sorted((root / package).rglob("*.py"))
        if not _listed(path.relative_to(root).as_posix(), EXEMPT_PACKAGES)
    ]


def late_imports_without_reason(root: Path) -> list[str]:
    found = []
    for path in checked_files(root):
        found.extend(unexplained_late_imports(path, root))
    return found


def test_own_modules_are_imported_at_the_top_unless_a_late_import_says_why() -> None:
    found = late_imports_without_reason(ROOT)
    assert found == [], (
        "Import these at the top of the file, or give the line a `# late: why` comment (an optional dependency, "
        "a heavy library a light path must not load):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    from components.settings import cfg\n", "2 from components.settings import cfg"),
        ("def f():\n    import ingest.ingestor\n", "2 import ingest.ingestor"),
        ("def f():\n    from . import sibling\n", "2 from . import sibling"),
        ("class C:\n    def m(self):\n        if self:\n            from app import x\n", "4 from app import x"),
        ("def f():\n    def g():\n        from pipelines.bench import run\n", "3 from pipelines.bench import run"),
        ("f = lambda: __import__('os')\ndef g():\n    from app import services\n", "3 from app import services"),
        ("def f():\n    from components.text import x  # late:\n", "2 from components.text import x"),  # no reason
    ],
)
def test_a_late_import_without_a_reason_is_found(tmp_path: Path, source: str, expected: str) -> None:
    root = write_tree(tmp_path, {"components/store/index.py": source})
    assert late_imports_without_reason(root) == [f"components/store/index.py:{expected}"]


@pytest.mark.parametrize(
    "source",
    [
        "from components.settings import get_settings\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ingest.ingestor import Ingestor\n",
        "def f():\n    import torch\n    from haystack import Pipeline\n",
        "def f():\n    from components.text.language import parse  # late: loads the spaCy pipeline\n",
        "def f():\n    from components.embedding.model import (  # late: loads torch\n        get_model,\n    )\n",
        "def f():\n    from components.embedding.model import (\n        get_model,  # late: loads torch\n    )\n",
    ],
)
def test_top_imports_other_libraries_and_explained_late_imports_pass(tmp_path: Path, source: str) -> None:
    assert late_imports_without_reason(write_tree(tmp_path, {"ingest/loader.py": source})) == []


def test_the_cli_package_is_not_checked(tmp_path: Path) -> None:
    late = "def run(args):\n    from components.knowledge_base.factory import open_knowledge_base\n"
    root = write_tree(tmp_path, {"pipelines/cli/docs.py": late, "pipelines/status.py": late})
    assert late_imports_without_reason(root) == [
        "pipelines/status.py:2 from components.knowledge_base.factory import open_knowledge_base"
    ]
