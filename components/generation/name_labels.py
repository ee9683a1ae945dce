"""Names told apart by a label after a capitalised word: "Series D", "Korvan 11", "Phase II", "Tessel 3.0".

A question about "the Series D" is not answered by a sentence about "the Series B": the two share every word the
question's terms keep (a single letter may even be a stop word), so a sentence that gives the name another label,
and never the question's, speaks of another thing. The label is a capital letter, a Roman numeral or a short number
(a version); labels joined by "and", "or" or commas share the word before them ("Korvan 11 and 12"), a range
("Phases 2 to 4", "Series A through C") holds every label between its ends, and a plural word is the singular's
("Korvans 11 and 12"). A Roman numeral is its number ("Korvan II" is "Korvan 2", "Tessa Cup XLIX" the 49th), and
a label ending a sentence ("... and the Series D.") is a label. A label it cannot read after the word ("Korvan IB",
"Korvan 5A": capitals or digits, no plain word) leaves that name undecided, since it may be the asked one. A month
before a number is a date ("March 15"), not a label, and a function word heads no name.

Usage:
```python
other_label("Which firm led the Series D?", "It raised a Series B led by Harrow Partners.")  # True
```
"""

from __future__ import annotations

import calendar
import re

from components.text.analyzer import STOP_WORDS

_LABEL = r"(?:[A-Z]|[IVXLC]{2,9}|\d{1,2}(?:\.\d+)?)"
_END = r"(?!\w|\.\d)"  # a word or a version's further part ("3.0.1") goes on; a sentence's full stop ends it
_NAMED = re.compile(
    rf"\b(?P<head>[A-Z][A-Za-z]+) (?P<labels>{_LABEL}(?:(?:,\s*|,?\s+(?:and|or|to|through)\s+){_LABEL})*){_END}"
)
_JOINED = re.compile(rf"(?P<range>\b(?:to|through)\s+)?(?<![\w.])(?P<label>{_LABEL}){_END}")
_TENS = ("", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC")
_ONES = ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")


def _roman_numerals() -> dict[str, str]:
    """Roman numerals in their standard form, up to 399, and their numbers: one letter only as I, V or X (the other
    letters stay letters: "Series C", "Series L"), more than one of I, V, X, L and C always ("XLIX" is 49)."""
    numerals = {}
    for value in range(1, 400):
        hundreds, rest = divmod(value, 100)
        numeral = "C" * hundreds + _TENS[rest // 10] + _ONES[rest % 10]
        if len(numeral) > 1 or numeral in ("I", "V", "X"):
            numerals[numeral] = str(value)
    return numerals


_ROMAN = _roman_numerals()
# A word after a capitalised word that reads as a label this module cannot read ("Korvan IB", "Korvan 5A"): capitals
# or digits, not a plain word. It may be the asked label, so it leaves the name undecided.
_UNREAD = re.compile(r"\b(?P<head>[A-Z][A-Za-z]+) (?P<token>(?=[\w-]*[A-Z\d]{2}|[\w-]*\d)[A-Z\d][\w-]*)")
UNREAD = "?"
_MONTHS = frozenset(name.lower() for name in (*calendar.month_name, *calendar.month_abbr) if name)


def labelled_names(text: str) -> dict[str, frozenset[str]]:
    """The labels each capitalised word carries in `text` ("Series D and E" -> {"series": {"D", "E"}})."""
    found: dict[str, set[str]] = {}
    read = {match.start("labels") for match in _NAMED.finditer(text or "")}
    for match in _UNREAD.finditer(text or ""):
        if match.start("token") not in read:
            found.setdefault(_singular(match["head"].lower()), set()).add(UNREAD)
    for match in _NAMED.finditer(text or ""):
        head = _singular(match["head"].lower())
        if head in _MONTHS or head in STOP_WORDS:
            continue
        labels: list[str] = []
        for joined in _JOINED.finditer(match["labels"]):
            label = _label(joined["label"])
            if joined["range"] and labels:
                labels.extend(_between(labels[-1], label))
            labels.append(label)
        found.setdefault(head, set()).update(labels)
    return {
        head: frozenset(labels)
        for head, labels in found.items()
        if head not in _MONTHS and head not in STOP_WORDS and labels != {UNREAD}
    }


def _label(text: str) -> str:
    """The label as compared: a version without trailing zero parts ("3.0" is the "3": it names no other version),
    a Roman numeral as its number ("II" is "2"; letters that make none are unread)."""
    if text in _ROMAN:
        return _ROMAN[text]
    return UNREAD if len(text) > 1 and text.isalpha() else re.sub(r"(\.0)+$", "", text)  # "IIII" is no numeral


def _between(low: str, high: str) -> list[str]:
    """The labels strictly between the ends of a range ("2 to 5": 3 and 4; "A through D": B and C)."""
    if low.isdigit() and high.isdigit():
        return [str(number) for number in range(int(low) + 1, int(high))]  # labels have two digits at most
    if len(low) == len(high) == 1 and low.isalpha() and high.isalpha() and low < high:
        return [chr(code) for code in range(ord(low) + 1, ord(high))]
    return []


def _singular(word: str) -> str:
    """The word without a plural's "s" ("Cups I and II" labels the "Cup"): a name's head in the plural names
    several of one kind."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def other_label(question: str, sentence: str) -> bool:
    """Whether `sentence` gives a name the question labels only other labels ("Series B" for the "Series D")."""
    asked = labelled_names(question)
    if not asked:
        return False
    held = labelled_names(sentence)
    return any(head in held and UNREAD not in held[head] and not labels & held[head] for head, labels in asked.items())
