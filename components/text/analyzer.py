"""The lexical analyzer ingestion and ranking share: words, stop words, Snowball stems, term counts, sentences.

One analysis for both sides matters: the term counts a store keeps for its chunks (and the document frequencies
built from them) are only comparable with a question's terms when both went through the same steps. Stemming is
the slow step, so `snowballstemmer` runs PyStemmer's C build of the same Snowball algorithm (about 20x faster than
its pure-Python one, identical stems) when it is installed, stems are cached per word, and whole analyses of chunk
texts are cached too, since the same chunks come back for many questions.

Usage:
```python
from components.text.analyzer import analyze, terms

terms("Which teams played in the Super Bowl?")  # ['team', 'play', 'super', 'bowl']
analysis = analyze("The Broncos won. Denver's defense played well.")
analysis.counts, analysis.sentence_spans, analysis.sentence_terms
```
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache

import snowballstemmer

from components.text.language import ABBREVIATIONS, append_stripped, language_pipeline

# Function words that carry no topic, plus question words (a question's "when" or "which" is never evidence).
# fmt: off
STOP_WORDS: frozenset[str] = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing don down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such t than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom whose why will with would you your yours yourself yourselves s shall may might must
""".split())
# fmt: on

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A sentence ends at . ! ? (and closing quotes/brackets) before whitespace and a capital, digit or opening quote.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9\u00c0-\u024f])")
# Blank lines end a sentence, and so does a line break before a list item or a heading.
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=[ \t]*(?:[-*\u2022#]|\d+\.)\s)")
_LAST_WORD = re.compile(r"([\w.]+)$")

_STEMMERS = threading.local()  # Snowball stemmers (Python or PyStemmer) are not thread-safe: one per thread


def _stemmer() -> snowballstemmer.stemmer:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=1)
def irregular_forms() -> dict[str, str]:
    """Irregular inflections and their lemmas ("wrote", "written" -> "write"; "children" -> "child"), read from the
    exception tables of the spaCy pipeline's lemmatizer: suffix stripping cannot join them, the tables can, without
    running the model. Empty when the pipeline has no lemmatizer tables."""
    try:
        table = language_pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_exc")
    except Exception:  # noqa: BLE001 - another pipeline without these tables: stems alone
        return {}
    forms: dict[str, str] = {}
    for part_of_speech in ("verb", "noun", "adj", "adv"):
        for form, lemmas in (table.get(part_of_speech) or {}).items():
            if lemmas and lemmas[0] != form and form.isalpha():
                forms.setdefault(form, lemmas[0])
    return forms


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The term of a lower-case word: its lemma where the word is an irregular form (`irregular_forms`), then the
    Snowball (Porter 2) English stem; cached."""
    return _stemmer().stemWord(irregular_forms().get(word, word))


def words(text: str) -> list[str]:
    """The lower-cased word tokens of `text` (letters and digits; punctuation and underscores split words)."""
    return _WORD.findall((text or "").lower())


def terms(text: str) -> list[str]:
    """The stemmed content terms of `text` in order, stop words dropped, duplicates kept."""
    return [stem(word) for word in words(text) if word not in STOP_WORDS]


def term_counts(text: str) -> dict[str, int]:
    """How often each content term occurs in `text`."""
    return dict(Counter(terms(text)))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans `(start, end)` of the sentences of `text`, stripped of surrounding whitespace.

    Blank lines always end a sentence; abbreviations ("Dr.", "e.g.") and single initials ("J. R. R.") do not.
    """
    spans: list[tuple[int, int]] = []
    text = text or ""
    block_start = 0
    blocks = [(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)] + [(len(text), len(text))]
    for gap_start, gap_end in blocks:
        start = block_start
        for match in _SENTENCE_END.finditer(text, block_start, gap_start):
            # Only the last whitespace-separated token is searched: a regex over the whole sentence is quadratic.
            tokens = text[start : match.start()].rsplit(None, 1)
            last = _LAST_WORD.search(tokens[-1]) if tokens else None
            word = last.group(1).lower() if last else ""
            if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
            append_stripped(text, start, match.end(), spans)
            start = match.end()
        append_stripped(text, start, gap_start, spans)
        block_start = gap_end
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of `text` (see `sentence_spans`), each with its whitespace runs made single spaces."""
    return [" ".join(text[start:end].split()) for start, end in sentence_spans(text)]


@dataclass(frozen=True)
class TextAnalysis:
    """A text's terms as a whole and, read on demand, per sentence (a ranker with stored sentences never needs them)."""

    text: str
    counts: dict[str, int]  # term -> occurrences in the whole text
    length: int  # content terms in the text (the BM25 document length)

    @cached_property
    def sentence_spans(self) -> tuple[tuple[int, int], ...]:
        return tuple(sentence_spans(self.text))

    @cached_property
    def sentence_terms(self) -> tuple[frozenset[str], ...]:
        """The distinct terms of each sentence, aligned with `sentence_spans`."""
        return tuple(frozenset(terms(self.text[start:end])) for start, end in self.sentence_spans)


@lru_cache(maxsize=8192)
def analyze(text: str) -> TextAnalysis:
    """Terms, term counts, sentence spans and per-sentence terms of `text`; cached per text."""
    # Sentences never cut a word, so the whole text's terms are the sentences' terms, in the same order.
    counts = Counter(terms(text))
    return TextAnalysis(text=text, counts=dict(counts), length=sum(counts.values()))
