"""The one date parser: ISO text read directly, everything else by `dateparser`, against a document's date.

Every place that reads a date (chunk metadata, knowledge-base and arXiv filters, memory, the web's page metadata,
converters, the catalog, the HTTP wrappers, the app, the evaluation sets, the graph's dates) goes through here,
so "2024-05-31", "2024-05-31T10:00:00Z", "31 May 2024" and "May 2024" mean the same thing everywhere.

- `parse_date(value)`: a calendar date from a date, a datetime or text. `strict=True` is for filters a person
  types (`date_from`, `as_of`): ISO only, and anything else is a `ValueError`; `input_date(value, name)` words it.
  Lenient (the default) is for metadata found in documents: ISO first (fast), then `dateparser`; text without a
  stated year is a date only when `base` (the document's date) is given to count from, and otherwise None.
- `parse_moment(value)`: a point in time, for memory and snapshots: an aware UTC datetime, or a plain date when
  the text names only a day (the caller decides whether that day starts or ends there).
- `iso_date(text)`: ISO text of any precision ("2008", "2008-06", "2008-06-09") with the precision it states;
  `date_parser(base)` the shared `dateparser` instance the graph's date extraction resolves phrases with.

Usage:
```python
from components.text.dates import parse_date

parse_date("31 May 2024")                              # date(2024, 5, 31)
parse_date("last March", base=dt.date(2024, 6, 9))     # date(2024, 3, 1)
parse_date("May 3")                                    # None: no year stated and nothing to count from
parse_date("31/05/2024", strict=True)                  # ValueError
```
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_ISO_PRECISION = (
    (re.compile(r"\d{4}"), "year"),
    (re.compile(r"\d{4}-\d{2}"), "month"),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), "day"),
)
_YEAR = re.compile(r"\b\d{4}\b")
# The English month names in calendar order, for the rules that read dates from words without a parser.
MONTH_NAMES = "january february march april may june july august september october november december".split()


@lru_cache(maxsize=64)
def date_parser(base: dt.date, prefer: str = "past") -> Any:
    """The `dateparser` parser for English text, relative expressions counted from `base` (first of the month for
    month-only dates; `prefer` "past" or "future" for a bare weekday or month)."""
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": dt.datetime(base.year, base.month, base.day),
            "PREFER_DATES_FROM": prefer,
            "PREFER_DAY_OF_MONTH": "first",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )


def iso_date(text: str) -> tuple[dt.date, str] | None:
    """(first day, precision) of ISO text "YYYY", "YYYY-MM" or "YYYY-MM-DD" (a timestamp is cut to its date);
    None when the text is not one of those."""
    value = re.split(r"[T ]", (text or "").strip(), maxsplit=1)[0]
    for pattern, precision in _ISO_PRECISION:
        if pattern.fullmatch(value):
            parts = [int(part) for part in value.split("-")] + [1, 1]
            try:
                return dt.date(parts[0], parts[1], parts[2]), precision
            except ValueError:
                return None
    return None


def _iso_moment(text: str) -> dt.datetime | dt.date | None:
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_date(value: Any, *, strict: bool = False, base: dt.date | None = None) -> dt.date | None:
    """A calendar date from `value`; None for None or blank text.

    Strict: a date, a datetime or ISO text (a date or a date-time), else `ValueError`. Lenient: ISO text, then any
    English date `dateparser` reads (month-only and year-only dates are their first day); without `base` the text
    must state its year, and what is not a date is None.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    moment = value if isinstance(value, dt.date) else _iso_moment(text)
    if moment is not None:
        return moment.date() if isinstance(moment, dt.datetime) else moment
    if strict:
        raise ValueError(f"{text[:40]!r} is not a date like 2024-05-31")
    if base is None and not _YEAR.search(text):
        return None  # "May 3" would silently become a date of this year
    data = date_parser(base or dt.date(2000, 1, 1)).get_date_data(text)
    if data.date_obj is None:
        return None
    day = data.date_obj.date()
    if data.period == "year":
        return day.replace(month=1, day=1)
    return day.replace(day=1) if data.period == "month" else day


def input_date(value: Any, name: str, error: type[Exception] = ValueError) -> dt.date | None:
    """`parse_date(value, strict=True)` for the date a person gave as `name`; `error` saying so when malformed."""
    try:
        return parse_date(value, strict=True)
    except ValueError:
        raise error(f"{name} must be a date as YYYY-MM-DD, not {value!r:.40}") from None


@dataclass(frozen=True)
class DateBounds:
    """A request's dates, parsed: `as_of` (None: today) and the inclusive range `date_from`..`date_to`, where
    `date_to` is already capped by `as_of` (nothing known after that day can count)."""

    as_of: dt.date | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None


def date_bounds(
    as_of: Any = None, date_from: Any = None, date_to: Any = None, error: type[Exception] = ValueError
) -> DateBounds:
    """The one place a request's dates are read: each a `date` or ISO text (`error` naming it when malformed),
    `date_from` after `date_to` refused, and `as_of` capping `date_to`."""
    day = input_date(as_of, "as_of", error)
    start = input_date(date_from, "date_from", error)
    end = input_date(date_to, "date_to", error)
    if start and end and start > end:
        raise error(f"date_from {start.isoformat()} is after date_to {end.isoformat()}")
    if day is not None and (end is None or day < end):
        end = day
    return DateBounds(day, start, end)


def parse_moment(value: Any) -> dt.datetime | dt.date | None:
    """A point in time from a datetime, a date or ISO text; None for None or blank, `ValueError` when malformed.

    A datetime comes back aware, in UTC (naive ones are taken as UTC); a bare day comes back as a `date`.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    moment = value if isinstance(value, dt.date) else _iso_moment(str(value).strip())
    if moment is None:
        raise ValueError(f"{str(value)[:40]!r} is not an ISO date (YYYY-MM-DD) or date-time")
    if not isinstance(moment, dt.datetime):
        return moment
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
