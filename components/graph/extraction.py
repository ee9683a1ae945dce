"""Entity and dated-fact extraction at ingestion: the extractor interface and the offline spaCy extractor.

`LanguageExtractor` reads the product's one language analysis (`components.text.language`: spaCy's English
pipeline, one Doc per line of the document, shared with the splitter's sentence spans):

- entities are the recogniser's named entities, with kinds from `ENTITY_KINDS_BY_LABEL`, plus runs of proper
  nouns it left out when they take part in a predicate (their kind then comes from the other mentions of the same
  name, or from the noun the text calls them: "Qdrant, a vector search engine" is a product);
- a fact is a sentence with a predicate (a verb) in which an entity takes part as subject, object, or the head of
  a prepositional argument (or their possessor, apposition or conjunct), read from the dependency parse;
- pronouns ("he", "it", "its") and definite descriptions ("the company", "the planemaker", "the engine") resolve
  to the entity of the document they refer to: by the type noun the text gave the entity, else by its kind, the
  most recently named first; as a subject, one continues the previous sentence's subject when that fits;
- within a document, a surname or first name alone, an acronym in parentheses and an acronym of a longer name are
  that name's aliases, and so is a long name with its leading words as their acronym ("US Air Force") and the last
  word of a name the recogniser left unlabelled, written alone and unlabelled too ("Berov" of a results line's
  "Nikolai Berov"); across documents the graph store merges by normalised name and these aliases;
- code identifiers and setting names (`QDRANT_URL`, `snake_case`, `CamelCase.method`, anything in backticks or a
  code block) are never entities.

Dates come from `components.graph.dates` (spaCy's DATE entities read by dateparser against the document's date).
Haystack's `NamedEntityExtractor` gives entity spans only; the extractor needs the sentences, the parse and the
lemmas of the same Doc, so it reads spaCy directly.

The readings the extractor builds on stand in modules of their own: the document's lines, headings and sections
(`components.graph.layout`), the forms of a name (`components.graph.name_forms`), how a mention takes part in its
clause and whether the clause tells an event (`components.graph.clause_reading`), and which dates date a
participant's event (`components.graph.event_dates`).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Self

import cachetools
import numpy as np
from haystack import logging

from components.embedding.model import get_embedding_model
from components.graph.clause_reading import (
    SAYING,
    evidence_role,
    habitual,
    is_core,
    is_event_noun,
    is_expletive,
    is_premodifier,
    is_state,
    is_subject,
    modifies_other_thing,
    of_a_thing,
    quoted_positions,
    role_of,
    speaks,
    subject_itself,
    supposed,
    tells_past,
)
from components.graph.dates import DateMention, FuzzyDate, date_clause_verb, sentence_validity, validity
from components.graph.event_confidence import (
    EventConfidenceModel,
    complete_features,
    default_event_model,
    event_features,
    fact_confidence,
)
from components.graph.event_dates import (
    conjoined_dates,
    mention_span,
    participant_dates,
    since_event,
)
from components.graph.kinds import (
    SPEECH_VERBS,
    TITLE_WORDS,
    KindEvidence,
    KindModel,
    default_kind_model,
    fullest_name,
)
from components.graph.layout import (
    Sentence,
    capitalised_uses,
    first_word,
    headline_cut,
    is_heading,
    line_key,
    looks_like_code,
    opening_description_cut,
    opening_noun_cut,
    opens_section,
    prose_capitalised,
    prose_common_nouns,
    read_document,
    sentence_sections,
    title_case,
)
from components.graph.model import DocumentGraph, EntityMention, Fact, normalise_name
from components.graph.name_forms import (
    CLOSING_QUOTES,
    GENERATIONAL,
    INITIAL,
    MODEL,
    NAME_AND_ACRONYM,
    NOT_INITIALS,
    NOT_MODELS,
    OFFICE_OPENERS,
    OPENING_QUOTES,
    a_measure,
    acronyms_of,
    after_place_preposition,
    common_noun,
    fragment,
    kind_of_noun,
    model_names,
    named_of_another_kind,
    result_after,
    sequence_label,
    shortened,
    singular_name,
    split_name,
    split_parenthesis,
    surnames,
    title_word,
    variant_after,
    without_middle,
)
from components.resilience.errors import first_line
from components.serialization import init_parameters_to_dict
from components.settings import default_setting
from components.text.language import entity_kind
from components.text.pronouns import PERSON_PRONOUNS, PLURAL_PRONOUNS, THING_PRONOUNS

logger = logging.getLogger(__name__)

# Bump when the extractor's output changes: documents stamped with an older version are re-extracted.
EXTRACTOR_VERSION = "spacy-84"
# The suffix of the stamp of a graph whose kinds were read without the embeddings (the model failed): not current.
WITHOUT_EMBEDDINGS = "+without-embeddings"
# Name vectors kept across documents (names repeat across a corpus): 4,096 names of 384 floats are 6 MB.
NAME_VECTORS_KEPT = 4096


class GraphExtractor(ABC):
    """Turns one document and its chunks into entities and dated facts; never downloads anything."""

    name: str = "extractor"
    version: str = "1"

    @abstractmethod
    def extract(
        self, document: Any, chunks: list[Any], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> DocumentGraph:
        """The graph of `document` (a `DocumentRecord`) whose `chunks` (`ChunkRecord`s) are already split.

        `known_names(keys)` answers which of some normalised names the graph already holds (the corpus's own
        gazetteer).
        """

    @property
    def stamp(self) -> str:
        """The version stamp stored with each document's graph (re-extraction happens when it changes)."""
        return f"{self.name}/{self.version}"

    def current_stamps(self) -> frozenset[str]:
        """The stamps of graphs that extracting again now would not improve: its own `stamp`, and those of the
        lesser graphs it would make again as things stand (see `LanguageExtractor`)."""
        return frozenset({self.stamp})

    def to_dict(self) -> dict[str, Any]:
        """`{"type": name}` and the init parameters (kept as the attributes of the same names)."""
        return {"type": self.name, **init_parameters_to_dict(self)["init_parameters"]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**{key: value for key, value in data.items() if key != "type"})


# --- what a name is ---------------------------------------------------------------------------------------------

_THINGS = ("organization", "product", "other", "event", "work")  # the kinds "it" refers to
# A decade ("the 1980s", "the '90s") or a century ("the 19th century", "the nineteenth century").
_ERA = re.compile(r"\b(?:1\d|20)\d0s\b|'\d0s\b|\bcentury\b|\bcenturies\b", re.IGNORECASE)
# A tagger's reading of a name's word that the parse contradicts when it hangs the word on a proper noun as a
# compound: an adverb, an interjection or an unknown word (an adjective or a common noun there is a description:
# "Rival Castlegate Finance", "Carmaker Tessaly Motors").
_MISREAD_NAME_WORDS = {"ADV", "INTJ", "X"}


def _context_word(token: Any) -> bool:
    """A word that may be a kind-model context feature: a common noun, verb or adjective written in lower case
    (never a proper noun, nor a capitalised word the tagger took for a common one)."""
    return token.pos_ in ("NOUN", "VERB", "ADJ") and token.is_alpha and token.is_lower


def _beside_a_capitalised_word(sentence: Any, mention: Any) -> bool:
    """True when the word right before or right after a mention, inside its sentence, is written with a capital
    ("Trust" after "Valley", "zPad" before "Nimbus"): the mention is likely a piece of a longer name. The word
    opening the sentence counts only when the tagger reads it as a proper noun (not "The" of "The Lumo")."""
    doc = mention.root.doc
    first = first_word(sentence)
    beside = [i for i in (mention.start - 1, mention.end) if sentence.start <= i < sentence.end]
    return any(
        doc[i].is_alpha and any(c.isupper() for c in doc[i].text) and (i != first or doc[i].pos_ == "PROPN")
        for i in beside
    )


def _heads_an_of_phrase(sentence: Any, mention: Any) -> bool:
    """True when a one-word mention is followed by a lower-case "of" and a capitalised word ("Professor of History",
    "Elector of Varnia", "the Functioning of the Union"): the head word of a description or of a longer name whose
    of-phrase holds the name."""
    doc = mention.root.doc
    if mention.end - mention.start != 1 or mention.end + 1 >= sentence.end or doc[mention.end].text != "of":
        return False
    after = doc[mention.end + 1]
    if after.lower_ == "the" and mention.end + 2 < sentence.end:
        after = doc[mention.end + 2]
    return after.is_title


# Words naming one trade: a definite one of them refers back to the last trade the text told of.
_TRADE_WORDS = set("deal purchase sale order contract agreement acquisition buy sell transaction".split())
# How a noun of an action is made from its verb ("the landing" of "landed", "the delivery" of "delivered").
_NOUN_ENDINGS = (("ing", ""), ("ery", "er"), ("ment", ""), ("al", "e"), ("ation", "e"), ("ion", "e"))


def _names_its_instance(token: Any, descriptions: set[str]) -> bool:
    """True when a thing's name premodifies a singular noun that the document also uses alone, after "the", to refer
    ("the first NV900 prototype" ... "the prototype"; "the Zimbo store" ... "the store"): the noun names the thing
    itself, which the name classifies, not something of it ("the NV900 return rate", "NV900 users"), so the name
    takes part in the clause's event as the noun does. A text refers back to a thing by the noun of its class; it
    does not so refer to the thing's attributes or the people around it by a noun it used once."""
    head = token
    while head.dep_ in ("compound", "nmod", "amod") and head.head.i > head.i:
        head = head.head
    return head.i != token.i and head.tag_ == "NN" and head.lemma_.lower() in descriptions


def _descriptions(sentences: list[Sentence]) -> set[str]:
    """The nouns the document uses as definite descriptions of their own ("the store", "the new prototype"): a
    singular common noun after "the", no name before it in its phrase."""
    found = set()
    for sentence in sentences:
        for token in sentence.span:
            if token.tag_ != "NN" or not any(c.lower_ == "the" and c.dep_ == "det" for c in token.children):
                continue
            if not any(word.pos_ == "PROPN" and word.i < token.i for word in token.subtree):
                found.add(token.lemma_.lower())
    return found


