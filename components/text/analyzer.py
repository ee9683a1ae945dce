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

import ast
import importlib.util
import re
import runpy
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import snowballstemmer

from components.text.language import ABBREVIATIONS, append_stripped, language_pipeline

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _spacy_english(module: str) -> Path:
    """The path of a data module of spaCy's English language data (read as data: importing spaCy costs processes
    that never parse, such as listing documents, a second)."""
    package = importlib.util.find_spec("spacy")
    if package is None or package.origin is None:
        raise ImportError("spaCy is not installed; it is a dependency of the product")
    return Path(package.origin).parent / "lang" / "en" / f"{module}.py"


def _spacy_number_words() -> frozenset[str]:
    """The number and ordinal words spaCy's English `like_num` knows ("nine", "hundred", "first")."""
    tree = ast.parse(_spacy_english("lex_attrs").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        names = {getattr(target, "id", "") for target in node.targets} if isinstance(node, ast.Assign) else set()
        if names & {"_num_words", "_ordinal_words"}:
            found.update(ast.literal_eval(node.value))
    return frozenset(found)


SPACY_STOP_WORDS: frozenset[str] = frozenset(runpy.run_path(str(_spacy_english("stop_words")))["STOP_WORDS"])

# The product's one stop-word list: spaCy's English stop words (function words, question words, pronouns, common
# verbs and adverbs) without its number words ("nine", "first": the values a question asks for), plus the pieces
# `words` cuts from its contractions ("'s" -> "s", "n't" -> "n", "t"), since apostrophes split words here. Every
# analysis that drops stop words (terms, keyword indexes, Milvus's analyzer, entity lookups, the evaluation's
# lexical support) reads this one.
STOP_WORDS: frozenset[str] = (SPACY_STOP_WORDS - _spacy_number_words()) | frozenset(
    piece for word in SPACY_STOP_WORDS if not word.isalpha() for piece in _WORD.findall(word.lower())
)
# Request words a question opens with besides the stop words ("Tell me about ...", "Compare ..."): what
# `components.text.phrases` strips from the front of a capitalised phrase.
REQUEST_WORDS: frozenset[str] = frozenset(
    "tell show give list find explain summarise summarize compare describe please remind".split()
)

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


def content_words(text: str) -> list[str]:
    """The lower-cased words of `text` in order without stop words, unstemmed (keyword indexes that match words as
    written, names, lexical overlap)."""
    return [word for word in words(text) if word not in STOP_WORDS]


def terms(text: str) -> list[str]:
    """The stemmed content terms of `text` in order, stop words dropped, duplicates kept."""
    return [stem(word) for word in content_words(text)]


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
