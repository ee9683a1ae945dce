"""Dates with a precision: parsing the dates a sentence states, resolved against its document's date.

A `FuzzyDate` is a calendar date plus how much of it is known (`year`, `month` or `day`), written as ISO text of
that precision ("2008", "2008-06", "2008-06-09"). Sentences are read with regular expressions and
`dateutil.relativedelta` arithmetic, so nothing is downloaded and a sentence takes microseconds.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

PRECISIONS = ("year", "month", "day")

_MONTHS = {name.lower(): index for index, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): index for index, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): index for index, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "several": 3,
    "a few": 3,
}

_MONTH_RE = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR_RE = r"(?:1[5-9]\d\d|20\d\d)"
_NUM_RE = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|a few)"

# Order matters: the longer, more specific forms are tried first at each position.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(rf"\b({_YEAR_RE})-(\d\d)-(\d\d)\b")),
    ("mdy", re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+({_YEAR_RE})\b", re.I)),
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE}),?\s+({_YEAR_RE})\b", re.I)),
    ("my_this", re.compile(rf"\b({_MONTH_RE})\s+(?:of\s+)?(this|last|next)\s+year\b", re.I)),
    ("my", re.compile(rf"\b({_MONTH_RE}),?\s+(?:of\s+)?({_YEAR_RE})\b", re.I)),
    ("md", re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d)", re.I)),
    ("dm", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b", re.I)),
    ("rel_month", re.compile(rf"\b(last|next|this|in|since|until|by|early|late|mid-?)\s+({_MONTH_RE})(?![\w-])", re.I)),
    (
        "rel_weekday",
        re.compile(r"\b(last|next|this|on|)\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I),
    ),
    (
        "deictic",
        re.compile(
            r"\b(today|tonight|this morning|this afternoon|this evening|yesterday|tomorrow|this week|last week|"
            r"next week|this month|last month|next month|this year|last year|next year)\b",
            re.I,
        ),
    ),
    ("ago", re.compile(rf"\b({_NUM_RE})\s+(day|week|month|year)s?\s+(ago|earlier|later|after|before)\b", re.I)),
    ("following", re.compile(r"\b(?:the\s+)?(following|next|previous|preceding)\s+(day|week|month|year)\b", re.I)),
    (
        "year",
        re.compile(
            rf"(?<![\w$£€.,-])({_YEAR_RE})(?![\w%'’-])"
            r"(?!\s*(?:percent|per cent|million|billion|thousand|units|people))",
            re.I,
        ),
    ),
]

_RANGE_END_RE = re.compile(r"\b(until|till|through|to|ended(?:\s+in|\s+on)?|and)\s*$", re.I)
_RANGE_START_RE = re.compile(r"\b(from|between|since|starting(?:\s+in|\s+on)?|began(?:\s+in|\s+on)?)\s*$", re.I)
_FUTURE_RE = re.compile(r"\b(will|shall|is going to|are going to|plans? to|next|upcoming|scheduled|slated)\b", re.I)


@dataclass(frozen=True, order=True)
class FuzzyDate:
    """A date known to `precision`: `value` is the first day of the period it names."""

    value: dt.date
    precision: str = "day"

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")

    @property
    def end(self) -> dt.date:
        """The last day of the period the date names."""
        if self.precision == "year":
            return dt.date(self.value.year, 12, 31)
        if self.precision == "month":
            return self.value + relativedelta(day=31)
        return self.value

    def iso(self) -> str:
        """ISO text of the date's precision: "2008", "2008-06" or "2008-06-09"."""
        if self.precision == "year":
            return f"{self.value.year:04d}"
        if self.precision == "month":
            return f"{self.value.year:04d}-{self.value.month:02d}"
        return self.value.isoformat()

    def agrees_with(self, other: FuzzyDate) -> bool:
        """True when this date names the same period as `other` to `other`'s precision (and is at least as precise)."""
        if PRECISIONS.index(self.precision) < PRECISIONS.index(other.precision):
            return False
        if self.value.year != other.value.year:
            return False
        if other.precision in ("month", "day") and self.value.month != other.value.month:
            return False
        return other.precision != "day" or self.value.day == other.value.day

    @classmethod
    def parse(cls, text: str) -> FuzzyDate:
        """Read "YYYY", "YYYY-MM" or "YYYY-MM-DD" (a longer ISO timestamp is cut to its date); ValueError otherwise."""
        value = (text or "").strip()
        if "T" in value or " " in value:
            value = re.split(r"[T ]", value, maxsplit=1)[0]
        try:
            if re.fullmatch(r"\d{4}", value):
                return cls(dt.date(int(value), 1, 1), "year")
            if re.fullmatch(r"\d{4}-\d{2}", value):
                year, month = value.split("-")
                return cls(dt.date(int(year), int(month), 1), "month")
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                return cls(dt.date.fromisoformat(value), "day")
        except ValueError:
            pass
        raise ValueError(f"{text!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")

    @classmethod
    def from_date(cls, value: dt.date | dt.datetime, precision: str = "day") -> FuzzyDate:
        """A `FuzzyDate` at `precision` from a plain date."""
        if isinstance(value, dt.datetime):
            value = value.date()
        if precision == "year":
            value = value.replace(month=1, day=1)
        elif precision == "month":
            value = value.replace(day=1)
        return cls(value, precision)


