"""Names told apart by a label after a capitalised word: "Series D", "Korvan 11", "Phase II", "Tessel 3.0".

A question about "the Series D" is not answered by a sentence about "the Series B": the two share every word the
question's terms keep (a single letter may even be a stop word), so a sentence that gives the name another label,
and never the question's, speaks of another thing. The label is a capital letter, a Roman numeral or a short number
(a version); labels joined by "and", "or", "to" or commas share the word before them ("Korvan 11 and 12"), and a
plural word is the singular's ("Korvans 11 and 12"). A month before a number is a date ("March 15"), not a label,
and a function word heads no name.

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
_NAMED = re.compile(
    rf"\b(?P<head>[A-Z][A-Za-z]+) (?P<labels>{_LABEL}(?:(?:,\s*|,?\s+(?:and|or|to|through)\s+){_LABEL})*)(?![\w.])"
)
_JOINED = re.compile(rf"(?<![\w.]){_LABEL}(?![\w.])")
_MONTHS = frozenset(name.lower() for name in (*calendar.month_name, *calendar.month_abbr) if name)


def labelled_names(text: str) -> dict[str, frozenset[str]]:
    """The labels each capitalised word carries in `text` ("Series D and E" -> {"series": {"D", "E"}})."""
    found: dict[str, set[str]] = {}
    for match in _NAMED.finditer(text or ""):
        head = _singular(match["head"].lower())
        if head in _MONTHS or head in STOP_WORDS:
            continue
        # "3.0" is the "3": a version's trailing zero parts name no other version.
        labels = _JOINED.findall(match["labels"])
        found.setdefault(head, set()).update(re.sub(r"(\.0)+$", "", label) for label in labels)
    return {head: frozenset(labels) for head, labels in found.items()}


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
