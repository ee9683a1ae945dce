"""The evaluation's JSON Lines files (questions, corpora, captures, timelines), read with one loader that names
the file and line of anything it cannot use."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


class EvaluationInputError(ValueError):
    """A question or corpus file cannot be used; the message names the file and line."""


def _decoded(handle: IO[str], path: Path) -> Iterator[str]:
    """The lines of `handle`; a byte that is not UTF-8 is `EvaluationInputError` naming the file (text is decoded a
    block at a time, ahead of the lines, so the line cannot be told)."""
    try:
        yield from handle
    except UnicodeDecodeError:
        raise EvaluationInputError(f"{path.name} is not UTF-8 text") from None


def load_jsonl(path: Path, required: Sequence[str]) -> list[dict[str, Any]]:
    """The records of a JSON Lines file, each a JSON object with the `required` keys; `EvaluationInputError` (a
    `ValueError`) naming the file and line otherwise, or when the file holds no record."""
    if not path.is_file():
        raise EvaluationInputError(f"{path} does not exist or is not a file")
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(_decoded(handle, path), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvaluationInputError(f"{path.name} line {number} is not JSON: {exc.msg}") from exc
            if not isinstance(record, dict):
                raise EvaluationInputError(f"{path.name} line {number} is not a JSON object")
            missing = [key for key in required if key not in record]
            if missing:
                raise EvaluationInputError(f"{path.name} line {number} lacks {', '.join(missing)}")
            records.append(record)
    if not records:
        raise EvaluationInputError(f"{path.name} holds no records")
    return records