_DEMONSTRATIVES = {"the", "this", "that", "these", "those"}


def _event_references(
    sentence: Any, row: list[_Mention], events: list[tuple[set[str], list[str]]]
) -> list[tuple[str, Any]]:
    """The entities taking part in the event a definite event noun refers back to, when it is the subject of its
    sentence (or a subject's possessor) outside a quotation ("the deal was approved", "those cuts will be made"),
    each with the noun: the participants of the last earlier sentence that named the same event (its noun or its
    verb: "purchase"). A noun naming its own participants ("the Talmont deal") refers to nothing before it."""
    covered = {i for m in row for i in range(m.start, m.end)}
    quoted = quoted_positions(sentence)
    found: list[tuple[str, Any]] = []
    for token in sentence:
        if token.pos_ != "NOUN" or token.i in covered or not is_event_noun(token):
            continue
        if not any(child.dep_ == "det" and child.lower_ in _DEMONSTRATIVES for child in token.children):
            continue
        role = (role_of(token) or "").removeprefix("of>")  # "half of those cuts": the part's role
        if role.split(">")[0] not in ("nsubj", "nsubjpass", "poss") or token.i in quoted:
            continue
        if any(t.i in covered for t in token.subtree):
            continue
        lemma = token.lemma_.lower()
        verbs = {lemma, *(lemma[: -len(end)] + add for end, add in _NOUN_ENDINGS if lemma.endswith(end))}
        keys = next((keys for lemmas, keys in reversed(events) if verbs & lemmas), [])
        if not keys and lemma in _TRADE_WORDS:  # "the deal" after "agreed to purchase": the same trade
            keys = next((keys for lemmas, keys in reversed(events) if lemmas & _TRADE_WORDS), [])
        found.extend((key, token) for key in keys if key not in (k for k, _ in found))
    return found


def _parenthesised(sentence: Any) -> set[int]:
    """The token positions of a sentence inside parentheses."""
    inside: set[int] = set()
    depth = 0
    for token in sentence:
        depth += token.text == "("
        if depth:
            inside.add(token.i)
        depth -= token.text == ")" and depth > 0
    return inside


# --- the document's entities ----------------------------------------------------------------------------------


@dataclass
class _DocEntity:
    key: str
    names: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    type_nouns: set[str] = field(default_factory=set)
    aliases: set[str] = field(default_factory=set)
    evidence: KindEvidence = field(default_factory=KindEvidence)
    reasons: dict[str, str] = field(default_factory=dict)  # alias key -> why it names this entity

    def best_name(self) -> str:
        # The fullest name ("Steve Jobs" over "Jobs"), then as running text writes it ("Tilsby" over a headline's
        # "TILSBY"), then the most used, then the shortest spelling.
        return max(
            self.names,
            key=lambda name: (len(normalise_name(name).split()), not name.isupper(), self.names[name], -len(name)),
        )

    def kind(self) -> str:
        if self.kinds:
            return self.kinds.most_common(1)[0][0]
        return next(filter(None, map(kind_of_noun, sorted(self.type_nouns))), "other")


@dataclass
class _Mention:
    key: str
    root: Any  # the head token of the name
    start: int
    end: int
    maker: str | None = None  # the organisation named in a product's name ("Talmont" of "Talmont 909")


OFFICE_OPENERS |= {"managing", "prime", "senior", "junior"}


def _stored_sentence_vectors(chunks: list[Any]) -> list[tuple[int, int, Any]]:
    """The in-context sentence vectors the chunks hold, as (start, end, vector) in the document's text (a chunk's
    `char_start` in its metadata, plus the sentence's span in the chunk)."""
    stored = []
    for chunk in chunks:
        start = (getattr(chunk, "metadata", None) or {}).get("char_start")
        spans = getattr(chunk, "sentence_spans", None) or []
        vectors = getattr(chunk, "sentence_embeddings", None)
        if start is None or vectors is None or len(vectors) != len(spans):
            continue
        pairs = zip(spans, vectors, strict=True)
        stored += [(int(start) + int(a), int(start) + int(b), vector) for (a, b), vector in pairs]
    return stored


def _stored_vector(stored: list[tuple[int, int, Any]], sentence: Sentence) -> Any:
    """The stored vector of the sentence span that covers most of `sentence` (at least half of it), else None."""
    start = sentence.offset
    end = start + len(sentence.span.text)
    best, vector = 0, None
    for a, b, found in stored:
        overlap = min(b, end) - max(a, start)
        if overlap > best:
            best, vector = overlap, found
    return vector if best * 2 >= max(1, end - start) else None


