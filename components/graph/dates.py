"""Dates with a precision, read by `dateparser` from the date expressions spaCy finds, against a document's date.

A `FuzzyDate` is a calendar date plus how much of it is known (`year`, `month` or `day`), written as ISO text of
that precision ("2008", "2008-06", "2008-06-09"). The places to look are spaCy's DATE entities (and bare years
after a preposition); `dateparser` turns each into a date with the document's date as its relative base ("last
March", "on Tuesday", "three years ago") and says which period it names, which becomes the precision. Steps of
time ("two years later", "the following month") count from the text's previous date ("next month" from the
document's date); modifiers that keep the period ("early 2007", "the end of March") are dropped before parsing;
durations ("for two weeks") and rates ("15 a year") are not dates. The text's time named again ("that day", "later
that year", "the year before") counts from its previous date and names nothing without one; a quarter, a half or a
season without its year ("the first quarter", "last quarter", "this summer") is the year it falls in; "this Monday"
is the Monday of the document's week, and a possessive date ("Monday's", "last year's") is the date.

Usage:
```python
from components.graph.dates import resolve_date, sentence_validity

resolve_date("last March", anchor=dt.date(2008, 6, 9))  # FuzzyDate(2008-03-01, "month")
valid, invalid, method, mentions = sentence_validity(doc_sentence, anchor=dt.date(2008, 6, 9))
```
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dateutil.relativedelta import relativedelta

from components.text.dates import MONTH_NAMES, date_parser, iso_date

PRECISIONS = ("year", "month", "day")

_PERIODS = {"year": "year", "month": "month", "week": "day", "day": "day", "time": "day"}
_UNIT = r"(day|week|month|year)s?"
_COUNTED = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty"
).split()
_NUMBER_WORDS = {"a": 1, "an": 1, **{word: n for n, word in enumerate(_COUNTED, 1)}, "several": 3, "a few": 3, "few": 3}
# Steps counted from the text's previous date, not from the document's.
_STEP_RE = re.compile(rf"^(\d+|a few|{'|'.join(_NUMBER_WORDS)})\s+{_UNIT}\s+(later|after|afterwards|earlier|before)$")
_NEXT_RE = re.compile(rf"^(?:the\s+)?(following|next|previous|preceding|same)\s+{_UNIT}$")
# The period the text is telling of, named again ("that year", "later that day", "earlier in the day"), and the one
# before or after it ("the day before", "the year after").
_THAT_RE = re.compile(rf"^(?:(?:earlier|later)\s+)?(?:that|in\s+the|the\s+same)\s+{_UNIT}$")
_THE_STEP_RE = re.compile(rf"^the\s+{_UNIT}\s+(before|after)$")
# A part of a year without its year: a quarter, a half, a season ("the first quarter", "last quarter", "this summer",
# "the second half of the fiscal year"), read as the year it falls in.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_PART_OF_YEAR_RE = re.compile(
    r"^(?:(?:earlier|later)\s+(?=that\s|this\s))?"
    r"(?:(?P<which>last|previous|preceding|past|this|current|next|coming|same|that)\s+)?"
    r"(?:(?P<ordinal>first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:fiscal\s+|financial\s+)?(?P<unit>quarter|half)"
    r"|q(?P<q>[1-4])|(?P<quarter>(?:fiscal\s+|financial\s+)?quarter)|(?P<season>spring|summer|autumn|fall|winter))"
    r"(?:\s+of\s+(?:the\s+)?(?P<year>(?:(?:this|last|next|current|previous)\s+)?(?:fiscal\s+|financial\s+)?year))?$"
)
_DURATION_RE = re.compile(
    rf"^(?:for\s+|about\s+|over\s+|nearly\s+|almost\s+)?(\d+|{'|'.join(_NUMBER_WORDS)})\s+{_UNIT}$"
)
# A rate ("15 a year", "twice per month") counts things in a period; it names no date.
_RATE_RE = re.compile(rf"\b(a|an|per|each|every)\s+{_UNIT}$")
_MODIFIER_RE = re.compile(
    r"^(?:(?:the\s+)?(?:early|earlier|mid|middle|late|later|end|start|beginning|first half|second half|spring|"
    r"summer|autumn|fall|winter)(?:\s+of)?[\s-]+)+"
)
_LEAD_RE = re.compile(r"^(?:on|in|at|by|since|from|until|till|through|during|as of|before|after|of)\s+")
_OF_YEAR_RE = re.compile(r"\s+of\s+(this|last|next)\s+year$")
_RANGE_RE = re.compile(r"\s+(?:until|till|through|to|and)\s+|\s*[-–]\s*(?=\d{4}$)")
_DECADE_RE = re.compile(r"\b\d{3}0'?s\b")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_THIS_WEEKDAY_RE = re.compile(rf"^this\s+({'|'.join(_WEEKDAYS)})(?:\s+(?:morning|afternoon|evening|night))?$")
_RELATIVE_MONTH_RE = re.compile(rf"^(last|next|this)\s+({'|'.join(MONTH_NAMES)})$")
# What may stand between a counted date and the stated date that restates it ("later, on May 3, 2010", "May, in 2022").
_JOINED_RE = re.compile(r"[\s,]*(?:(?:in|of|on|at)\s+)?")
_AGE_RE = re.compile(r"^(aged?\s|\d+\s+years?[\s-]+old$)", re.IGNORECASE)

_END_WORDS = {"until", "till", "through", "to", "ended", "ending", "thru"}
_START_WORDS = {"from", "since", "between", "starting", "began", "beginning"}


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
        return self.value + relativedelta(day=31) if self.precision == "month" else self.value

    def iso(self) -> str:
        """ISO text of the date's precision: "2008", "2008-06" or "2008-06-09"."""
        if self.precision == "year":
            return f"{self.value.year:04d}"
        return f"{self.value.year:04d}-{self.value.month:02d}" if self.precision == "month" else self.value.isoformat()

    def agrees_with(self, other: FuzzyDate) -> bool:
        """True when this date names the same period as `other` to `other`'s precision (and is at least as precise)."""
        if PRECISIONS.index(self.precision) < PRECISIONS.index(other.precision):
            return False
        return FuzzyDate.from_date(self.value, other.precision) == FuzzyDate.from_date(other.value, other.precision)

    @classmethod
    def parse(cls, text: str) -> FuzzyDate:
        """Read "YYYY", "YYYY-MM" or "YYYY-MM-DD" (a longer ISO timestamp is cut to its date); ValueError otherwise."""
        found = iso_date(text)
        if found is not None:
            return cls(*found)
        raise ValueError(f"{text!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")

    @classmethod
    def from_date(cls, value: dt.date, precision: str = "day") -> FuzzyDate:
        """A `FuzzyDate` at `precision` from a plain date."""
        if precision == "year":
            value = value.replace(month=1, day=1)
        elif precision == "month":
            value = value.replace(day=1)
        return cls(value, precision)


