"""Helpers every format shares: decoding, titles from file names, JSON-safe metadata."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any


class ConversionError(ValueError):
    """A file that cannot be converted; the message is one sentence saying why."""


def decode_text(data: bytes) -> str:
    """Text of `data`: UTF-8 (with or without BOM, or UTF-16 with BOM), else Windows-1252; binary is refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if b"\x00" in data[:4096]:
        raise ConversionError("it looks like a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def title_from_filename(filename: str) -> str:
    """A readable title from a file name: `vector-search_notes.md` -> `Vector search notes`."""
    stem = re.sub(r"[_\-.]+", " ", Path(filename).stem).strip()
    return (stem[:1].upper() + stem[1:]) if stem else "Untitled"


def json_safe(value: Any) -> Any:
    """`value` with dates as ISO strings and unknown objects as strings, so metadata can be stored as JSON."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
