"""A person's birth or death date read from the brackets an encyclopaedic lead sentence puts after their name.

Reference texts open an entry on a person with the name and the life's dates in brackets: "Ilsa Varga (3 May 1911 –
28 April 1989) was a Hungarian film director", "Tomas Reln (born 8 June 1951) is a singer", "Mara Oste (died 1702)".
The sentence never says "born" or "died" beside the second date, so a question asking when such a person died shares
no word with it but the name, and a sentence naming the person beside another date ("It was a remake of the 1949
film directed by Varga") reads as well. `life_date` reads the asked end of the bracket of a sentence that opens with
the asked person's name, and `life_answer` answers the question with it (its year alone when a year is asked); the
answer step (`ExtractiveAnswerGenerator`) takes it for a question asking when a person named in it was born or died.

Only the convention is read (a name, a bracket, two dates joined by a dash or "to", or one date after "born" or
"died"): no wording of any question set.

Usage:
```python
lead = "Ilsa Varga (3 May 1911 – 28 April 1989) was a director."
life_answer(lead, "When did Ilsa Varga die?")  # "28 April 1989"
life_answer(lead, "In what year was Ilsa Varga born?")  # "1911"
```
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from typing import Any

from components.text.analyzer import terms
from components.text.language import parse

BIRTH, DEATH = "birth", "death"
BIRTH_WORDS = frozenset(terms("born birth"))
_DEATH_WORDS = frozenset(terms("die died death"))
LIFE_EVENT_TERMS = BIRTH_WORDS | _DEATH_WORDS
# A question asking for a date: its first wh-word is "when" or asks for a year, a date or a day ("When ...", "In what
# year ...", "... on what date?"); "Where did X live when she died?" asks for a place.
_FIRST_WH = re.compile(r"\b(?:when|what|which|who|whom|whose|where|why|how)\b", re.I)
_ASKS_DATE = re.compile(r"when|(?:what|which)\s+(?:year|date|day)\b", re.I)
# The small words inside a person's name ("Geza von Cziffra", "Vasco da Gama").
_NAME_PARTICLES = frozenset("von van der den de da di du del la le bin ibn".split())
# A regnal number inside a name ("John I Albert").
_REGNAL = re.compile(r"^[IVXL]+$")
_ASKS_YEAR = re.compile(r"\b(?:what|which)\s+year\b", re.I)
# The name a lead sentence opens with (an article, capitalised words and the small words of names such as "von",
# "de" or "of"), then the brackets after it, the first of which may be empty or hold a pronunciation.
_LEAD = re.compile(
    r"^\s*(?:The\s+)?(?P<name>[A-Z\u00c0-\u024f][^\s(]*(?:\s+(?:[A-Z\u00c0-\u024f][^\s(]*|[a-z]{1,3}))*?)\s*"
    r"(?P<brackets>(?:\([^()]*\)\s*)+)"
)
_BRACKET = re.compile(r"\(([^()]*)\)")
# The two ends of a life's range: a dash of any kind, or "to".
_RANGE = re.compile(r"\s*(?:[\u2013\u2014-]|\bto\b)\s*")
_BORN = re.compile(r"^(?:born|b\.)\s+", re.I)
_DIED = re.compile(r"^(?:died|d\.)\s+", re.I)
# A circa or a question mark before or after a date is no part of it.
_HEDGE = re.compile(r"^(?:c\.|ca\.|circa)\s*|\s*\?$", re.I)
# The words of a date as a life's bracket writes it: a day, a month's name or its abbreviation, a year of three or four
# digits with its era. The dates module's parser reads dates from running text; these few forms are read whole or not
# at all, so "2009 season" or "1459" with a word after it is no date here (and some dates before 1600 that parser
# leaves unread are).
_MONTHS = frozenset(name.lower() for name in (*calendar.month_name[1:], *calendar.month_abbr[1:]))
_DAY = re.compile(r"^(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?$")
_YEAR = re.compile(r"^\d{3,4}$")
_ERAS = frozenset({"ad", "bc", "bce", "ce"})


def asked_life_event(question: str) -> str | None:
    """`BIRTH` or `DEATH` when `question` asks for the date of one ("When was X born?", "In what year did X die?",
    "X was born on what date?"), else None (a question naming both, or neither, or asking no date)."""
    first = _FIRST_WH.search(question)
    if first is None or not _ASKS_DATE.match(question, first.start()):
        return None
    asked = set(terms(question))
    birth, death = bool(asked & BIRTH_WORDS), bool(asked & _DEATH_WORDS)
    if birth == death:
        return None
    return BIRTH if birth else DEATH


def asked_person(question: str) -> frozenset[str]:
    """The terms of the one name whose birth or death `question` asks about ("When did Ilsa Varga die?"); empty when
    it names none, several ("When did A and B die?") or asks of someone the name only points at ("the husband of A",
    "A's husband")."""
    tokens = list(parse(question))
    runs: list[list[Any]] = []
    for position, token in enumerate(tokens):
        small = token.lower_ in _NAME_PARTICLES or _REGNAL.match(token.text) is not None
        inner = small and runs and runs[-1][-1].i == position - 1
        if token.pos_ == "PROPN" or (inner and position + 1 < len(tokens) and tokens[position + 1].pos_ == "PROPN"):
            if runs and runs[-1][-1].i == position - 1:
                runs[-1].append(token)
            else:
                runs.append([token])
    if len(runs) != 1:
        return frozenset()
    run = runs[0]
    before = tokens[run[0].i - 1] if run[0].i else None
    after = tokens[run[-1].i + 1] if run[-1].i + 1 < len(tokens) else None
    if (before is not None and before.lower_ == "of") or (after is not None and after.tag_ == "POS"):
        return frozenset()
    return frozenset(terms(" ".join(token.text for token in run)))


def life_answer(sentence: str, question: str, question_terms: Iterable[str] = ()) -> str | None:
    """The answer `sentence` gives to `question` when it asks when a person was born or died (`asked_life_event`):
    the bracket's date (`life_date`) when the sentence opens with the name the question asks of (`asked_person`;
    the sentence may write it in full, "Sandra Miju Oh" for "Sandra Oh"), only its year when the question asks for a
    year ("In what year was X born?"); None otherwise."""
    event = asked_life_event(question)
    person = asked_person(question) if event else frozenset()
    date = life_date(sentence, event, person) if person else None
    if date and _ASKS_YEAR.search(question):
        return next(word for word in date.split() if _YEAR.match(word.strip(",.")))
    return date


def life_date(sentence: str, event: str, person: Iterable[str]) -> str | None:
    """The date of `event` (`BIRTH` or `DEATH`) in the brackets after the name `sentence` opens with, as written;
    None when that name does not hold every word of the asked `person`'s (terms: "Brenn" is not "Karl Brenn"), or
    its brackets give no such date: a range of two dates gives the birth first and the death second, "born X" a
    birth and "died X" a death."""
    lead = _LEAD.match(sentence)
    person = set(person)
    if lead is None or not person or not person <= set(terms(lead.group("name"))):
        return None
    for inside in _BRACKET.findall(lead.group("brackets")):
        pieces = [piece.strip() for piece in inside.split(";")]
        for position, piece in enumerate(pieces):
            found = _read(piece, event)
            if found:
                return found
            # "born Gaynor Hopkins; 8 June 1951": the date after a birth name is the birth's.
            if position and event == BIRTH and _BORN.match(pieces[position - 1]) and not _RANGE.search(piece):
                born = _dated(piece)
                if born:
                    return born
    return None


def _read(piece: str, event: str) -> str | None:
    """The date of `event` in one piece of a bracket ("3 May 1911 – 28 April 1989", "born 8 June 1951"), or None."""
    if _BORN.match(piece):
        return _dated(_BORN.sub("", piece)) if event == BIRTH else None
    if _DIED.match(piece):
        return _dated(_DIED.sub("", piece)) if event == DEATH else None
    ends = _RANGE.split(piece)
    if len(ends) != 2:
        return None
    born, died = (_dated(end) for end in ends)
    if born is None or died is None:
        return None
    return born if event == BIRTH else died


def _dated(text: str) -> str | None:
    """`text` without a hedge when it is a date stating its year ("28 April 1989", "February 27, 1913", "1780"), else
    None."""
    text = _HEDGE.sub("", text.strip(" ,")).strip()
    words = [word.strip(",.").lower() for word in text.split()]
    if not words or sum(bool(_YEAR.match(word)) for word in words) != 1:
        return None
    if not all(_YEAR.match(word) or _DAY.match(word) or word in _MONTHS or word in _ERAS for word in words):
        return None
    return text
