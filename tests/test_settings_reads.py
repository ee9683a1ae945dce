"""Where the component library may read the global settings: only where objects are built, never where they run.

Under `components/`, `get_settings` and `setting_or` may be called in `components/settings.py` itself, in an
`__init__` or a dataclass's `__post_init__` (an object takes its settings when it is built: a component when the
catalog builds its pipeline),
in a function named `from_settings` or `*_from_settings`, and in the build-time factories of `BUILD_TIME`
below. A read anywhere else fails this test: pass the value in as an init parameter or an argument instead.
(`tests/pipelines/test_settings_at_build.py` proves the other half: built pipelines answer with the settings
unreadable.)
"""

from __future__ import annotations

import ast
from pathlib import Path

COMPONENTS = Path(__file__).resolve().parents[1] / "components"
READS = {"get_settings", "setting_or"}

# Functions that build objects from the settings (called by the CLI, the server, the app, ingestion or a
# component's `__init__`/`warm_up`, never per question), or that own a process-wide resource the settings
# describe (read once, when first made). Each entry: "module path:function".
BUILD_TIME = {
    # The stores and their database, opened for a collection when a pipeline or a command is built.
    "database.py:database_url",
    "database.py:describe_database",
    "knowledge_base/factory.py:document_store_for",
    "knowledge_base/factory.py:open_knowledge_base",
    "knowledge_base/factory.py:embedding_dimension",
    "knowledge_base/factory.py:knowledge_base_for",
    "knowledge_base/factory.py:document_field_of",  # called by the components' __init__ only
    "knowledge_base/milvus_index.py:open_chunk_index",
    "memory/backends.py:make_memory_store",
    "graph/factory.py:open_extractor",
    # Process-wide resources, loaded once.
    "embedding/model.py:_load_embedding_model",
    "redaction.py:remember_settings_secrets",
    # Commands (`research arxiv add`), each a whole run of its own.
    "arxiv/ingest.py:fetch_papers",
    "arxiv/ingest.py:ingest_arxiv",
    # What a tool executor, the MCP server's tool registry or a status report is made with, when the caller gives
    # no settings (the executor's and the agent's `__init__`, `research tools`, `research status`).
    "tools/profiles.py:load_profiles",
    "tools/registry.py:tool_status",
    "tools/call_log.py:call_log_path",
    "tools/workspace.py:configured_workspace",
}


def _reads(path: Path) -> list[tuple[str, int]]:
    """(enclosing function, line) of every call of a settings reader in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Call):
                callee = child.func
                called = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", None)
                if called in READS:
                    found.append((function, child.lineno))
            visit(child, name)

    visit(tree, "<module>")
    return found


def _allowed(relative: str, function: str) -> bool:
    return (
        function in ("__init__", "__post_init__")
        or function == "from_settings"
        or function.endswith("_from_settings")
        or f"{relative}:{function}" in BUILD_TIME
    )


def test_components_read_settings_only_where_objects_are_built() -> None:
    offending = []
    for path in sorted(COMPONENTS.rglob("*.py")):
        relative = path.relative_to(COMPONENTS).as_posix()
        if relative == "settings.py":
            continue
        for function, line in _reads(path):
            if not _allowed(relative, function):
                offending.append(f"components/{relative}:{line} in {function}()")
    assert not offending, "Settings read while components run (make them init parameters): " + ", ".join(offending)


def test_the_build_time_list_names_only_real_readers() -> None:
    readers = {
        f"{path.relative_to(COMPONENTS).as_posix()}:{function}"
        for path in COMPONENTS.rglob("*.py")
        for function, _ in _reads(path)
    }
    assert not BUILD_TIME - readers, f"stale BUILD_TIME entries: {sorted(BUILD_TIME - readers)}"


def test_the_checker_sees_a_run_time_read(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    source.write_text(
        "from components.settings import get_settings, setting_or\n"
        "class Example:\n"
        "    def __init__(self, limit=None):\n"
        "        self.limit = setting_or(limit, 'page_max_bytes')\n"
        "    def run(self):\n"
        "        return get_settings().tool_timeout_s\n"
    )
    assert _reads(source) == [("__init__", 4), ("run", 6)]
    assert _allowed("example.py", "__init__") and not _allowed("example.py", "run")
