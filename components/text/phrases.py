"""`capitalised_phrases`: the proper-noun-looking phrases of a question, for source selection and memory recall."""

from __future__ import annotations

import re

from components.text.analyzer import REQUEST_WORDS, STOP_WORDS

_PHRASE = re.compile(r"\b([A-Z][\w&.-]*(?:\s+(?:of|de|la|von|van|&)?\s*[A-Z][\w&.-]*)*)")
_STOP = STOP_WORDS | REQUEST_WORDS


def capitalised_phrases(text: str) -> list[str]:
    """Proper-noun-looking phrases in `text` (Acme Corp, Angela Merkel, GPT-4), question words excluded."""
    found: dict[str, str] = {}
    for match in _PHRASE.finditer(text or ""):
        words = match.group(1).split()
        while words and words[0].lower() in _STOP:
            words = words[1:]
        phrase = " ".join(words).strip(" .&-")
        if len(phrase) < 2 or phrase.lower() in _STOP:
            continue
        found.setdefault(phrase.lower(), phrase)
    return list(found.values())