@dataclass(frozen=True)
class DateMention:
    """A date a sentence states: where it is, what it resolves to, and whether it opens or closes a period."""

    start: int
    end: int
    date: FuzzyDate
    role: str = "point"  # point | start | end
    relative: bool = False


def _month(text: str) -> int:
    return _MONTHS[text.lower().rstrip(".")]


def _number(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _NUMBERS.get(text, 1)


def _safe_day(year: int, month: int, day: int) -> FuzzyDate | None:
    try:
        return FuzzyDate(dt.date(year, month, day), "day")
    except ValueError:
        return None


def _resolve(
    kind: str, match: re.Match[str], anchor: dt.date | None, previous: FuzzyDate | None, future: bool
) -> FuzzyDate | None:
    groups = match.groups()
    if kind == "iso":
        return _safe_day(int(groups[0]), int(groups[1]), int(groups[2]))
    if kind == "mdy":
        return _safe_day(int(groups[2]), _month(groups[0]), int(groups[1]))
    if kind == "dmy":
        return _safe_day(int(groups[2]), _month(groups[1]), int(groups[0]))
    if kind == "my":
        return FuzzyDate(dt.date(int(groups[1]), _month(groups[0]), 1), "month")
    if anchor is None:
        if kind == "year":
            return FuzzyDate(dt.date(int(groups[0]), 1, 1), "year")
        return None  # a relative date needs the document's date
    if kind == "year":
        return FuzzyDate(dt.date(int(groups[0]), 1, 1), "year")
    if kind == "my_this":
        shift = {"this": 0, "last": -1, "next": 1}[groups[1].lower()]
        return FuzzyDate(dt.date(anchor.year + shift, _month(groups[0]), 1), "month")
    if kind == "md":
        return _safe_day(anchor.year, _month(groups[0]), int(groups[1]))
    if kind == "dm":
        return _safe_day(anchor.year, _month(groups[1]), int(groups[0]))
    if kind == "rel_month":
        word, month = groups[0].lower(), _month(groups[1])
        if month == 5 and word in ("in", "since", "until", "by") and groups[1][0].islower():
            return None  # "may" the verb, not the month
        if word == "last":
            year = anchor.year if month < anchor.month else anchor.year - 1
        elif word == "next" or (future and word != "since"):
            year = (
                anchor.year if month > anchor.month or (word != "next" and month == anchor.month) else anchor.year + 1
            )
        else:
            year = anchor.year if month <= anchor.month else anchor.year - 1
        return FuzzyDate(dt.date(year, month, 1), "month")
    if kind == "rel_weekday":
        word, weekday = groups[0].lower(), _WEEKDAYS[groups[1].lower()]
        if word == "next" or (word != "last" and future):
            delta = (weekday - anchor.weekday()) % 7 or 7
            return FuzzyDate(anchor + dt.timedelta(days=delta), "day")
        delta = (anchor.weekday() - weekday) % 7
        if word == "last" and delta == 0:
            delta = 7
        return FuzzyDate(anchor - dt.timedelta(days=delta), "day")
    if kind == "deictic":
        word = groups[0].lower()
        if word in ("today", "tonight", "this morning", "this afternoon", "this evening"):
            return FuzzyDate(anchor, "day")
        if word == "yesterday":
            return FuzzyDate(anchor - dt.timedelta(days=1), "day")
        if word == "tomorrow":
            return FuzzyDate(anchor + dt.timedelta(days=1), "day")
        unit, shift = word.split()[1], {"this": 0, "last": -1, "next": 1}[word.split()[0]]
        if unit == "week":
            return (
                FuzzyDate(anchor + dt.timedelta(weeks=shift), "day") if shift else FuzzyDate.from_date(anchor, "month")
            )
        if unit == "month":
            return FuzzyDate.from_date(anchor + relativedelta(months=shift), "month")
        return FuzzyDate.from_date(anchor + relativedelta(years=shift), "year")
    if kind == "ago":
        count, unit, direction = _number(groups[0]), groups[1].lower(), groups[2].lower()
        base = previous if direction in ("later", "after", "before", "earlier") and previous else None
        origin = base.value if base else anchor
        sign = 1 if direction in ("later", "after") else -1
        precision = {"day": "day", "week": "day", "month": "month", "year": "year"}[unit]
        if base is not None and PRECISIONS.index(base.precision) < PRECISIONS.index(precision):
            precision = base.precision
        delta = relativedelta(**{f"{unit}s": sign * count})
        return FuzzyDate.from_date(origin + delta, precision)
    if kind == "following":
        word, unit = groups[0].lower(), groups[1].lower()
        base = previous or FuzzyDate(anchor, "day")
        sign = 1 if word in ("following", "next") else -1
        precision = {"day": "day", "week": "day", "month": "month", "year": "year"}[unit]
        if PRECISIONS.index(base.precision) < PRECISIONS.index(precision):
            precision = base.precision
        return FuzzyDate.from_date(base.value + relativedelta(**{f"{unit}s": sign}), precision)
    return None


def find_dates(sentence: str, anchor: dt.date | None, previous: FuzzyDate | None = None) -> list[DateMention]:
    """Every date `sentence` states, in order, resolved against `anchor` (the document's date).

    `previous` is the last date stated earlier in the document: "two years later" and "the following year" count
    from it. Future tense ("will", "next") turns a bare weekday or month forward instead of back.
    """
    taken: list[tuple[int, int]] = []
    mentions: list[DateMention] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(sentence):
            start, end = match.span()
            if kind == "rel_weekday" and not match.group(1):
                start = match.start(2)
            if any(start < t_end and end > t_start for t_start, t_end in taken):
                continue
            # Tense is read just before the date: "announced on Thursday that it will" is still last Thursday.
            future = bool(_FUTURE_RE.search(sentence[max(0, start - 40) : start]))
            resolved = _resolve(kind, match, anchor, previous, future)
            if resolved is None:
                continue
            taken.append((start, end))
            before = sentence[max(0, start - 24) : start]
            role = "end" if _RANGE_END_RE.search(before) else "start" if _RANGE_START_RE.search(before) else "point"
            relative = kind not in ("iso", "mdy", "dmy", "my", "year")
            mentions.append(DateMention(start, end, resolved, role, relative))
    mentions.sort(key=lambda mention: mention.start)
    # "between X and Y": the first is a start, the "and" one an end only when a start came before it.
    fixed: list[DateMention] = []
    seen_start = False
    for mention in mentions:
        role = mention.role
        if role == "end" and sentence[max(0, mention.start - 6) : mention.start].strip().lower() in ("and", "to"):
            role = "end" if seen_start else "point"
        seen_start = seen_start or role == "start"
        fixed.append(DateMention(mention.start, mention.end, mention.date, role, mention.relative))
    return fixed


def sentence_validity(
    sentence: str, anchor: dt.date | None, previous: FuzzyDate | None = None
) -> tuple[FuzzyDate | None, FuzzyDate | None, str, list[DateMention]]:
    """(valid_at, invalid_at, how valid_at was found, mentions) for one sentence.

    valid_at is the first date the sentence states (or the start of a stated period); invalid_at is the end of a
    stated period ("from 2001 until 2011", "until March"). With no date in the sentence, valid_at is the document's
    date and the method says so.
    """
    mentions = find_dates(sentence, anchor, previous)
    valid = next((m.date for m in mentions if m.role == "start"), None)
    if valid is None:
        valid = next((m.date for m in mentions if m.role == "point"), None)
    invalid = next((m.date for m in mentions if m.role == "end"), None)
    if invalid is not None and valid is not None and invalid.value < valid.value:
        invalid = None
    if valid is not None:
        method = "relative" if any(m.date == valid and m.relative for m in mentions) else "stated"
        return valid, invalid, method, mentions
    if anchor is not None:
        return FuzzyDate(anchor, "day"), invalid, "document", mentions
    return None, invalid, "none", mentions
