"""Source names: which sources a caller may select, and whether a source was selected for a question.

One rule for the CLI, the HTTP server, the app, the evaluation and the catalog: a selection is a list of source
names (`kb`, `graph`, `web`, `arxiv`, `memory`), `auto` (the catalog picks sources from the question, and keeps
any named beside it) or `all` (every source); no selection (None) asks every source. The surfaces a user
meets (CLI, app, HTTP, MCP, evaluation) default to `DEFAULT_SOURCES` (`auto`). Names compare
case-insensitively and ignoring surrounding spaces.

Usage:
```python
check_sources([" KB", "web"])  # ["kb", "web"]
check_sources(["all"])  # ["kb", "graph", "web", "arxiv", "memory"]
source_selected(["auto"], "web")  # True: a branch run on its own with `auto` answers
```
"""

from __future__ import annotations

from components.contracts.chunk import SourceType

SOURCE_NAMES = tuple(source.value for source in SourceType)
AUTO = "auto"
ALL = "all"
# Selections that ask every source (`auto` is resolved to concrete sources by the catalog before a run; a branch
# that still sees it is being run on its own, and answers).
SELECT_ALL = frozenset({AUTO, ALL})
SELECTION_HELP = f"{', '.join(SOURCE_NAMES)}, {AUTO} (picked from the question) or {ALL}"
# What every surface asks when the caller names no sources: the CLI, the app's Ask page, the HTTP and MCP
# `research` tool, the chat endpoint and the evaluation.
DEFAULT_SOURCES = (AUTO,)


def check_sources(sources: list[str] | None) -> list[str] | None:
    """The caller's selection normalised (lower case, no blanks or repeats, `all` spelled out as every source);
    None stays None. Raises `ValueError` with one sentence for an unknown name or an empty selection."""
    if sources is None:
        return None
    if isinstance(sources, str):
        sources = sources.split(",")
    chosen = list(dict.fromkeys(str(source).strip().lower() for source in sources if str(source).strip()))
    unknown = [source for source in chosen if source not in SOURCE_NAMES and source not in SELECT_ALL]
    if unknown:
        raise ValueError(f"Unknown source {', '.join(unknown)}; choose from {SELECTION_HELP}.")
    if not chosen:
        raise ValueError(f"No source selected; choose from {SELECTION_HELP}.")
    return list(SOURCE_NAMES) if ALL in chosen else chosen


def source_selected(sources: list[str] | None, name: str) -> bool:
    """True when the caller's `sources` include `name`; no selection (None), `auto` and `all` include every source.

    Names compare case-insensitively and ignoring surrounding spaces.
    """
    if sources is None:
        return True
    chosen = {str(source).strip().lower() for source in sources}
    return bool(chosen & (SELECT_ALL | {name.lower()}))


def filter_names(filters: dict | None, key: str) -> list[str] | None:
    """A list-of-names research filter (`domains` for the web, `arxiv_categories` for arXiv): a list, or a
    comma-separated string; None when the filter is absent or names nothing."""
    value = (filters or {}).get(key)
    if isinstance(value, str):
        value = value.split(",")
    if isinstance(value, (list, tuple)):
        cleaned = [str(part).strip() for part in value if str(part).strip()]
        return cleaned or None
    return None
