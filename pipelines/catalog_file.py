"""Where the pipeline catalog is, and the research pipeline's whole-question budget as its file writes it, read
without building anything (no Haystack import): what a client of `research serve` needs to know how long the
server may take over a question.

Usage:
```python
budget_s = research_question_budget_s()  # metadata.question_budget_s of the research pipeline, else the setting
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pipelines
from components.settings import Settings, get_settings

RESEARCH_PIPELINE = "research"
# The research pipeline's whole-question budget, in its YAML: `metadata: {question_budget_s: ...}`.
BUDGET_KEY = "question_budget_s"


# The catalog the package carries: `pipelines/pipelines.yaml`, package data, so an installed wheel has it too. The
# repository's `pipelines.yaml` is a link to it (one file), which keeps ./pipelines.yaml working in a checkout.
PACKAGED_PIPELINES_FILE = Path(pipelines.__file__).resolve().parent / "pipelines.yaml"


def default_pipelines_file(settings: Settings | None = None) -> Path:
    """`PIPELINES_FILE` (of `settings`, None: the process's) when set, else ./pipelines.yaml when present, else the
    catalog the package carries (`PACKAGED_PIPELINES_FILE`)."""
    configured = (settings or get_settings()).pipelines_file
    if configured is not None:
        return Path(configured).expanduser()
    local = Path.cwd() / "pipelines.yaml"
    if local.is_file():
        return local
    return PACKAGED_PIPELINES_FILE


def research_question_budget_s(path: str | Path | None = None) -> float:
    """The whole-question budget the research pipeline of the catalog file at `path` (default:
    `default_pipelines_file()`) gives in its metadata, else `QUESTION_BUDGET_S` (as the catalog fills it in; a file
    that cannot be read or a budget out of range is the catalog's to refuse, not this reader's)."""
    import yaml

    try:
        data = yaml.safe_load(Path(path or default_pipelines_file()).read_text(encoding="utf-8"))
        value: Any = data["pipelines"][RESEARCH_PIPELINE]["pipeline"]["metadata"][BUDGET_KEY]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        value = None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
        return float(get_settings().question_budget_s)
    return float(value)
