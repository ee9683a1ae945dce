"""The lexical analyzer ingestion and ranking share: words, stop words, Snowball stems, term counts (sentences are
the language analysis's: `components.text.language.sentence_spans`).

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
analysis.counts, analysis.length
```
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import runpy
import threading
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cachetools
import snowballstemmer

from components.text.language import analysis_pipeline_name, language_pipeline

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# `_WORD` on lower-cased ASCII text, where it matches exactly these characters: the same words, found about a third
# faster than through the Unicode classes (most chunk and question text is ASCII).
_ASCII_WORD = re.compile(r"[a-z0-9]+")


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


# Raise when the analysis changes in a way `text_analysis` cannot see (how words are cut, how a stem is made).
ANALYSIS_VERSION = 1


def text_analysis() -> str:
    """The name of the analysis that counts terms in this process, recorded beside a keyword index when it is made:
    the spaCy pipeline whose lemma tables join irregular forms (name and version), and a digest of the rest (the word
    pattern, the stop words, the stemmer and `ANALYSIS_VERSION`). Term counts made by another analysis do not match
    this one's question terms. Reads package metadata only: no spaCy pipeline is loaded (or chosen) for it."""
    return _text_analysis(analysis_pipeline_name())


@lru_cache(maxsize=4)
def _text_analysis(pipeline: str) -> str:
    name, version = _pipeline_identity(pipeline)
    parts = {
        "version": ANALYSIS_VERSION,
        "word": _WORD.pattern,
        "stop_words": sorted(STOP_WORDS),
        "stemmer": f"snowball english {_package_version('snowballstemmer')}",
        "lemma_tables": f"{name} {version}",
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:12]
    return f"{name} {version} / {digest}"


def _pipeline_identity(pipeline: str) -> tuple[str, str]:
    """(name, version) of the spaCy pipeline `pipeline` names: an installed package's own, or, for a pipeline
    folder on disk, what its `meta.json` says (language and name, as its package is named), so the same pipeline
    read from another folder (another machine) is the same analysis. Its folder name and "unknown" otherwise."""
    version = _package_version(pipeline)
    folder = Path(pipeline).expanduser()
    if version == "unknown" and folder.is_dir():  # a package comes first, as when the pipeline is loaded
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            return f"{meta['lang']}_{meta['name']}", str(meta["version"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return folder.name, version


def _package_version(name: str) -> str:
    """The installed version of the package `name` (a module or distribution name), or "unknown"."""
    for candidate in (name, name.replace("_", "-")):
        try:
            return importlib.metadata.version(candidate)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
    return "unknown"


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The term of a lower-case word: its lemma where the word is an irregular form (`irregular_forms`), then the
    Snowball (Porter 2) English stem; cached."""
    return _stemmer().stemWord(irregular_forms().get(word, word))


def words(text: str) -> list[str]:
    """The lower-cased word tokens of `text` (letters and digits; punctuation and underscores split words)."""
    lowered = (text or "").lower()
    return (_ASCII_WORD if lowered.isascii() else _WORD).findall(lowered)


def content_words(text: str) -> list[str]:
    """The lower-cased words of `text` in order without stop words, unstemmed (keyword indexes that match words as
    written, names, lexical overlap)."""
    return [word for word in words(text) if word not in STOP_WORDS]


def terms(text: str) -> list[str]:
    """The stemmed content terms of `text` in order, stop words dropped, duplicates kept."""
    return [stem(word) for word in words(text) if word not in STOP_WORDS]  # one pass: the ranker's hottest call


def term_counts(text: str) -> dict[str, int]:
    """How often each content term occurs in `text`."""
    return dict(Counter(terms(text)))


# The metadata key of a chunk's sentence terms (`sentence_terms_record`), written at ingestion beside its sentence
# spans so that ranking reads them instead of analysing every retrieved chunk again.
SENTENCE_TERMS_KEY = "sentence_terms"
# Terms are runs of letters and digits, so neither separator can occur inside one.
SENTENCE_TERMS_SEPARATOR = "|"


def sentence_terms_record(text: str, spans: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str | None:
    """The terms of each of `text`'s sentences (`spans`, as stored with the chunk) and of the rest of it, as one short
    string: each sentence's `terms` in order, space-separated, the sentences separated by "|", then the terms of
    the text outside them (usually none). The counts they add up to are the whole text's (`term_counts(text)`), and
    each sentence's are `terms(text[start:end])`, so a reader gets what analysing the text would give. None without
    sentences, and when the sentences' terms are not among the whole text's (a span that cuts a word in two)."""
    if not spans:
        return None
    rest = term_counts(text)
    pieces = []
    for start, end in spans:
        found = terms(text[start:end])
        for term in found:
            left = rest.get(term, 0) - 1
            if left < 0:
                return None
            rest[term] = left
        pieces.append(" ".join(found))
    pieces.append(" ".join(term for term, count in rest.items() for _ in range(count)))
    return SENTENCE_TERMS_SEPARATOR.join(pieces)


def sentence_terms_pieces(record: object, sentences: int) -> list[str] | None:
    """The pieces of a `sentence_terms_record` of `sentences` sentences: each sentence's terms, then the rest's; None
    when `record` is not a record of that many sentences."""
    if not isinstance(record, str) or record.count(SENTENCE_TERMS_SEPARATOR) != sentences:
        return None
    return record.split(SENTENCE_TERMS_SEPARATOR)


def sentence_terms_counts(record: object, sentences: int) -> dict[str, int] | None:
    """The whole text's term counts from a `sentence_terms_record` of `sentences` sentences; None when `record` is not
    one."""
    pieces = sentence_terms_pieces(record, sentences)
    if pieces is None:
        return None
    return dict(Counter(" ".join(pieces).split()))


@dataclass(frozen=True)
class TextAnalysis:
    """A text's terms as a whole (its sentences are the language analysis's: `language.chunk_sentence_spans`)."""

    text: str
    counts: dict[str, int]  # term -> occurrences in the whole text
    length: int  # content terms in the text (the BM25 document length)


# The analyses of recent texts (chunks come back for many questions, and every stage after the ranker reads the ranked
# ones): oldest out first beyond the limit.
_ANALYSES: cachetools.LRUCache[str, TextAnalysis] = cachetools.LRUCache(maxsize=8192)
_ANALYSES_LOCK = threading.Lock()


def analyze(text: str) -> TextAnalysis:
    """Terms and term counts of `text`; cached per text."""
    with _ANALYSES_LOCK:
        found = _ANALYSES.get(text)
    if found is None:
        found = remember_analysis(text, dict(Counter(terms(text))))
    return found


def remember_analysis(text: str, counts: dict[str, int]) -> TextAnalysis:
    """Keep `counts`, the term counts of `text` as `analyze` makes them (made by a reader that analysed the text in
    pieces, e.g. the ranker from its sentences), as the text's analysis; the analysis kept is returned."""
    analysis = TextAnalysis(text=text, counts=counts, length=sum(counts.values()))
    with _ANALYSES_LOCK:
        _ANALYSES[text] = analysis
    return analysis
