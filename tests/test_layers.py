"""The layers only look down: `components/` never imports the applications built on it (`ingest`, `pipelines`,
`app`), and no package or module imports one that imports it back. Read statically from the source (every
import, also those inside functions and `TYPE_CHECKING` blocks, and `importlib.import_module("...")` calls)."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("components", "ingest", "pipelines", "app")
APPLICATIONS = frozenset({"ingest", "pipelines", "app"})


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the product's packages under `root`, by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_names(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of everything `path` imports; `from a import b` gives `a.b` (a module or a name in `a`)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def upward_imports(root: Path) -> list[str]:
    """`file:line imports name` for every import of an application package by a module under `components/`."""
    found = []
    for module, path in module_files(root).items():
        if module.split(".")[0] != "components":
            continue
        for line, name in imported_names(path):
            if name.split(".")[0] in APPLICATIONS:
                found.append(f"{path.relative_to(root)}:{line} imports {name}")
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _package(module: str) -> str:
    """The layer unit a module belongs to: a package of `components` (or one of its top modules), else the
    top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "components" and len(parts) > 1 else parts[0]


Graph = dict[str, dict[str, str]]  # importer -> {imported: where the import is written}


def import_graphs(root: Path) -> tuple[Graph, Graph]:
    """The import graph between modules and the one between packages (see `_package`), without self-imports."""
    modules = module_files(root)
    by_module: Graph = {}
    by_package: Graph = {}
    for module, path in modules.items():
        for line, name in imported_names(path):
            target = _resolve(name, modules)
            if target is None or target == module:
                continue
            where = f"{path.relative_to(root)}:{line}"
            by_module.setdefault(module, {}).setdefault(target, where)
            if _package(module) != _package(target):
                by_package.setdefault(_package(module), {}).setdefault(_package(target), where)
    return by_module, by_package


def import_cycle(graph: Graph) -> str | None:
    """An import cycle of `graph`, each step with where its import is written; None when there is none."""
    try:
        graphlib.TopologicalSorter({node: set(targets) for node, targets in graph.items()}).prepare()
    except graphlib.CycleError as error:
        path = error.args[1][::-1]  # [a, ..., a], each node importing the next (graphlib lists them the other way)
        return " -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(path, path[1:], strict=False)) + f" -> {path[-1]}"
    return None


def test_components_never_import_the_applications() -> None:
    assert upward_imports(ROOT) == []


def test_no_import_cycle_between_packages() -> None:
    assert import_cycle(import_graphs(ROOT)[1]) is None


def test_no_import_cycle_between_modules() -> None:
    assert import_cycle(import_graphs(ROOT)[0]) is None


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """`files` (path -> text) written under `root`, with every product package present (an empty `__init__.py`)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return root


@pytest.mark.parametrize(
    ("source", "line", "name"),
    [
        ("from ingest.ingestor import Ingestor\n", 1, "ingest.ingestor.Ingestor"),
        ("def late():\n    from pipelines.bench import run\n", 2, "pipelines.bench.run"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import app.services\n", 3, "app.services"),
        ("import importlib\nfactory = importlib.import_module('pipelines.catalog')\n", 2, "pipelines.catalog"),
    ],
)
def test_an_upward_import_is_found(tmp_path: Path, source: str, line: int, name: str) -> None:
    root = write_tree(
        tmp_path, {"components/store/index.py": source, "pipelines/bench.py": "import components.store\n"}
    )
    assert upward_imports(root) == [f"components/store/index.py:{line} imports {name}"]


def test_a_cycle_between_modules_is_found(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "components/text/words.py": "def late():\n    from components.text import sentences\n",
            "components/text/sentences.py": "from components.text.words import late\n",
        },
    )
    by_module, by_package = import_graphs(root)
    assert import_cycle(by_package) is None
    cycle = import_cycle(by_module)
    assert cycle is not None
    assert "components.text.words (components/text/words.py:2)" in cycle
    assert "components.text.sentences (components/text/sentences.py:1)" in cycle


def test_a_cycle_between_packages_is_found(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "components/store/index.py": "from components.ranking.fusion import fuse\n",
            "components/ranking/fusion.py": "def fuse():\n    from components.store import keys\n",
            "components/store/keys.py": "KEYS = ()\n",
        },
    )
    by_module, by_package = import_graphs(root)
    assert import_cycle(by_module) is None  # no module imports one that imports it back; their packages do
    cycle = import_cycle(by_package)
    assert cycle is not None
    assert "components.store (components/store/index.py:1)" in cycle
    assert "components.ranking (components/ranking/fusion.py:2)" in cycle