@dataclass(frozen=True)
class DateMention:
    """A date a sentence states: where it is (character offsets in the sentence), what it resolves to, and
    whether it opens or closes a period."""

    start: int
    end: int
    date: FuzzyDate
    role: str = "point"  # point | start | end
    relative: bool = False


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word, 1)


def _shift(base: FuzzyDate, unit: str, amount: int) -> FuzzyDate:
    precision = min(_PERIODS[unit], base.precision, key=PRECISIONS.index)  # never finer than the base
    # A step back counts from the base period's last day: "the day before" a year stays in that year.
    origin = base.end if amount < 0 else base.value
    return FuzzyDate.from_date(origin + relativedelta(**{f"{unit}s": amount}), precision)


@lru_cache(maxsize=65536)
def resolve_date(
    text: str, anchor: dt.date | None = None, previous: FuzzyDate | None = None, future: bool = False
) -> FuzzyDate | None:
    """The date `text` (a date expression) names, at the precision it states; None for durations and vague times.

    Relative expressions count from `anchor` (the document's date); "two years later" and "the following month"
    from `previous` (the text's last date) when there is one. `future` (the sentence speaks of what will happen)
    turns a bare weekday or month forward instead of back. Without an anchor only absolute dates are read.
    """
    phrase = " ".join((text or "").lower().replace("’", "'").split()).strip(" ,.;:")
    phrase = _LEAD_RE.sub("", phrase)
    phrase = re.sub(r"(?<=[a-z])'s?$", "", phrase)  # a possessive ("Monday's announcement", "last year's results")
    if not phrase or _DECADE_RE.search(phrase) or _DURATION_RE.match(phrase) or _RATE_RE.search(phrase):
        return None
    step = _STEP_RE.match(phrase)
    if step:
        origin = previous or (FuzzyDate(anchor, "day") if anchor else None)
        if origin is None:
            return None
        sign = 1 if step.group(3) in ("later", "after", "afterwards") else -1
        return _shift(origin, step.group(2), sign * _count(step.group(1)))
    following = _NEXT_RE.match(phrase)
    if following:
        # "next month" counts from the time of writing; "the next month", "the following month" from the text's date.
        deictic = following.group(1) == "next" and not phrase.startswith("the ")
        origin = (None if deictic else previous) or (FuzzyDate(anchor, "day") if anchor else None)
        if origin is None:
            return None
        sign = {"following": 1, "next": 1, "previous": -1, "preceding": -1, "same": 0}[following.group(1)]
        return _shift(origin, following.group(2), sign)
    # "that day", "the year before" name the text's time again: without an earlier date they name none.
    that = _THAT_RE.match(phrase)
    if that:
        return _shift(previous, that.group(1), 0) if previous else None
    the_step = _THE_STEP_RE.match(phrase)
    if the_step:
        return _shift(previous, the_step.group(1), 1 if the_step.group(2) == "after" else -1) if previous else None
    part = _PART_OF_YEAR_RE.match(phrase.removeprefix("the "))
    if part and anchor is not None:
        return _part_of_year(part, anchor, previous, future)
    bare = _MODIFIER_RE.sub("", phrase)
    modified = bare != phrase
    phrase = bare.removeprefix("the ").strip()
    if modified and anchor is not None and phrase in ("year", "month"):
        # "The end of the year", "the start of the month": the document's own year or month, as "the end of this
        # year" is; a part of it is no more precise than the whole (TimeML's value of "later this year").
        return FuzzyDate.from_date(anchor, phrase)
    if anchor is not None:  # "January of this year" -> "January 2019"
        phrase = _OF_YEAR_RE.sub(lambda m: f" {anchor.year + {'this': 0, 'last': -1, 'next': 1}[m.group(1)]}", phrase)
    relative_month = _RELATIVE_MONTH_RE.match(phrase)
    if relative_month and anchor is not None:
        word, month = relative_month.group(1), MONTH_NAMES.index(relative_month.group(2)) + 1
        if word == "last":
            year = anchor.year if month < anchor.month else anchor.year - 1
        elif word == "next":
            year = anchor.year if month > anchor.month else anchor.year + 1
        else:
            year = anchor.year
        return FuzzyDate(dt.date(year, month, 1), "month")
    if anchor is not None and phrase.split(" ")[0] == anchor.strftime("%A").lower() and len(phrase.split()) <= 2:
        return FuzzyDate(anchor, "day")  # "on Thursday" in a Thursday's news is that day, not a week before
    this_day = _THIS_WEEKDAY_RE.match(phrase)
    if this_day and anchor is not None:  # "this Monday": the Monday of the document's week, past or coming
        days = _WEEKDAYS.index(this_day.group(1)) - anchor.weekday()
        if future and days < 0:  # "will report this Monday" in a Thursday's news: the coming Monday
            days += 7
        return FuzzyDate(anchor + dt.timedelta(days=days), "day")
    year = _YEAR_RE.search(phrase)
    if anchor is None and year is None:
        return None
    data = date_parser(anchor or dt.date(2000, 1, 1), "future" if future else "past").get_date_data(phrase)
    if data.date_obj is not None and data.period in _PERIODS:
        value = data.date_obj.date()
        # dateparser's year-only dates keep the base's month; a stated year must be that year.
        if year is None and anchor is not None and not future and _month_named(phrase):
            # A day of a month without its year in the coming weeks is the coming one ("on June 24" in a June 16
            # story), not last year's: news tells what is about to happen.
            for coming in (_same_day_in_year(value, anchor.year + step) for step in (0, 1)):
                if coming is not None and 0 < (coming - anchor).days <= 31:
                    value = coming
        if year is None or value.year == int(year.group(1)):
            return FuzzyDate.from_date(value, _PERIODS[data.period])
    if year is None:
        return None
    month = _month_named(phrase)
    if month is not None:
        return FuzzyDate(dt.date(int(year.group(1)), month, 1), "month")
    return FuzzyDate(dt.date(int(year.group(1)), 1, 1), "year")


