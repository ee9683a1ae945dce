"""The checks of plain parameters (a count, a size limit, a list of names) that components make when built or run.

Usage:
```python
self.num_results = positive_int("num_results", num_results)
```
"""

from __future__ import annotations

from typing import Any


def positive_int(name: str, value: Any) -> int:
    """`value` if it is a whole number of at least 1 (a bool is not one); ValueError naming `name` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def positive(name: str, value: Any) -> Any:
    """`value` if it is a number above 0 (NaN is not); ValueError naming `name` otherwise."""
    if not value > 0:
        raise ValueError(f"{name} must be positive, not {value!r}")
    return value


def within(name: str, value: Any, low: float, high: float, *, whole: bool = False) -> Any:
    """`value` if it lies in `low`..`high` (and, with `whole`, is a whole number: a bool is not one); ValueError naming
    `name` and the range otherwise."""
    if (whole and (not isinstance(value, int) or isinstance(value, bool))) or not low <= value <= high:
        kind = "an integer " if whole else ""
        raise ValueError(f"{name} must be {kind}between {low} and {high}, not {value!r}")
    return value


def clamp(value: Any, low: float, high: float, name: str, *, default: float | None = None) -> Any:
    """`value` as a number of `low`'s type (int or float) within [low, high]. What is not a number (None, a bool, text,
    NaN) is `default` when there is one (a tool argument a model wrote), else a ValueError naming `name`."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = type(low)(value)
        if number != number:  # NaN
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        if default is None:
            raise ValueError(f"{name} must be a number, not {value!r}") from None
        number = default
    return min(high, max(low, number))


def bounded_count(name: str, value: Any, default: int, most: int) -> int:
    """`value` clamped to 1..`most` (`default` when None); ValueError naming `name` when it is not a whole number."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    return min(max(value, 1), most)


def bounded_text(name: str, value: Any, limit: int) -> str:
    """`value` stripped, if it is text neither blank nor longer than `limit` characters (None counts as blank);
    ValueError naming `name` otherwise. The one check of a question, a query or a name that every source, tool and
    request makes, in one wording."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be text, not {type(value).__name__}")
    text = (value or "").strip()
    if not text:
        raise ValueError(f"{name} is empty")
    if len(text) > limit:
        raise ValueError(f"{name} is longer than {limit:,} characters ({len(text):,})")
    return text


def string_list(name: str, value: Any, default: list[str] | None = None) -> list[str] | None:
    """`value` if it is a list of strings (`default` when None); ValueError naming `name` otherwise."""
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{name} must be a list of strings")
    return value
