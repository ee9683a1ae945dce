"""Reading the small fitted-model files the package ships (answer confidence, answer scoring, entity kinds, event
confidence): one JSON object per file, and one sentence naming the file when it is missing or not such an object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json_object(path: str | Path, what: str, error: type[Exception] = ValueError) -> dict[str, Any]:
    """The JSON object in the file at `path`; `error` (a one-sentence message naming `what` and the path) when the
    file is missing, unreadable, not JSON or not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(f"no {what} at {path}") from exc
    except OSError as exc:
        raise error(f"the {what} at {path} cannot be read: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"the {what} at {path} is not JSON: {getattr(exc, 'msg', exc)}") from exc
    if not isinstance(data, dict):
        raise error(f"the {what} at {path} is not a JSON object")
    return data