def _part_of_year(part: re.Match[str], anchor: dt.date, previous: FuzzyDate | None, future: bool) -> FuzzyDate | None:
    """The year a quarter, a half or a season without its year falls in: the one the sentence names ("of last
    year"), the one before or after the document's ("last quarter", "next summer"), else the latest that has begun by
    the document's date (the next one when the sentence speaks of what will happen). "That summer" is the text's
    previous date's year, and names none without one."""
    if part.group("which") in ("same", "that"):  # "that summer": the text's previous date's year
        return FuzzyDate.from_date(previous.value, "year") if previous is not None else None
    if part.group("quarter"):  # "last quarter", "this quarter": the quarter counted from the document's
        start = dt.date(anchor.year, (anchor.month - 1) // 3 * 3 + 1, 1)
        step = {"last": -1, "previous": -1, "preceding": -1, "past": -1, "next": 1, "coming": 1}.get(
            part.group("which") or "", 0
        )
        return FuzzyDate.from_date(start + relativedelta(months=3 * step), "year")
    if part.group("season"):
        month, length = _SEASONS[part.group("season")], 3
    elif part.group("q"):
        month, length = 3 * int(part.group("q")) - 2, 3
    else:
        size = 3 if part.group("unit") == "quarter" else 6
        month, length = size * (_ORDINALS[part.group("ordinal")] - 1) + 1, size
    which = part.group("which") or ""
    named = (part.group("year") or "").split()
    if named and named[0] in ("last", "previous", "next"):
        return FuzzyDate(dt.date(anchor.year + (1 if named[0] == "next" else -1), 1, 1), "year")
    if named or which in ("this", "current"):
        return FuzzyDate(dt.date(anchor.year, 1, 1), "year")
    begins = dt.date(anchor.year, month, 1)
    ended = begins + relativedelta(months=length) <= anchor
    if which in ("last", "previous", "preceding", "past"):
        year = anchor.year if ended else anchor.year - 1
    elif which in ("next", "coming") or future:
        year = anchor.year if begins > anchor else anchor.year + 1
    else:
        year = anchor.year if begins <= anchor else anchor.year - 1
    return FuzzyDate(dt.date(year, 1, 1), "year")


def _month_named(phrase: str) -> int | None:
    """The number of the first month whose name (or its first three letters) `phrase` holds."""
    return next((i + 1 for i, name in enumerate(MONTH_NAMES) if re.search(rf"\b{name[:3]}", phrase)), None)


def _same_day_in_year(value: dt.date, year: int) -> dt.date | None:
    try:
        return value.replace(year=year)
    except ValueError:  # 29 February
        return None


def is_stated(text: str) -> bool:
    """True when a date expression states its year (an absolute date), False for relative ones."""
    return bool(_YEAR_RE.search(text or ""))


def _date_spans(sentence: Any) -> list[Any]:
    """The sentence's DATE entities, plus bare years after a preposition the recogniser left out ("in 2020")."""
    # A year counting things ("1999 units") is a number, not a date; an age ("aged 55", "55 years old") neither.
    spans = [
        ent
        for ent in sentence.ents
        if ent.label_ == "DATE"
        and not (len(ent) == 1 and ent.root.dep_ == "nummod" and ent.root.head.pos_ == "NOUN")
        and not _AGE_RE.search(ent.text)
        and not (ent.start > sentence.start and sentence.doc[ent.start - 1].lower_ in ("aged", "age"))
        and not _age_after_a_name(ent)
    ]
    taken = {token.i for ent in spans for token in ent}
    for token in sentence:
        if (
            token.i not in taken
            and token.like_num
            and _YEAR_RE.fullmatch(token.text)
            and token.i > sentence.start
            and token.nbor(-1).dep_ == "prep"
        ):
            spans.append(sentence.doc[token.i : token.i + 1])
    return sorted(spans, key=lambda span: span.start)


def _age_after_a_name(ent: Any) -> bool:
    """True for a bare number of one to three digits set off after a name, as news gives a person's age ("Tomas Keller,
    52, ran ..."; "Dessau, 61, led ..."): the recogniser reads it as a date, which would be the year 1952."""
    doc = ent.doc
    if len(ent) != 1 or not ent.text.isdigit() or len(ent.text) > 3 or ent.start == 0:
        return False
    after = doc[ent.end] if ent.end < len(doc) else None
    if ent.root.dep_ == "appos":
        return ent.root.head.pos_ == "PROPN"
    named = ent.start >= 2 and doc[ent.start - 2].pos_ == "PROPN"
    return named and doc[ent.start - 1].text == "," and after is not None and after.text == ","


def date_clause_verb(span: Any) -> Any:
    """The verb whose event a date (its tokens) dates: the first verb above it (else the sentence's root), except for a
    date the parse hangs on a reported clause though it stands before that clause's subject, after the verb that
    reports it: "Varo said on Monday it would buy Quell" tells a saying of Monday; "said it would buy Quell on Monday"
    dates the buying, and in "said that on Monday it ..." the reported clause opens before the date."""
    # `clause_reading.clause_verb`'s walk, written here: this module is below the graph's model, which that one is not.
    verb = span.root
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    if verb.dep_ != "ccomp" or not span.start > verb.head.i:
        return verb
    subject = next((child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass", "expl")), None)
    opened = any(child.dep_ == "mark" and child.i < span.start for child in verb.children)
    if subject is None or opened or not span.end <= subject.left_edge.i:
        return verb
    return verb.head


# The auxiliaries of a future, contracted ("'ll") and negated ("won't" is "wo" + "n't", "shan't" "sha" + "n't").
_FUTURE_AUX = ("will", "shall", "would", "'ll", "wo", "sha")


def _speaks_of_future(span: Any) -> bool:
    """True when the clause the date belongs to tells what will happen: its verb (or a verb it completes: "plans to
    open", "is expected to land") takes "will", "shall" or "would", or is a verb of planning. A future in another
    clause ("Quillon, which will open a plant, said on Monday ...") does not turn the date forward, nor does a reported
    one the date of its saying ("said on Monday it would buy ...")."""
    verb = date_clause_verb(span)
    own = verb
    while True:
        if any(child.dep_ == "aux" and child.lower_.replace("’", "'") in _FUTURE_AUX for child in verb.children):
            return True
        # The date's own verb of planning tells the future as a participle ("is expected on Monday", "scheduled for
        # Friday"); in the past it dates the planning itself ("On Monday, Quillon expected sales to fall").
        planning = verb.lemma_ in ("plan", "expect", "schedule", "intend", "aim")
        if planning and verb.i not in range(span.start, span.end) and (verb.i != own.i or verb.tag_ != "VBD"):
            return True
        # A verb in the past is its own clause's tense: it takes no future from the verb it is joined to.
        if verb.tag_ == "VBD" or verb.dep_ not in ("xcomp", "conj", "advcl") or verb.head.i == verb.i:
            return False
        verb = verb.head


def find_dates(sentence: Any, anchor: dt.date | None, previous: FuzzyDate | None = None) -> list[DateMention]:
    """Every date the spaCy `sentence` (a Span or Doc) states, in order, resolved against `anchor`."""
    mentions: list[DateMention] = []
    seen_start = False
    offset = sentence.start_char
    for span in _date_spans(sentence):
        start = span.start_char - offset
        future = _speaks_of_future(span)
        before = sentence.doc[span.start - 1].lower_ if span.start > sentence.start else ""
        parts = _RANGE_RE.split(span.text)
        if len(parts) == 2:  # "2012 until 2019", "2001 and 2004", "2007-2008": one entity, a period
            first, last = (resolve_date(part, anchor, previous, future) for part in parts)
            for date, role in ((first, "start"), (last, "end")):
                if date is not None:
                    mentions.append(DateMention(start, span.end_char - offset, date, role, not is_stated(span.text)))
                    # A later date of the sentence ("two years later", "that summer") counts from this one.
                    previous = date if is_stated(span.text) else previous
            seen_start = seen_start or first is not None
            continue
        text = span.text
        # The recogniser leaves "that" out of "that summer": the season is the text's time named again.
        named_again = (
            before == "that"
            and sentence.doc[span.start - 1].dep_ == "det"  # not "said that fourth-quarter sales rose"
            and _PART_OF_YEAR_RE.match(text.lower()) is not None
        )
        resolved = resolve_date(f"that {text}" if named_again else text, anchor, previous, future)
        if resolved is None and "," in text:  # "November 11, three days later than planned": the date it leads with
            text = text.split(",")[0]
            resolved = resolve_date(text, anchor, previous, future)
        if resolved is None:
            continue
        role = "end" if before in _END_WORDS else "start" if before in _START_WORDS else "point"
        if before == "and" and seen_start:
            role = "end"
        seen_start = seen_start or role == "start"
        mentions.append(DateMention(start, start + len(text), resolved, role, not is_stated(text)))
        previous = resolved if is_stated(text) else previous
    return _restated(mentions, sentence.text)


def _restated(mentions: list[DateMention], text: str) -> list[DateMention]:
    """A counted date the sentence restates right after it as a stated one ("Fourteen years later, on January 23,
    2020"; "The following May, in 2022") is that stated date: a bare month takes the stated year (May 2022), any
    other counted date gives way to it."""
    out: list[DateMention] = []
    for i, mention in enumerate(mentions):
        after = mentions[i + 1] if i + 1 < len(mentions) else None
        if (
            after is None
            or not mention.relative
            or after.relative
            or not _JOINED_RE.fullmatch(text[mention.end : after.start])
        ):
            out.append(mention)
            continue
        month = _month_named(text[mention.start : mention.end].lower())
        if mention.date.precision == "month" and month is not None and after.date.precision == "year":
            date = FuzzyDate(dt.date(after.date.value.year, month, 1), "month")
            out.append(DateMention(mention.start, mention.end, date, mention.role))
        elif mention.role != "point" and after.role == "point":
            out.append(DateMention(mention.start, mention.end, after.date, mention.role))
    return out


def sentence_validity(
    sentence: Any, anchor: dt.date | None, previous: FuzzyDate | None = None
) -> tuple[FuzzyDate | None, FuzzyDate | None, str, list[DateMention]]:
    """(valid_at, invalid_at, how valid_at was found, mentions) for one spaCy sentence.

    valid_at is the start of a stated period or the first date the sentence states (a counted date restated as a
    stated one, "two years later, on May 3, 2010", is May 3, 2010); invalid_at the end of a stated
    period ("from 2001 until 2011", "until March"). With no date in the sentence, valid_at is the document's date
    and the method says so (`document`), or None (`none`) without one.
    """
    mentions = find_dates(sentence, anchor, previous)
    return (*validity(mentions, anchor), mentions)


def validity(mentions: list[DateMention], anchor: dt.date | None) -> tuple[FuzzyDate | None, FuzzyDate | None, str]:
    """(valid_at, invalid_at, method) from the date mentions that date an event (see `sentence_validity`)."""
    valid = next((m.date for m in mentions if m.role == "start"), None)
    if valid is None:
        valid = next((m.date for m in mentions if m.role == "point"), None)
    invalid = next((m.date for m in mentions if m.role == "end"), None)
    if invalid is not None and valid is not None and invalid.value < valid.value:
        invalid = None
    if valid is not None:
        method = "relative" if any(m.date == valid and m.relative for m in mentions) else "stated"
        return valid, invalid, method
    if anchor is not None:
        return FuzzyDate(anchor, "day"), invalid, "document"
    return None, invalid, "none"