class LanguageExtractor(GraphExtractor):
    """Offline entity and dated-fact extraction from spaCy's entities and dependency parse.

    Usage:
    ```python
    graph = LanguageExtractor().extract(document_record, chunk_records)
    [(fact.text, fact.entity_keys, fact.valid_at.iso()) for fact in graph.facts]
    ```
    """

    name = "spacy"
    version = EXTRACTOR_VERSION

    def __init__(
        self,
        min_sentence_words: int = 4,
        resolve_references: bool = True,
        kind_model_path: str | None = None,
        event_model_path: str | None = None,
        embedding_model: str | None = default_setting("embedding_model"),
    ) -> None:
        """`kind_model_path`: a fitted entity-kind model (JSON, see `components.graph.kinds`); `event_model_path`: a
        fitted event-confidence model (`components.graph.event_confidence`); the shipped ones by default.
        `embedding_model`: the sentence-embedding model (the knowledge base's, shared in the process) whose vectors
        of each entity's name and sentences the kind model reads; None reads none (the kinds are then poorer)."""
        if min_sentence_words < 1:
            raise ValueError("min_sentence_words must be at least 1")
        self.min_sentence_words = min_sentence_words
        self.resolve_references = resolve_references
        self.kind_model_path = kind_model_path
        self.embedding_model = embedding_model
        self._embedder: Any = None
        self._embedder_lock = threading.Lock()
        self._embedding_failure = ""  # why the embedding model could not be loaded (tried once per extractor)
        self._width_told = False  # whether the embeddings' width the kind model cannot read was said (once)
        # By (model, exact name): kept only where a vector does not depend on the batch it was made in (`onnx`).
        self._name_vectors: cachetools.LRUCache[tuple[str, str], Any] = cachetools.LRUCache(NAME_VECTORS_KEPT)
        self._name_vectors_lock = threading.Lock()
        self.event_model_path = event_model_path
        # A given model is read now: one that cannot be read is the caller's error, not an empty graph per document.
        self._kind_model: KindModel | None = KindModel.load(kind_model_path) if kind_model_path else None
        self._event_model: EventConfidenceModel | None = (
            EventConfidenceModel.load(event_model_path) if event_model_path else None
        )

    @property
    def event_model(self) -> EventConfidenceModel | None:
        if self._event_model is None:
            path = self.event_model_path
            self._event_model = EventConfidenceModel.load(path) if path else default_event_model()
        return self._event_model

    @property
    def kind_model(self) -> KindModel:
        """The model kinds are read with: `kind_model_path`'s, else the shipped one."""
        if self._kind_model is None:
            self._kind_model = KindModel.load(self.kind_model_path) if self.kind_model_path else default_kind_model()
        return self._kind_model

    @kind_model.setter
    def kind_model(self, model: KindModel) -> None:
        """Read kinds with `model` (one fitted in memory, as the kinds evaluation does) instead."""
        self._kind_model = model

    def warm_up(self) -> None:
        """Load the embedding model (shared with the rest of the process) before the first document."""
        self._embedding()

    def _embedding(self) -> Any:
        """The shared embedding model, loaded on first use (once, whichever thread asks first); None without one,
        or when it cannot be loaded (said once: the kinds are then read without the embeddings)."""
        if self._embedder is not None or not self.embedding_model:
            return self._embedder
        with self._embedder_lock:
            if self._embedder is None and not self._embedding_failure:
                try:
                    self._embedder = get_embedding_model(self.embedding_model)
                except Exception as exc:  # noqa: BLE001 - a missing or broken model must not cost the graph
                    self._embedding_failure = first_line(exc)
                    logger.warning(
                        "The embedding model {model} cannot be loaded ({reason}); entity kinds are read without "
                        "the embeddings of names and sentences, and those graphs are extracted again by the first "
                        "ingest that can load it.",
                        model=self.embedding_model,
                        reason=self._embedding_failure,
                    )
            return self._embedder

    def _embed_names_and_sentences(
        self,
        entities: dict[str, _DocEntity],
        keys: list[str],
        sentences: list[Sentence],
        mentions: list[list[Any]],
        chunks: list[Any],
    ) -> bool:
        """Set each entity's `name_vector` (its fullest name's embedding), `sentence_vector` (the normalised mean
        of the vectors of the sentences that mention it) and `list_vector` (the normalised mean of the embeddings of
        the names it is listed with, when there are any). A sentence's vector is the in-context one its chunk
        already holds (`ChunkRecord.sentence_embeddings`, made at ingestion by the chunk's own forward pass);
        the names, and any sentence no chunk holds, are embedded in one batch for the document. False when an
        embedding model is set but could not embed them (the kinds are then read without the embeddings)."""
        if not keys or not self.embedding_model:
            return True
        embedder = self._embedding()
        if embedder is None or not self._kinds_read_width(getattr(embedder, "dimension", None)):
            return False
        wanted = set(keys)
        mentioned: dict[str, list[int]] = {key: [] for key in keys}
        for index, row in enumerate(mentions):
            for mention in row:
                if mention.key in wanted and index not in mentioned[mention.key]:
                    mentioned[mention.key].append(index)
        stored = _stored_sentence_vectors(chunks)
        sentence_vectors = {
            index: vector
            for index in {i for found in mentioned.values() for i in found}
            if (vector := _stored_vector(stored, sentences[index])) is not None
        }
        missing = {i: sentences[i].text for found in mentioned.values() for i in found if i not in sentence_vectors}
        names = {key: fullest_name(entities[key].evidence) or entities[key].best_name() for key in keys}
        # The names each entity is listed with ("Dalby, Orsk and Vellmar"), most of them the document's own names.
        listed = {key: entities[key].evidence.listed for key in keys}
        every_name = list(dict.fromkeys([*names.values(), *(name for found in listed.values() for name in found)]))
        # A name embedded for an earlier document is not embedded again, where its vector is the same in any batch
        # (ONNX Runtime's; torch's differs in the last bits with the batch, so there each document embeds its own).
        keep = getattr(embedder, "runtime", "") == "onnx"
        with self._name_vectors_lock:
            known = {
                name: vector
                for name in every_name
                if keep and (vector := self._name_vectors.get((self.embedding_model, name))) is not None
            }
        texts = [text for text in dict.fromkeys([*every_name, *missing.values()]) if text not in known]
        try:
            vectors = {**known, **dict(zip(texts, embedder.embed(texts), strict=True))}
        except Exception as exc:  # noqa: BLE001 - the kinds are then read without the embeddings, the graph is kept
            logger.warning(
                "Entity names could not be embedded; kinds read without them: {reason}", reason=first_line(exc)
            )
            return False
        if keep:
            with self._name_vectors_lock:
                for name in set(every_name) - known.keys():
                    # A copy of the row (a view would keep the document's whole batch), read-only as it is shared.
                    vectors[name] = np.array(vectors[name], dtype=np.float32)
                    vectors[name].setflags(write=False)
                    self._name_vectors[(self.embedding_model, name)] = vectors[name]
        sentence_vectors.update({index: vectors[text] for index, text in missing.items()})
        widths = {int(np.shape(vector)[-1]) for vector in [*vectors.values(), *sentence_vectors.values()]}
        if not all(self._kinds_read_width(width) for width in widths):
            return False
        for key in keys:
            evidence = entities[key].evidence
            evidence.name_vector = vectors[names[key]]
            if mentioned[key]:
                mean = np.mean([sentence_vectors[index] for index in mentioned[key]], axis=0)
                norm = float(np.linalg.norm(mean))
                evidence.sentence_vector = mean / norm if norm > 0 else mean
            if listed[key]:
                mean = np.mean([vectors[name] for name in listed[key]], axis=0)
                norm = float(np.linalg.norm(mean))
                evidence.list_vector = mean / norm if norm > 0 else mean
        return True

    def current_stamps(self) -> frozenset[str]:
        """Its stamp and, while the kinds cannot read the embeddings (the model cannot be loaded, or makes vectors
        of another width), the stamp of a graph read without them: extracting such a graph again would give the
        same, so it is extracted again only once the embeddings can be read (loads the model, as ingestion does)."""
        if not self.embedding_model:
            return frozenset({self.stamp})
        embedder = self._embedding()
        readable = embedder is not None and not self._width_told
        readable = readable and self._kinds_read_width(getattr(embedder, "dimension", None))
        return frozenset({self.stamp} if readable else {self.stamp, f"{self.stamp}{WITHOUT_EMBEDDINGS}"})

    def _kinds_read_width(self, width: int | None) -> bool:
        """Whether the kind model reads embeddings `width` numbers wide (True when either is not known). When not,
        the kinds are read without the embeddings, as when the model cannot be loaded; said once per extractor."""
        widths = self.kind_model.embedding_widths()
        if width is None or not widths or width in widths:
            return True
        with self._embedder_lock:
            told, self._width_told = self._width_told, True
        if not told:
            logger.warning(
                "The embedding model {model} makes embeddings {width} numbers wide but the entity-kind model reads "
                "{read}; entity kinds are read without the embeddings of names and sentences, and those graphs are "
                "extracted again by the first ingest with a model of that width (use the model the kinds were "
                "fitted with, or fit them again with `python -m pipelines.evaluation.entity_kinds fit`).",
                model=self.embedding_model,
                width=width,
                read=" or ".join(str(w) for w in sorted(widths)),
            )
        return False

    # -- public -------------------------------------------------------------------------------------------------

    def extract(
        self, document: Any, chunks: list[Any], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> DocumentGraph:
        document_id, sentences, title, anchor = read_document(document, chunks)
        if anchor is None:
            anchor = self._dateline(sentences)
        sentences = [s for s in sentences if not self._is_dateline(s)]
        entities, mentions = self._entities(sentences, known_names)
        locate = ChunkLocator(chunks)

        facts: list[Fact] = []
        recent: list[str] = []  # entity keys, most recently named last
        focus: list[str] = []  # the previous sentence's subjects
        sections = sentence_sections(sentences, chunks)
        dated, frames = self._dates(sentences, anchor, sections)
        events: list[tuple[set[str], list[str]]] = []  # each earlier sentence's nouns and verbs, and its participants
        named_count = Counter(m.key for row in mentions for m in row)  # how often the document names each entity
        descriptions = _descriptions(sentences)  # the nouns it refers with ("the store")
        for index, sentence in enumerate(sentences):
            row = mentions[index]
            explicit = list(dict.fromkeys(m.key for m in row))
            linked = self._participants(sentence.span, row, entities, recent, focus, descriptions)
            # A headline is a clause cut short (the parser often misreads it): every name it holds takes part.
            headline = index == 0 and " ".join(sentence.text.lower().split()) == " ".join(title.lower().split())
            if headline:
                linked = {**{m.key: ("title", m.root) for m in row}, **linked}
                if len(sentences) > 1 and all(entities[key].kind() == "place" for key in linked):
                    # A headline naming no one ("Biggest ferry in the fleet sets sail") tells the lead's news:
                    # the lead sentence's subject takes part.
                    for mention in mentions[1]:
                        if is_subject(role_of(mention.root)) and entities[mention.key].kind() not in ("place", "group"):
                            linked.setdefault(mention.key, ("title", mention.root))
            for key, token in _event_references(sentence.span, row, events):
                if entities[key].kind() not in ("place", "group"):
                    linked.setdefault(key, ("event", token))
            if linked:
                # The maker named in a product's name ("Talmont 909") takes part in the trade or event a later noun
                # refers back to ("the deal", "the deliveries"), not in the product's own events.
                makers = [m.maker for m in row if m.key in linked and m.maker and m.maker not in linked]
                lemmas = {t.lemma_.lower() for t in sentence.span if t.pos_ in ("NOUN", "VERB")}
                events.append((lemmas, list(dict.fromkeys([*linked, *makers]))))
            # A name only in parentheses is an aside: the names of the sentence itself are the more recent. A resolved
            # reference keeps its entity in focus.
            aside = _parenthesised(sentence.span)
            named = sorted(explicit, key=lambda k: all(m.start in aside for m in row if m.key == k), reverse=True)
            named += [key for key in linked if key not in explicit and key in recent]
            recent = [key for key in recent if key not in named] + named
            focus = [key for key, (role, _) in linked.items() if is_subject(role)]
            valid, invalid, method, dates = dated[index]
            short = len([t for t in sentence.span if not t.is_punct]) < self.min_sentence_words
            predicate = any(t.pos_ in ("VERB", "AUX") for t in sentence.span)
            if not linked or (not headline and (short or not predicate)):
                continue
            # Each entity's event is dated by the dates of its own predicate; entities whose events fall on the same
            # date share one fact of the sentence.
            groups: dict[tuple[Any, ...], list[str]] = {}
            described: dict[tuple[Any, ...], dict[str, dict[str, float]]] = {}  # each event's participants' features
            habits: list[str] = []  # participants in an undated habit or description (see below)
            # In a document whose format marks its headings (ingestion found sections: Markdown, HTML), its title or a
            # section's heading that is a noun phrase (no finite verb, not headed by a verb: "Vellner: a life in
            # music") names its subject and says what it is, in no event of that day. A plain text's first line is
            # often a news headline whose verb the parse misses ("Norvik exercises options"): it still tells one.
            heading = (headline and any(sections)) or (
                bool(sections[index]) and line_key(sections[index]) == line_key(sentence.text)
            )
            finite = any("Fin" in t.morph.get("VerbForm") for t in sentence.span)
            titled = heading and not finite and sentence.span.root.pos_ not in ("VERB", "AUX")
            for key, (role, token) in linked.items():
                if titled:
                    habits.append(key)
                    continue
                # An event noun referring back ("the landing was a milestone") tells of the event, not a state.
                state = role != "event" and is_state(token)
                # A name premodifying a noun is no argument of the clause; a headline's compressed grammar keeps it.
                premodifier = role != "event" and not role.startswith("ref:") and is_premodifier(token)
                if not headline and ((not dates and state) or supposed(token) or premodifier):
                    continue
                event_dates = participant_dates(sentence.span, dates, token)
                own_valid, own_invalid, own_method = (
                    validity(event_dates, anchor) if len(event_dates) < len(dates) else (valid, invalid, method)
                )
                own_valid, own_method = self._in_frame(
                    sentence.span, own_valid, own_method, anchor, frames[index], headline
                )
                # A habit or a description in the simple present that nothing dates is no event of that day.
                if not headline and own_method in ("document", "context") and habitual(token):
                    habits.append(key)
                    continue
                # A subject shared by coordinated verbs takes part in each one's dated event ("Orrell joined Varno in
                # 2006 and moved to Quillon in 2014").
                for each_dates in [event_dates, *conjoined_dates(sentence.span, dates, token)]:
                    when = (own_valid, own_invalid, own_method)
                    if each_dates is not event_dates:
                        when = validity(each_dates, anchor)
                    if key in groups.get(when, []):
                        continue
                    groups.setdefault(when, []).append(key)
                    described.setdefault(when, {})[key] = event_features(
                        sentence.span,
                        token,
                        role,
                        dates,
                        each_dates,
                        when,
                        anchor,
                        0.0,  # the kind's confidence, known once the document is read (see `_confidences`)
                        headline=headline,
                        participants=len(linked),
                        entity_mentions=named_count[key],
                        first_named=key == next(iter(linked)),
                        position=index,
                        sentences=len(sentences),
                    )
            if habits:
                # Its names stay the graph's entities (a product page or a how-to is told in the simple present: the
                # Entities page and entity search must still know them), on an undated fact without event features,
                # so its confidence is 0 and a timeline at the fitted threshold does not draw it.
                groups.setdefault((None, None, "none"), []).extend(habits)
            chunk = locate.find(sentence.offset, sentence.text)
            # Names that take part in no event here (a state, a supposition) still link this passage for the
            # retrieval walk ("X is an American director" is what bridges two passages); with no event at all the
            # sentence is kept as a fact without participants, which no timeline lists.
            taking_part = {key for keys in groups.values() for key in keys}
            mentioned = [key for key in dict.fromkeys([*explicit, *linked]) if key not in taking_part]
            if not groups:
                groups[(valid, invalid, method)] = []
            for number, (when, keys) in enumerate(groups.items()):
                facts.append(
                    Fact.of_sentence(
                        document,
                        index,
                        sentence.text,
                        chunk,
                        keys,
                        [entities[key].best_name() for key in keys],
                        when,
                        title=title,
                        anchor=anchor,
                        mention_keys=mentioned,
                        variant=number,
                    )
                )
                facts[-1].event_features = {key: f for key, f in described.get(when, {}).items() if key in keys}
        used = {key for fact in facts for key in fact.entity_keys}
        embedded = self._embed_names_and_sentences(
            entities, [key for key in entities if key in used], sentences, mentions, chunks
        )
        graph_entities = []
        model = self.kind_model
        for key, entity in entities.items():
            if key not in used:
                continue
            decision = model.decide(entity.evidence)
            aliases = set(entity.aliases) - {key}
            graph_entities.append(
                EntityMention(
                    key=key,
                    name=entity.best_name(),
                    kind=decision.kind,
                    aliases=aliases,
                    confidence=decision.confidence,
                    evidence=decision.evidence,
                    reasons={alias: entity.reasons[alias] for alias in aliases if alias in entity.reasons},
                    kind_evidence=entity.evidence,
                )
            )
        self._confidences(facts, graph_entities)
        # A graph whose kinds could not read the embeddings is stamped as such: the next ingest extracts it again.
        stamp = self.stamp if embedded else f"{self.stamp}{WITHOUT_EMBEDDINGS}"
        return DocumentGraph(document_id=document_id, entities=graph_entities, facts=facts, extractor=stamp)

    def _confidences(self, facts: list[Fact], graph_entities: list[EntityMention]) -> None:
        """Each event fact's confidence: the event-confidence model's probability for its surest participant (with
        that entity's kind and kind confidence); a fact without participants, which no timeline lists, gets 0."""
        model = self.event_model
        if model is None:
            return
        kinds = {mention.key: mention for mention in graph_entities}
        for fact in facts:
            described = [complete_features(f, kinds.get(key)) for key, f in fact.event_features.items()]
            fact.confidence = fact_confidence(model, described)

    # -- steps --------------------------------------------------------------------------------------------------

    @staticmethod
    def _is_dateline(sentence: Sentence) -> bool:
        """A line that only dates the document: a date alone, or after the place it was filed from in capitals
        ("PORT ASHA 1996-09-02", a wire's dateline line)."""
        tokens = [t for t in sentence.span if not (t.is_punct or t.is_space)]
        place = 0
        while place < min(4, len(tokens) - 1) and tokens[place].is_alpha and tokens[place].is_upper:
            place += 1
        dates = tokens[place:]
        return bool(dates) and len(tokens) <= 8 and all(t.ent_type_ in ("DATE", "TIME") or t.like_num for t in dates)

    def _dateline(self, sentences: list[Sentence]) -> dt.date | None:
        for sentence in sentences[:4]:
            if self._is_dateline(sentence):
                valid, _, method, _ = sentence_validity(sentence.span, None)
                if valid is not None and valid.precision == "day" and method == "stated":
                    return valid.value
        return None

    @staticmethod
    def _dates(
        sentences: list[Sentence], anchor: dt.date | None, sections: list[Any] | None = None
    ) -> tuple[list[tuple[FuzzyDate | None, FuzzyDate | None, str, list[DateMention]]], list[FuzzyDate | None]]:
        """Each sentence's `sentence_validity` (steps of time counted from the text's previous date), and the story's
        day where it holds: the first day shortly before the document's date the text names (the document's own day
        only when told in the past: "was delivered today", not "now uses"), on which undated past-tense news happens.

        The story's day holds from the sentence naming it on to the end of its section (news tells its scene, and
        goes back to it after an aside on an earlier time; a heading opens another part of the text: `sections`, each
        sentence's section as ingestion found it, or a Markdown heading in the text), and before it only in a lead
        that states no other past time: a text that first tells of another time ("In December 1989, he ... He began
        writing ...") and names a recent day only later is a history, whose undated sentences tell of the time they
        follow, not of that day: they stay undated. A coming date ("will ship in June") is no other past time."""
        dated = []
        previous: FuzzyDate | None = None
        frame: FuzzyDate | None = None
        named_at = -1  # the sentence naming the story's day
        # The date of each dated event told so far, and the words of its clause, by its verb's lemma.
        happened: dict[str, tuple[FuzzyDate, frozenset[str]]] = {}
        for index, sentence in enumerate(sentences):
            valid, invalid, method, dates = sentence_validity(sentence.span, anchor, previous)
            if not dates:
                dates = since_event(sentence.span, happened)
                if dates:
                    valid, invalid, method = validity(dates, anchor)
            dated.append((valid, invalid, method, dates))
            for mention in dates:
                span = mention_span(sentence.span, mention)
                if span is not None and mention.role != "end":
                    verb = date_clause_verb(span)
                    words = frozenset(token.lemma_.lower() for token in verb.subtree)
                    happened.setdefault(verb.lemma_.lower(), (mention.date, words))
            stated = [m.date for m in dates if not m.relative]
            if stated:
                previous = stated[-1]
            elif method == "relative" and valid is not None:
                previous = valid
            for mention in dates:
                days = (anchor - mention.date.value).days if anchor and mention.date.precision == "day" else -1
                if frame is None and (
                    0 < days <= 31 or (days == 0 and tells_past(date_clause_verb(mention_span(sentence.span, mention))))
                ):
                    frame, named_at = mention.date, index
        frames: list[FuzzyDate | None] = [None] * len(sentences)
        if frame is None or anchor is None:
            return dated, frames
        day = FuzzyDate(frame.value, "day")
        for index, (_, _, _, dates) in enumerate(dated[:named_at]):  # the lead, up to another past time
            if any(not day.agrees_with(m.date) and m.date.value < anchor for m in dates):
                break
            frames[index] = frame
        sections = sections or [None] * len(sentences)
        for index in range(named_at, len(sentences)):  # on to the end of its section
            if index > named_at and (sections[index] != sections[named_at] or opens_section(sentences[index])):
                break
            frames[index] = frame
        return dated, frames

    @staticmethod
    def _in_frame(
        sentence: Any,
        valid: FuzzyDate | None,
        method: str,
        anchor: dt.date | None,
        frame: FuzzyDate | None,
        headline: bool = False,
    ) -> tuple[FuzzyDate | None, str]:
        """Undated past-tense news happens on the day the text just named. A headline tells the news in the present
        tense ("Talmont unveils its new jet"): its undated event happens on that day too. A year or a month the
        sentence states is shown as that year or month ("In 2024 ..." is 2024), never as a day it does not name."""
        if anchor is None:
            return valid, method
        # Tense and modality of the sentence's own predicate (its root and auxiliaries), not of a clause it reports:
        # "Orrell also said that buyers will receive a refund" is a past saying.
        if method == "document":
            says = sentence.root.lemma_ in SAYING and sentence.root.tag_ == "VBZ"  # "Talmont claims that ..."
            # A decade or a century the sentence names ("opened its first shop in the 1980s") is its time, though
            # no day, month or year of it can be read: the sentence is not of the scene's day.
            era = any(ent.label_ == "DATE" and _ERA.search(ent.text) for ent in sentence.ents)
            if frame is not None and not era and (headline or says or tells_past(sentence.root)):
                return frame, "context"
        return valid, method

    def _entities(
        self, sentences: list[Sentence], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> tuple[dict[str, _DocEntity], list[list[_Mention]]]:
        """The document's entities (merged by name, alias and acronym) and each sentence's mentions of them."""
        entities: dict[str, _DocEntity] = {}
        raw: list[list[_Mention]] = []
        # Only a document with prose tells a title-case heading's names from its common words (`headline_cut`).
        prose = sum(not is_heading(s) and not title_case(s) for s in sentences) >= 2
        known = prose_capitalised(sentences) if prose else set()
        nouns = prose_common_nouns(sentences)
        uses = capitalised_uses(sentences)
        for sentence in sentences:
            row: list[_Mention] = []
            taken: set[int] = set()
            headline = prose and title_case(sentence)
            for span, maker, owner in model_names(sentence.span):
                mention = self._mention(span[maker:], entities, "product", singular=True)
                if mention is not None:
                    mention.maker = normalise_name(span[:maker].text) if maker else None
                    # "Nordvik N900" and "Nordvik's N900" are the N900, made by Nordvik: both names are its.
                    full = span.text if maker else f"{owner.text} {span.text}" if owner is not None else ""
                    if full:
                        entities[mention.key].names[full] += 1
                        entities[mention.key].aliases.add(normalise_name(singular_name(full)))
                    if variant_after(span[-1]):  # "909-300XL": written with letters, not a bare number
                        entities[mention.key].names[span.doc[span[-1].i : span[-1].i + 3].text] += 0
                    row.append(mention)
                    taken.update(range(span.start, span.end + 2 if variant_after(span[-1]) else span.end))
            for ent in sentence.span.ents:
                kind = entity_kind(ent.label_)
                if kind is None or taken.intersection(range(ent.start, ent.end)):
                    continue
                parts = [piece for part in split_parenthesis(ent) for piece in split_name(part, ent.label_)]
                if ent.label_ == "PERSON":
                    parts = [opening_noun_cut(part, sentence.span, nouns) for part in parts]
                else:
                    parts = [opening_description_cut(part, sentence.span, uses) for part in parts]
                if headline:
                    parts = [cut for part in parts for cut in headline_cut(part, known)]
                # A name split off after "in" or "at" ("Harlow University in Ostby") is where the first one is.
                row += filter(
                    None,
                    (
                        self._mention(part, entities, "place" if after_place_preposition(part, ent) else kind)
                        for part in parts
                    ),
                )
                taken.update(range(ent.start, ent.end))
            runs = self._proper_noun_runs(sentence.span, taken, nouns)
            runs = [opening_description_cut(run, sentence.span, uses) for run in runs]
            if headline:
                runs = [cut for run in runs for cut in headline_cut(run, known)]
            row += filter(None, (self._mention(span, entities, None) for span in runs))
            row.sort(key=lambda m: m.start)
            raw.append(row)
        self._gazetteer(sentences, raw, entities, known_names)
        for sentence, row in zip(sentences, raw, strict=True):
            self._learn_type_nouns(sentence.span, row, entities)
        self._rejoin_cut_names(raw, entities, known_names)
        for key in self._junk(entities, sentences, raw):
            del entities[key]
        redirect, reasons = self._aliases(entities, sentences, raw)
        described = self._definite_heads(entities, redirect, raw)
        for short, long in described.items():
            # The mentions and the evidence join the name the description refers back to; the common word is
            # taught as no alias (another document's "the Council" is another council) and lends no spelling.
            if short in entities and long in entities:
                source, target = entities.pop(short), entities[long]
                target.kinds.update(source.kinds)
                target.evidence.add(source.evidence)
        redirect.update(described)
        for short, long in redirect.items():
            if short in described or short not in entities or long not in entities:
                continue
            source, target = entities.pop(short), entities[long]
            target.names.update({name: 0 for name in source.names})  # keep spellings, not their weight for naming
            target.kinds.update(source.kinds)
            target.type_nouns |= source.type_nouns
            target.aliases |= source.aliases | {short}
            target.evidence.add(source.evidence)
            target.reasons.update(source.reasons)
            target.reasons.setdefault(short, reasons.get(short, "a shorter name of it in the same document"))
        # A bare number is no entity once it has not joined a longer name ("the 909" of the "Nordvik 909"); a model
        # designation read as one ("the 909-300XL") is written with letters.
        for key in [k for k, e in entities.items() if not any(re.search(r"[^\W\d_]", n) for n in [k, *e.names])]:
            del entities[key]
        for key, entity in entities.items():
            if entity.kind() == "person" and len(key.split()) >= 2:
                for surname in surnames(key):
                    entity.aliases.add(surname)
                    entity.reasons.setdefault(surname, f"the surname of {key}")
            elif entity.kind() in ("organization", "event", "law") and len(key.split()) >= 3:
                acronyms = acronyms_of(key, entity.names)  # "European Aeronautic Defence and Space" -> "eads"
                entity.aliases.update(acronyms)
                entity.aliases.update(shortened(key))
                for alias in {*acronyms, *shortened(key)}:
                    entity.reasons.setdefault(alias, f"the initials of {key}")

        def moved(key: str | None) -> str | None:
            """A mention's key after the merges, None when no entity has it."""
            key = redirect.get(key, key)
            return key if key in entities else None

        rows = [
            [_Mention(moved(m.key), m.root, m.start, m.end, moved(m.maker)) for m in row if moved(m.key)] for row in raw
        ]
        return entities, rows

    @staticmethod
    def _mention(
        span: Any, entities: dict[str, _DocEntity], kind: str | None, singular: bool = False
    ) -> _Mention | None:
        # Leading determiners and trailing possessives are not part of a name.
        while len(span) > 1 and span[0].pos_ in ("DET", "PUNCT"):
            span = span[1:]
        while len(span) > 1 and (span[-1].tag_ == "POS" or span[-1].is_punct):
            span = span[:-1]
        # Titles are not part of a name ("Spokesman Tomas Vell", "Nordvik CEO"), and a name of titles alone
        # ("Chief Executive", "Vice President") is none.
        if not singular and all(title_word(token) or token.lower_ in NOT_INITIALS for token in span):
            return None
        # A place's name the recogniser read whole may open with a title word ("St. Orvel", "Prince Varn Island"),
        # and a title word that only opens an office ("Technology" of "Chief Technology Officer", "Financial",
        # "Vice") ends a name as a word of it ("Orvel Technology", "Vell Financial"), not as a title.
        # So may an organisation's name of two words ("General Motors", "Premier Foods"): the word left alone would be
        # a common word, not its name.
        whole = kind == "place" or (kind == "organization" and len(span) == 2 and not title_word(span[1]))
        while len(span) > 1 and title_word(span[0]) and not whole:
            span = span[1:]
        # Only as the name's own last word after a capitalised word of it: once a title is cut off its end ("Ana
        # Roe, Chief Financial Officer"), or after a lower-case word ("Ana Roe as Senior ..."), it opens an office.
        cut = False
        while (
            len(span) > 1
            and title_word(span[-1])
            and (cut or span[-1].lower_ not in OFFICE_OPENERS or not span[-2].text[:1].isupper())
        ):
            span, cut = span[:-1], True
        # A generational suffix ends a person's name ("Tavin Orrell Jr." is not his father, "Tavin Orrell Sr."); alone
        # or opening a name ("Jr." after "Tavin Orrell," where the recogniser ended the name at the comma) it is none.
        while len(span) > 0 and span[0].lower_.rstrip(".") in GENERATIONAL:
            span = span[1:]
        if len(span) == 0:
            return None
        # A country's letters before a currency's sign and a number ("US $299", "HK $ 40") write an amount, not the
        # country: no mention of a place.
        doc = span.doc
        if (
            len(span) == 1
            and span[0].is_upper
            and len(span[0].text) <= 3
            and span.end + 1 < len(doc)
            and doc[span.end].is_currency
            and doc[span.end + 1].like_num
        ):
            return None
        # Trailing common words are not part of a name ("GloVe averages").
        while len(span) > 1 and span[-1].is_lower and span[-1].is_alpha and span[-1].pos_ != "PROPN":
            span = span[:-1]
        if not singular and (fragment(span) or common_noun(span)):
            return None
        text = span.text.strip()
        if any(token.text in OPENING_QUOTES | CLOSING_QUOTES for token in span[1:-1]):  # 909 "Skylark"
            text = " ".join(token.text for token in span if token.text not in OPENING_QUOTES | CLOSING_QUOTES)
        # An initial that ends a name and its sentence ("at Quillon X. Roe then led", "joined Quillon X.") lends its
        # period to the sentence: the name is "Quillon X".
        after = span.doc[span.end] if span.end < len(span.doc) else None
        if len(span) > 1 and INITIAL.match(span[-1].text) and (after is None or after.is_sent_start or after.is_title):
            text = text[:-1]
        # A model number alone ("the 606", "its 606 airliner") is a name; other names hold a letter.
        if len(text) < 2 or not (singular or re.search(r"[A-Za-z]", text)) or looks_like_code(span):
            return None
        if kind is None and not singular and not re.search(r"[A-Z]", span.text):
            return None
        if singular or re.search(r"\ds$", text):
            text = singular_name(text)
        key = normalise_name(text)
        if not key:
            return None
        entity = entities.setdefault(key, _DocEntity(key))
        entity.names[text] += 1
        # A model designation ("Nordvik 909", "the NV900") is evidence of its own.
        entity.evidence.labels["designation" if singular else kind or ""] += 1
        entity.evidence.name_labels[(len(text.split()), "designation" if singular else kind or "")] += 1
        if text not in entity.evidence.names:
            entity.evidence.names.append(text)
        if kind is not None:
            entity.kinds[kind] += 1
        return _Mention(key, span.root, span.start, span.end)

    def _gazetteer(
        self,
        sentences: list[Sentence],
        raw: list[list[_Mention]],
        entities: dict[str, _DocEntity],
        known_names: Callable[[set[str]], set[str]] | None,
    ) -> None:
        """Capitalised words the tagger read as common nouns (a name opening a sentence: "Enders led ...") are
        mentions when the document names them elsewhere (as a name or a part of a full name) or the graph already
        knows them."""
        names = set(entities)
        for key in entities:
            words = key.split()
            if len(words) >= 2:
                names.update((words[0], words[-1]))
        model_words = {
            word
            for key, entity in entities.items()
            if entity.kinds.get("product")
            for word in key.split()
            if re.search(r"\d", word)
        }
        candidates: list[tuple[int, Any]] = []
        for index, (sentence, row) in enumerate(zip(sentences, raw, strict=True)):
            covered = {i for m in row for i in range(m.start, m.end)}
            for token in sentence.span:
                if token.i in covered or role_of(token) is None:
                    continue
                if token.text[:1].isupper() and token.pos_ in ("NOUN", "PROPN", "ADJ", "ADV") and not token.ent_type_:
                    candidates.append((index, token))
                elif MODEL.match(token.text) and token.ent_type_ not in NOT_MODELS and token.text in model_words:
                    candidates.append((index, token))  # "the 909" of a document about the 909 Skylark
        unknown = {normalise_name(t.text) for _, t in candidates if t.text[:1].isupper()} - names
        if known_names is not None and unknown:
            names |= known_names(unknown)
        for index, token in candidates:
            span = token.doc[token.i : token.i + 1]
            if normalise_name(token.text) in names:
                mention = self._mention(span, entities, None, singular=token.text in model_words)
                if mention is not None:
                    raw[index].append(mention)
                    raw[index].sort(key=lambda m: m.start)

    @staticmethod
    def _proper_noun_runs(sentence: Any, taken: set[int], nouns: frozenset[str] | set[str] = frozenset()) -> list[Any]:
        """Runs of proper nouns the recogniser did not tag, when the run takes part in a predicate; an "of" or "for"
        between two of them joins them ("Society for Applied Tinkering", "Festival of Lanterns"), and so does a
        capitalised word the parse hangs on the run as a compound though the tagger read it as an adverb or an unknown
        word ("Orvik FC won"), unless the text writes it elsewhere as a common noun (`nouns`)."""
        doc = sentence.doc

        def misread(t: Any) -> bool:
            name_like = t.is_alpha and t.is_title and t.pos_ in _MISREAD_NAME_WORDS and t.lower_ not in nouns
            following = t.i + 1 < sentence.end and doc[t.i + 1].pos_ == "PROPN"
            return name_like and following and t.dep_ == "compound" and t.head.i > t.i and t.head.pos_ == "PROPN"

        def free(t: Any) -> bool:
            return (t.pos_ == "PROPN" or misread(t)) and t.i not in taken and not t.ent_type_

        def joining(t: Any) -> bool:
            inside = sentence.start < t.i < sentence.end - 1
            return inside and t.text in ("of", "for") and free(doc[t.i - 1]) and free(doc[t.i + 1])

        runs = []
        for proper, group in groupby(sentence, key=lambda t: free(t) or joining(t)):
            tokens = list(group)
            span = sentence.doc[tokens[0].i : tokens[-1].i + 1]
            # One capitalised word opening a sentence ("Version 3 followed") is a name only when the document or the
            # graph knows it: the gazetteer pass decides.
            if proper and role_of(span.root) is not None and not (span.start == sentence.start and len(span) == 1):
                runs.append(span)
        return runs

    @staticmethod
    def _learn_type_nouns(sentence: Any, row: list[_Mention], entities: dict[str, _DocEntity]) -> None:
        """What the text calls each entity: "Qdrant, a vector search engine", "Qdrant is a database", "the
        planemaker Nordvik", "Qdrant: a vector search engine" make "engine", "database", "planemaker" type nouns."""
        for mention in row:
            root = mention.root
            entity = entities[mention.key]
            # The names it is listed with ("Dalby, Orsk and Vell"): the parse coordinates their heads.
            listed = {t.i for t in root.conjuncts}
            for other in row:
                if other is not mention and any(other.start <= i < other.end for i in listed):
                    name = sentence.doc[other.start : other.end].text
                    if name not in entity.evidence.listed:
                        entity.evidence.listed.append(name)
            # The last word of a longer name says what it is: "the store" of the "iTunes Music Store", "the airline"
            # of "Singapore Airlines" (not a person's surname: "the job" is not Steve Jobs).
            last = sentence.doc[mention.end - 1]
            if mention.end - mention.start >= 2 and last.is_alpha and entity.kind() != "person":
                noun = last.lemma_.lower()
                entity.type_nouns.add(noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun)
            nouns = [c for c in root.children if c.dep_ == "appos" or (c.dep_ == "compound" and c.i < mention.start)]
            if root.dep_ == "nsubj" and root.head.lemma_ == "be":
                nouns += [child for child in root.head.children if child.dep_ == "attr"]
            if root.dep_ == "appos":
                nouns.append(root.head)
            said = {noun.lemma_.lower() for noun in nouns if noun.pos_ == "NOUN"}
            entity.type_nouns.update(said)
            entity.evidence.nouns |= said
            role = evidence_role(root)
            if role:
                entity.evidence.roles[role] += 1
            if role and role[2:] in SPEECH_VERBS and role.startswith("s:") and subject_itself(root):
                subject = root
                while subject.dep_ in ("conj", "appos") and subject.head.i != subject.i:
                    subject = subject.head
                if speaks(subject.head):
                    entity.evidence.spoke += 1
            # The first pronoun after the name in its sentence most often refers back to it ("Vell left, and her team
            # followed"; "Quorra said its plant ..."): a person's or a thing's. A person's pronoun after a person's
            # name nearer to it is that person's ("Salvaro coach Miguel Arenas said his players ...").
            after = next((t for t in sentence.doc[mention.end : sentence.end] if t.pos_ == "PRON"), None)
            pronoun = after.lower_ if after is not None else None
            if pronoun in PERSON_PRONOUNS and any(
                mention.end <= o.start < after.i and o.root.ent_type_ == "PERSON" for o in row if o is not mention
            ):
                pronoun = None
            if pronoun in PERSON_PRONOUNS:
                entity.evidence.pronouns["person"] += 1
            elif pronoun in THING_PRONOUNS:
                entity.evidence.pronouns["thing"] += 1
            # A title or an office right before the name ("CEO Orla Vennick", "Dr. Vennick"; never part of the name):
            # one that modifies the name (not "the technology Quillon uses"), and that the recogniser does not read
            # as the first word of a place's or an organisation's name ("St. Orvel", "General Tavrin Motors").
            before = sentence.doc[mention.start - 1] if mention.start > sentence.start else None
            if (
                before is not None
                and before.lower_.rstrip(".") in TITLE_WORDS
                and mention.start <= before.head.i < mention.end
                and before.ent_type_ in ("", "PERSON")
            ):
                entity.evidence.titled += 1
            if result_after(sentence, mention.end, [other.end for other in row]):
                entity.evidence.scored += 1
            around = [root.head] if root.head.i != root.i else []
            modifiers = ("amod", "compound", "appos", "nmod")
            around += [c for c in root.children if c.dep_ in modifiers and c.i < mention.start]
            # Only common words are context features: a name nearby ("Acme", "Zorblex") would make the fitted model
            # learn the entities of the set it is fitted on.
            entity.evidence.context.update(
                {t.lemma_.lower() for t in around if _context_word(t) and not (mention.start <= t.i < mention.end)}
            )
        # A heading "Name: a description" (the tagger often misreads the name there).
        colon = next((t.i for t in sentence if t.text in (":", "—", "–")), None)
        if colon is not None and 0 < colon - sentence.start <= 4:
            key = normalise_name(sentence.doc[sentence.start : colon].text)
            if key in entities:
                for token in sentence.doc[colon + 1 : sentence.end]:
                    if token.pos_ == "NOUN" and token.dep_ in ("ROOT", "appos", "attr", "dobj", "npadvmod"):
                        entities[key].type_nouns.add(token.lemma_.lower())
                        break

    @staticmethod
    def _rejoin_cut_names(
        raw: list[list[_Mention]],
        entities: dict[str, _DocEntity],
        known_names: Callable[[set[str]], set[str]] | None = None,
    ) -> None:
        """A mention whose word before it completes a longer name ("Face" after "Hugging", where the tagger read
        "Hugging" as a verb and the recogniser took only the last word), or whose capitalised word after it does
        ("Delmont" before "Automotive", where the recogniser read the first word as a place), is a mention of that
        name when the document names it elsewhere, or when the graph knows it from other documents and the word is
        written capitalised (the longer name is written out here, word for word); a name left with no mention goes."""

        def sides(mention: _Mention) -> list[tuple[int, int, bool]]:
            # The spans with the word before and with a capitalised word after (in the sentence), each with whether
            # its added word is capitalised (only such a span may be a name the graph knows).
            doc = mention.root.doc
            spans = []
            if mention.start > 0 and doc[mention.start - 1].is_alpha:
                spans.append((mention.start - 1, mention.end, not doc[mention.start - 1].is_lower))
            after = doc[mention.end] if mention.end < doc[mention.end - 1].sent.end else None
            if after is not None and after.is_alpha and after.text[0].isupper():
                spans.append((mention.start, mention.end + 1, True))
            return spans

        def longer_of(mention: _Mention) -> tuple[str, int, int] | None:
            # The longer name and its span: with the word before, else with a capitalised word after.
            for start, end, _ in sides(mention):
                longer = normalise_name(mention.root.doc[start:end].text)
                if longer != mention.key and (longer in entities or longer in known):
                    return longer, start, end
            return None

        known: set[str] = set()
        if known_names is not None:
            asked = {
                normalise_name(mention.root.doc[start:end].text)
                for row in raw
                for mention in row
                for start, end, capitalised in sides(mention)
                if capitalised
            } - set(entities)
            known = known_names(asked) if asked else set()
        created: set[str] = set()
        for row in raw:
            for mention in row:
                found = longer_of(mention)
                if found is None:
                    continue
                longer, start, end = found
                doc = mention.root.doc
                name = doc[mention.start : mention.end].text
                whole = doc[start:end].text
                if longer not in entities:  # the graph's name, written out here: this document names it too
                    entities[longer] = _DocEntity(longer)
                    entities[longer].evidence.names.append(whole)
                    created.add(longer)
                if longer in created:
                    entities[longer].names[whole] += 1
                short = entities.get(mention.key)
                if short is not None:
                    short.names[name] = max(0, short.names[name] - 1)
                    if not any(short.names.values()):
                        del entities[mention.key]
                        if longer in created:  # every mention of the piece was the longer name's: so is its evidence
                            entities[longer].kinds.update(short.kinds)
                            entities[longer].type_nouns |= short.type_nouns
                            entities[longer].evidence.add(short.evidence)
                mention.key, mention.start, mention.end = longer, start, end

    @staticmethod
    def _junk(entities: dict[str, _DocEntity], sentences: list[Sentence], raw: list[list[_Mention]]) -> list[str]:
        """Capitalised common words ("Standings", "Award") that the same text also uses as lower-case nouns, and
        writes capitalised only where every word may be (opening a sentence, in a heading): no entities. A name the
        text capitalises mid-sentence stays one ("we rewrote it in Rust" beside "rust on the hinge").

        A measure: a name made of a unit's, a currency's or a time zone's symbol ("GB", "USD 23": `a_measure`).

        Also a piece of a longer name: a name the recogniser labelled in none of its mentions, each of which stands
        right beside a capitalised word that is not part of it ("Valley" of "the Qorvath Valley Trust" where the
        tagger cut the name)."""
        lower = {t.text for s in sentences for t in s.span if t.is_lower and t.is_alpha and t.pos_ == "NOUN"}
        # A word of a longer name of the document is that name's short form ("Lind" of "Mara Lind"), not a common word.
        parts = {word for key in entities if " " in key for word in key.split()}
        # Where the text capitalises each word mid-sentence in prose.
        named = {
            token.text.lower()
            for sentence in sentences
            if not is_heading(sentence)
            for token in sentence.span
            if token.is_title and token.i > first_word(sentence.span)
        }
        junk = [key for key, entity in entities.items() if a_measure(entity.names)]
        for key, entity in entities.items():
            written = [name for name in entity.names if entity.names[name]]
            unlabelled = set(entity.evidence.labels) == {""}
            # A sequence's label ("a Series B", "Phase II") is no name unless the recogniser reads one in it ("the
            # Model S", "Henry VIII").
            if unlabelled and written and all(sequence_label(name) for name in written):
                junk.append(key)
            # A one-word name written only in lower case that is nowhere a subject ("with the fetch time as metadata"):
            # a common word the recogniser labelled; a brand written in lower case is the subject of its verbs
            # ("vexbase was released in 2021").
            subject = any(role[:2] in ("s:", "p:") for role in entity.evidence.roles)
            lower_case = bool(written) and all(
                len(name.split()) == 1 and name == name.lower() and re.search(r"[a-z]", name) for name in written
            )
            if lower_case and not subject and key not in junk:
                junk.append(key)
        for key, entity in entities.items():
            written = [name for name in entity.names if entity.names[name]]
            single = bool(written) and all(len(name.split()) == 1 and name.istitle() for name in written)
            if single and key in lower and key not in parts and key not in named:
                junk.append(key)
        pieces: dict[str, list[bool]] = {}
        heads: dict[str, list[bool]] = {}
        for sentence, row in zip(sentences, raw, strict=True):
            for mention in row:
                pieces.setdefault(mention.key, []).append(_beside_a_capitalised_word(sentence.span, mention))
                heads.setdefault(mention.key, []).append(_heads_an_of_phrase(sentence.span, mention))
        for key, entity in entities.items():
            unlabelled = set(entity.evidence.labels) == {""}
            if unlabelled and pieces.get(key) and all(pieces[key]) and key not in junk:
                junk.append(key)
            # A word that only ever heads an of-phrase holding a capitalised word ("Professor of History"), and that
            # the recogniser never read as a person's, an organisation's or a place's name, is that phrase's common
            # noun: the name, if any, is in the of-phrase. Not a model designation ("the K900 of Talmont Aerospace").
            named = set(entity.evidence.labels) & {"person", "organization", "place"}
            plain = all(name.isalpha() and name.istitle() for name in entity.names)
            if heads.get(key) and all(heads[key]) and plain and not named and key not in junk:
                junk.append(key)
        return junk

    @staticmethod
    def _aliases(
        entities: dict[str, _DocEntity], sentences: list[Sentence], raw: list[list[_Mention]] | None = None
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Short names -> the full name they stand for in this document, and why (`raw`: each sentence's mentions,
        for where the text first writes a name)."""
        redirect: dict[str, str] = {}
        reasons: dict[str, str] = {}
        # "European Aeronautic Defence and Space Company (EADS)": the acronym in parentheses.
        for sentence in sentences:
            for match in NAME_AND_ACRONYM.finditer(sentence.text):
                acronym, spelled = normalise_name(match.group(2)), normalise_name(match.group(1))
                longer = (k for k in entities if len(k.split()) > 1 and k in spelled)  # the acronym is one word
                long_key = next(
                    (k for k in longer if any(a.startswith(acronym) for a in acronyms_of(k, entities[k].names))), None
                )
                if acronym in entities and long_key:
                    redirect[acronym] = long_key
                    reasons[acronym] = f"the acronym the text defines for {long_key}"
        # An acronym that spells the initials of exactly one longer name of the document.
        for key in entities:
            if key in redirect or len(key.split()) != 1 or not any(n.isupper() for n in entities[key].names):
                continue
            owners = [k for k in entities if k != key and key in acronyms_of(k, entities[k].names)]
            if len(owners) == 1:
                redirect[key] = owners[0]
                reasons[key] = f"the initials of {owners[0]}, the only name of the document they spell"
        # A part of a product's name ("909" of "909 Skylark"), else a model number without its letters ("900" of
        # the "N900"), when only one product of the document has it.
        products = [k for k, e in entities.items() if e.kind() == "product"]
        for key, entity in entities.items():
            if key in redirect or entity.kind() not in ("product", "other"):
                continue
            owners = [k for k in products if k != key and set(key.split()) < set(k.split())]
            # ... when the part is not itself the more used name ("Nordvik" beside one "Nordvik Cloud").
            rare = [k for k in owners if sum(entity.names.values()) <= sum(entities[k].names.values())]
            owners = owners if re.search(r"\d", key) else rare
            if len(owners) != 1 and key.isdigit():
                owners = [k for k in products if re.fullmatch(rf"[a-z]{{1,3}}{key}", k)]
            if len(owners) == 1:
                redirect[key] = owners[0]
                reasons[key] = f"part of the name {owners[0]}, the only product of the document with it"
        # A person's surname or first name alone, and an organisation's first word alone, when only one full name
        # of the document has it.
        # A person's name written without its middle initial ("Petra Lindstrand" of "Petra K. Lindstrand") counts
        # as a part the same way (part_index 1).
        # A name the recogniser left unlabelled ("Nikolai Berov" in a results line) is written alone by its last
        # word the same way ("Berov , who won the title ...") when that word is unlabelled too (part_index -2).
        parts = (
            (-1, ("person",)),
            (-2, ("other",)),
            (1, ("person",)),
            (0, ("person",)),
            (0, ("organization", "product")),
        )
        for part_index, kinds in parts:
            owners: dict[str, list[str]] = {}
            for key, entity in entities.items():
                if len(key.split()) >= 2 and entity.kind() in kinds:
                    if part_index == -1:
                        found = surnames(key)
                    elif part_index == -2:
                        found = [key.split()[-1]]
                    else:
                        found = [without_middle(key)] if part_index == 1 else [key.split()[0]]
                    for part in filter(None, found):
                        owners.setdefault(part, []).append(key)
            for part, keys in owners.items():
                if len(keys) == 1 and part in entities and part not in redirect and part != keys[0]:
                    short = entities[part]
                    # "Apple Computer" keyed "apple" is a name of its own, not the first word of "Apple Corps"; and
                    # "Royle Holdings" keyed "royle" is a company named after Tamsin Royle, not her surname alone.
                    written_short = all(len(name.split()) == len(part.split()) for name in short.names)
                    # A name's first word used more often than the name itself is a name of its own ("Nordvik" and
                    # its "Nordvik Cloud" service); a surname alone is the person's whatever the recogniser said.
                    rarer = part_index != 0 or sum(short.names.values()) <= sum(entities[keys[0]].names.values())
                    fits = short.kind() in (*kinds, "other") or (part_index != 0 and "person" in kinds)
                    # "Quarrow" the company is not the first word of the "Quarrow Builders Summit" (an event).
                    fits = fits and (part_index != 0 or not named_of_another_kind(keys[0], short.kind()))
                    if fits and written_short and rarer:
                        redirect[part] = keys[0]
                        which = {-1: "surname", -2: "last word", 1: "name without its middle name"}.get(
                            part_index, "first name" if "person" in kinds else "first word"
                        )
                        reasons[part] = f"the {which} of {keys[0]}, the only full name of the document with it"
        # An organisation's first word written alone after the text introduced its full name ("Orvel University"
        # ... "Orvel"), when every name of the document holding that word is the full name or a longer name that
        # starts with it ("Orvel University Library"), and the full name is an organisation the short one may be (not
        # a place, a person or a product): "Orvel" the city stays a place.
        # A heading previews its section: only prose counts as the short name's use.
        first: dict[str, tuple[int, int]] = {}
        first_prose: dict[str, tuple[int, int]] = {}
        for index, (sentence, row) in enumerate(zip(sentences, raw or [], strict=False)):
            for mention in row:
                first.setdefault(mention.key, (index, mention.start))
                if not is_heading(sentence):
                    first_prose.setdefault(mention.key, (index, mention.start))
        for part, short in entities.items():
            if part in redirect or len(part.split()) != 1 or short.kind() not in ("organization", "other"):
                continue
            if not all(len(name.split()) == 1 for name in short.names) or part not in first_prose:
                continue
            # Every reading of the short name agrees: no label or noun of the text calls it anything else ("Orvel,
            # a city").
            read = set(short.kinds) | {kind_of_noun(noun) for noun in short.type_nouns}
            if not read <= {"organization", None}:
                continue
            holders = sorted((k for k in entities if k != part and part in k.split()), key=len)
            full = next((k for k in holders if k.split()[0] == part), None)
            if full is None or entities[full].kind() != "organization" or full in redirect:
                continue
            if named_of_another_kind(full, short.kind()):
                continue
            if not all(k == full or k.startswith(f"{full} ") for k in holders):
                continue
            introduced = min((first[k] for k in holders if k in first), default=None)
            if introduced is not None and introduced < first_prose[part]:
                redirect[part] = full
                reasons[part] = f"the first word of {full}, written alone after the text introduced {full}"
        # An organisation's name without its leading words ("the Air Force" of the "United States Air Force", "the
        # Commission" is one word and stays itself), when only one longer name of the document ends with it.
        tails: dict[str, list[str]] = {}
        for key, entity in entities.items():
            words = key.split()
            # "Talmont-Navy" (a contract between the two) joins two names; it is not a longer name of either.
            joined = any(re.search(r"[A-Za-z]-[A-Z]", name) for name in entity.names)
            if len(words) >= 3 and entity.kind() == "organization" and not joined:
                for cut in range(1, len(words) - 1):
                    tails.setdefault(" ".join(words[cut:]), []).append(key)
        for tail, keys in tails.items():
            if len(keys) == 1 and tail in entities and tail not in redirect:
                if entities[tail].kind() in ("organization", "other"):
                    redirect[tail] = keys[0]
                    reasons[tail] = f"the end of the name {keys[0]}, the only longer name of the document with it"
        # Chains ("a" -> "b" -> "c") end at their last name.
        for short in list(redirect):
            seen = {short}
            while redirect[short] in redirect and redirect[short] not in seen:
                seen.add(redirect[short])
                redirect[short] = redirect[redirect[short]]
        return redirect, reasons

    @staticmethod
    def _definite_heads(
        entities: dict[str, _DocEntity], redirect: dict[str, str], raw: list[list[_Mention]]
    ) -> dict[str, str]:
        """One capitalised word written with the definite article ("the Council", "the Treaty") that is the head noun
        of a longer name of the document ("Orvel City Council", "Treaty of Varn": its last word, or the word before
        its "of") refers back to that name, as a definite description does, when exactly one longer name has that
        head. Not a person's name (a surname is the person's: `_aliases`), nor a word the recogniser read as a
        person or a place ("Germany" of "East Germany" is a country of its own)."""
        determined: dict[str, list[bool]] = {}
        for row in raw:
            for mention in row:
                det = any(c.dep_ == "det" and c.lower_ == "the" for c in mention.root.children)
                determined.setdefault(mention.key, []).append(det)
        heads: dict[str, list[str]] = {}
        for key, entity in entities.items():
            words = key.split()
            if len(words) < 2 or key in redirect or entity.kind() == "person":
                continue
            head = words[words.index("of") - 1] if "of" in words[1:] else words[-1]
            heads.setdefault(head, []).append(key)
        found: dict[str, str] = {}
        for key, keys in heads.items():
            short = entities.get(key)
            if short is None or key in redirect or len(keys) != 1 or not any(determined.get(key, [])):
                continue
            if set(short.kinds) & {"person", "place"} or short.kind() == "person":
                continue
            if all(len(name.split()) == 1 and name[:1].isupper() for name in short.names):
                found[key] = keys[0]
        return found

    def _participants(
        self,
        sentence: Any,
        row: list[_Mention],
        entities: dict[str, _DocEntity],
        recent: list[str],
        focus: list[str],
        descriptions: set[str],
    ) -> dict[str, tuple[str, Any]]:
        """The entities taking part in the sentence's events, each with its role (see `role_of`) and the token
        naming it; references ("he", "the company") as "ref:" roles. `descriptions`: the nouns the document refers
        with on their own (`_descriptions`)."""
        roles: dict[str, tuple[str, Any]] = {}
        for mention in row:
            role = role_of(mention.root)
            if role is None or mention.key in roles:
                continue
            kind = entities[mention.key].kind()
            # A thing's name before the noun of its class ("the first NV900 prototype") names the noun's referent; an
            # organisation's, a person's or a place's does not ("the Nordvik plant" ... "the plant" is Nordvik's).
            other_thing = modifies_other_thing(mention.root, kind) and not (
                kind not in ("organization", "person", "place", "group")
                and _names_its_instance(mention.root, descriptions)
            )
            if other_thing or (kind != "place" and of_a_thing(mention.root, role)):
                continue
            roles[mention.key] = (role, mention.root)
        if self.resolve_references:
            for key, role, token in self._references(sentence, row, entities, recent, focus):
                roles.setdefault(key, (f"ref:{role}", token))
        return roles

    @staticmethod
    def _references(
        sentence: Any,
        row: list[_Mention],
        entities: dict[str, _DocEntity],
        recent: list[str],
        focus: list[str],
    ) -> list[tuple[str, str, Any]]:
        """The entities this sentence's pronouns and definite descriptions refer to (most recent fitting first),
        each with the referring word's role and the word. A pronoun or a description as subject ("It carries 300
        passengers", "He talked about ...", "the company had lost ...") continues the previous sentence's subject
        (`focus`) when one fits: the centre of attention stays."""
        named = {m.key for m in row}
        covered = {i for m in row for i in range(m.start, m.end)}

        def latest(fits: Callable[[_DocEntity], bool]) -> str | None:
            return next((key for key in reversed(recent) if fits(entities[key])), None)

        def in_focus(subject: bool, fits: Callable[[_DocEntity], bool]) -> str | None:
            kept = [key for key in focus if subject and fits(entities[key])]
            return kept[0] if kept else latest(fits)

        found: list[tuple[str, str, Any]] = []
        quoted = quoted_positions(sentence)
        for token in sentence:
            role = None if token.i in covered else role_of(token)
            # The object of an event noun is a participant too ("sales of the aircraft", "orders for it").
            of_event = role == "pobj:NOUN" and is_event_noun(token.head.head)
            # So is a description possessing an event noun ("the aircraft's delivery"; "its use" is too vague).
            possessed = role is not None and role.startswith("poss>") and token.pos_ == "NOUN"
            of_event = of_event or (possessed and is_event_noun(token.head))
            if role is None or not (is_core(role, token.lower_ in PERSON_PRONOUNS) or of_event):
                continue
            lower = token.lower_
            key = None
            if token.i in quoted and (token.pos_ == "PRON" or lower in PERSON_PRONOUNS | THING_PRONOUNS):
                continue  # a quoted speaker's "it", "we", "he" is theirs: the narrative's recency does not tell it
            if lower == "it" and is_expletive(token):
                continue
            if token.pos_ == "PRON" or lower in PERSON_PRONOUNS | THING_PRONOUNS:
                subject = is_subject(role)
                if lower in PERSON_PRONOUNS:
                    # A person named before the pronoun in the sentence is its antecedent ("Jobs said he ..."); one
                    # named after it is not ("He said Mac sales grew").
                    if any(m.start < token.i and entities[m.key].kind() == "person" for m in row):
                        continue
                    key = in_focus(subject, lambda e: e.kind() == "person")
                elif lower in ("i", "me") and not named:
                    # First person in a sentence naming no one: the speaker or writer quoted, the person in focus.
                    key = latest(lambda e: e.kind() == "person")
                elif lower in THING_PRONOUNS or (subject and token.tag_ == "DT" and lower in ("this", "that")):
                    # As for a person: a thing named before the pronoun in the sentence is its antecedent ("Varo said
                    # on Monday it would buy Quell"), never one named after it, whatever the previous sentences said.
                    if any(m.start < token.i and entities[m.key].kind() in _THINGS for m in row):
                        continue
                    # "This will be branded as ..." after "A second jet is travelling ...": the subject stays.
                    key = in_focus(subject, lambda e: e.kind() in _THINGS)
                elif lower in PLURAL_PRONOUNS and lower != "themselves":
                    # "themselves" stands for a subject of its own clause ("asked the pilots to explain themselves").
                    key = latest(lambda e: e.kind() in ("organization", "group"))
            elif token.pos_ == "NOUN" and any(c.lower_ == "the" and c.dep_ == "det" for c in token.children):
                if _names_its_own(token):
                    continue  # "the Talmont mobile device", "the 16GB version": it picks one out, it refers to none
                # As a pronoun does, a description as subject continues the previous sentence's subject when that
                # fits ("Harrow asked the Ostland government for a loan. ... the company had burned through ...").
                noun = token.lemma_.lower()
                kind = kind_of_noun(noun)
                subject = is_subject(role)
                key = in_focus(subject, lambda e, n=noun: n in e.type_nouns)
                if key is None and kind not in (None, "person"):
                    key = in_focus(subject, lambda e, k=kind: e.kind() == k)
            # A name that is only a modifier does not stop a reference to it ("on the Nordvik website, the company
            # said"): the caller keeps one role per entity.
            if key is not None and key not in (k for k, _, _ in found):
                found.append((key, role, token))
        return found


def _names_its_own(noun: Any) -> bool:
    """True when a definite description picks out its referent by a name or a number before its noun ("the
    Talmont mobile device", "the 16GB version", "the 2010 model"): it tells which one it means, so it does not refer
    back to the last thing of its kind."""
    return any(
        child.dep_ in ("compound", "nmod", "nummod", "amod")
        and child.i < noun.i
        and (child.pos_ in ("PROPN", "NUM") or child.like_num or any(ch.isdigit() for ch in child.text))
        for child in noun.children
    )


class ChunkLocator:
    """Finds the chunk a sentence came from: by character offset when chunks carry theirs, else by its text."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = sorted(chunks, key=lambda chunk: chunk.chunk_index)
        self.texts = [" ".join(chunk.text.split()) for chunk in self.chunks]
        metadata = [getattr(chunk, "metadata", None) or {} for chunk in self.chunks]
        self.bounds = [(meta.get("char_start"), meta.get("char_end")) for meta in metadata]
        self.position = 0

    def find(self, offset: int, sentence: str) -> Any | None:
        if not self.chunks:
            return None
        after = range(self.position, len(self.chunks))
        probe = " ".join(sentence.split())[:60]
        inside = (i for i, (start, end) in enumerate(self.bounds) if None not in (start, end) and start <= offset < end)
        found = next(inside, None)
        if found is None:
            found = next((i for i in [*after, *range(self.position)] if probe in self.texts[i]), None)
        if found is None:
            found = next((i for i in after if probe[:25] in self.texts[i]), self.position)
        self.position = found
        return self.chunks[found]
