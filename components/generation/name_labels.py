"""Names told apart by a label after a capitalised word: "Series D", "Korvan 11", "Phase II", "Tessel 3.0".

A question about "the Series D" is not answered by a sentence about "the Series B": the two share every word the
question's terms keep (a single letter may even be a stop word), so a sentence that gives the name another label,
and never the question's, speaks of another thing. The label is a capital letter, a Roman numeral or a short number
(a version); labels joined by "and", "or" or commas share the word before them ("Korvan 11 and 12"), a range
("Phases 2 to 4", "Series A through C") holds every label between its ends, and a plural word is the singular's
("Korvans 11 and 12"). A Roman numeral is its number ("Korvan II" is "Korvan 2"), and a label ending a sentence
("... and the Series D.") is a label. A month before a number is a date ("March 15"), not a label, and a function
word heads no name.

Usage:
```python
other_label("Which firm led the Series D?", "It raised a Series B led by Harrow Partners.")  # True
```
"""

from __future__ import annotations

import calendar
import re

from components.text.analyzer import STOP_WORDS

_LABEL = r"(?:[A-Z]|[IVX]{2,5}|\d{1,2}(?:\.\d+)?)"
_END = r"(?!\w|\.\d)"  # a word or a version's further part ("3.0.1") goes on; a sentence's full stop ends it
_NAMED = re.compile(
    rf"\b(?P<head>[A-Z][A-Za-z]+) (?P<labels>{_LABEL}(?:(?:,\s*|,?\s+(?:and|or|to|through)\s+){_LABEL})*){_END}"
)
_JOINED = re.compile(rf"(?P<range>\b(?:to|through)\s+)?(?<![\w.])(?P<label>{_LABEL}){_END}")
# The Roman numerals of I, V and X in their standard form (the other letters stay letters: "Series C", "Series D").
_ROMAN = {
    "X" * tens + ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")[ones]: str(10 * tens + ones)
    for tens in range(4)
    for ones in range(10)
    if tens or ones
}
_MONTHS = frozenset(name.lower() for name in (*calendar.month_name, *calendar.month_abbr) if name)


def labelled_names(text: str) -> dict[str, frozenset[str]]:
    """The labels each capitalised word carries in `text` ("Series D and E" -> {"series": {"D", "E"}})."""
    found: dict[str, set[str]] = {}
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
    return {head: frozenset(labels) for head, labels in found.items()}


def _label(text: str) -> str:
    """The label as compared: a version without trailing zero parts ("3.0" is the "3": it names no other version),
    a Roman numeral as its number ("II" is "2")."""
    return _ROMAN.get(text) or re.sub(r"(\.0)+$", "", text)


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
    return any(head in held and not labels & held[head] for head, labels in asked.items())
