"""The short answer's span, chosen by a fitted model among every phrase of its sentence that could answer.

The grammar rules of the extractive answer (`span_rules`: entities of the asked kind, the phrase in
the wh-word's role, the noun phrase a "what" asks about) propose one span. This module reads the chosen sentence's
parse (spaCy; already made for the rules, so no model runs here) for every span that could answer instead
(`span_candidates`: named entities, noun chunks and their heads and modifiers, numbers with what they count,
objects of prepositions, verb phrases, the members of a list and the list whole), describes each by general
features (`candidate_features`: the entity label against the kind the question asks, the share of its words the
question already holds, its distance in words and in the parse from the sentence's words the question holds, its
length and form, its role for the verb the question uses, whether the rules chose it), and scores them with a
logistic regression (`SpanModel`) fitted on labelled questions (`research fit spans`). None of the features reads
a word of a set: they are properties of the parse. Before the model picks, the question's own form rules out the
candidates that contradict it while one that keeps it is in the sentence (`asked_form`: a "how many N" answer counts
N, a "what kind of N" answer is a phrase headed by N, a name or thing asked is no bare date).

The model lives in a small versioned JSON file (`span_model.json` beside this module by default):
`{"version", "features", "mean", "scale", "coef", "intercept", "fitted_from", "command", "scores", ...}`, the
pointwise model whose probability that a candidate is right (and its lead over the sentence's other candidates) the
answer confidence reads, and optionally `"rank": {"objective", "c", "features", "mean", "scale", "coef",
"intercept"}`, a ranker fitted over a part's candidates (`fit(objective="listwise")`) that orders them instead: it
chooses the pick and whether it replaces the rules' span, while the probability and lead stay the pointwise model's.
A file without `rank` (also version 1) picks by the pointwise model.

Usage:
```python
model = SpanModel.load()
sentence = "Ada Quill founded Brightwater in 1901."
choice = choose_span(sentence, rated_candidates(sentence, part, question_terms, "Ada Quill", "entity", model))
choice.text, choice.probability, choice.margin
```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import pairwise
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy

from components.generation import logistic_model
from components.generation.answer_evidence import WINDOW  # the confidence's window_share reads the same window
from components.generation.equations import asked_role, equated_names
from components.generation.question_analysis import HOW_ADJECTIVE_LABELS, WH_WORDS, QuestionPart
from components.generation.question_gap import (
    KIND_OF,
    YEARS,
    counted_noun,
    counted_nouns,
    fill_gap_token,
    phrase_tokens,
    question_gap,
    term_of,
)
from components.text.analyzer import terms
from components.text.language import VALUE_LABELS, parse, parse_question

MODEL_VERSION = 2
READ_VERSIONS = (1, 2)  # version 1: the pointwise model alone, no "rank"
DEFAULT_MODEL_PATH = Path(__file__).with_name("span_model.json")

# What the generator does with the model (`ExtractiveAnswerGenerator(span_choice=...)`): replace the rules' span with
# its pick only when the pick's probability leads the rules' span's by the fitted margin ("switch"), rate the rules'
# span, choose the span itself, or neither.
SPAN_CHOICES = ("switch", "rate", "choose", "off")
MAX_WORDS = 12  # a longer stretch is a clause, not a short answer
FAR = 30  # the distance of a candidate from question words the sentence does not hold
# Where a candidate came from (a candidate may come from several).
SOURCES = ("entity", "chunk", "head", "modifier", "number", "object", "phrase", "verb", "list", "member", "rule")
# How the rules found their span (`FOUND_BY` of the answer confidence, the ways that read the sentence).
RULE_WAYS = ("entity", "role", "phrase")
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj"})
OBJECT_DEPS = frozenset({"dobj", "attr", "oprd", "dative", "acomp"})
MODIFIER_DEPS = frozenset({"amod", "compound", "nummod", "npadvmod", "poss"})
LIGHT_VERBS = frozenset({"be", "do", "have"})
_EDGE_DEPS = frozenset({"cc", "det", "prep", "case", "punct", "mark", "aux", "auxpass", "neg", "predet"})

# What the question asks (one flag each), read from its analysis.
QUESTION_FLAGS = ("q_person", "q_time", "q_place", "q_amount", "q_name", "q_thing", "q_action", "q_other")
FEATURES = (
    *(f"from_{source}" for source in SOURCES),
    *(f"rule_{way}" for way in RULE_WAYS),
    "rule_overlap",  # token F1 of the candidate with the rules' span
    "rule_inside",  # the rules' span lies within the candidate
    "label_first",  # an entity of the kind the question asks first
    "label_asked",  # ... of another kind it asks
    "label_other",  # ... of a kind it does not ask
    "value",  # holds a number
    "asked_share",  # share of its terms the question holds
    "asked_any",  # it holds a term of the question
    "no_terms",  # it holds no content term
    "words",  # log(1 + words)
    "proper",  # share of its words that are proper nouns
    "capital",  # opens with a capital letter
    "pronoun",  # its head is a pronoun
    "has_verb",  # it holds a verb
    "distance",  # log(1 + words to the nearest question word outside it)
    "tree_distance",  # log(1 + arcs from its head to the nearest question word outside it)
    "before_match",  # it ends before the nearest question word
    "position",  # its start's place in the sentence (0-1)
    "verb_subject",  # its head is the subject of the verb the question uses
    "verb_object",  # ... the object of that verb
    "verb_oblique",  # ... the object of a preposition of that verb
    "focus_head",  # its head is the noun the question asks about
    "focus_held",  # it holds that noun
    "focus_modifier",  # it modifies that noun
    "focus_equated",  # it stands beside that noun (apposition) or is equated with it ("X is a Y")
    "gap_filler",  # its head fills the role of the question's wh-word
    "gap_held",  # it holds the word that fills that role
    *QUESTION_FLAGS,
    # What the question asks, against what the candidate is.
    "q_person_x_proper",
    "q_time_x_value",
    "q_amount_x_value",
    "q_place_x_object",
    "q_thing_x_chunk",
    "q_thing_x_modifier",
    "q_thing_x_proper",
    "q_action_x_verb",
    "q_name_x_label",
    "q_amount_x_asked",  # an amount asked, against a candidate holding a term of the question (its unit)
    "q_person_x_list",  # a person asked, against a list of several
    # The question's words near the candidate, and the preposition the question puts before its wh-phrase.
    "window_terms",  # share of the question's terms within WINDOW words (answer_evidence) either side of it, outside it
    "prep_match",  # its head is the object of that preposition ("in" of "In what year ...?")
)


@dataclass(frozen=True)
class Candidate:
    """One span that could answer: its text, its tokens in the sentence's parse (None when it is not found there)
    and where it came from."""

    text: str
    start: int | None
    end: int | None
    sources: frozenset[str]


@dataclass(frozen=True)
class SpanChoice:
    """The span chosen, its probability of being right, its lead over the next candidate's, and its entity label."""

    text: str
    probability: float
    margin: float
    label: str


def _trimmed(doc: Any, start: int, end: int) -> tuple[int, int]:
    """The stretch without the function words and punctuation at its edges (articles, conjunctions, prepositions)."""
    while start < end and (doc[start].dep_ in _EDGE_DEPS or doc[start].is_punct or doc[start].tag_ == "PRP$"):
        start += 1
    while end > start and (doc[end - 1].dep_ in _EDGE_DEPS or doc[end - 1].is_punct or doc[end - 1].tag_ == "POS"):
        end -= 1
    return start, end


def _entity_runs(doc: Any) -> list[tuple[Any, Any]]:
    """The first and last of each run of two or more named entities of one kind that only commas and conjunctions
    part: a coordination ("Ada Quill and Tom Reed") or an appositive chain of places ("Lund, Sweden"). Such a run
    answers as one name ("Who founded it?", "Where is it?"), as each of its entities does alone."""
    runs, ents = [], list(doc.ents)
    at = 0
    while at < len(ents):
        end = at
        while end + 1 < len(ents) and ents[end + 1].label_ == ents[at].label_:
            between = doc[ents[end].end : ents[end + 1].start]
            if not 0 < len(between) <= 2 or not all(t.is_punct or t.dep_ == "cc" for t in between):
                break
            if any(t.is_punct and t.text != "," for t in between):
                break
            end += 1
        if end > at:
            runs.append((ents[at], ents[end]))
        at = end + 1
    return runs


def _found_spans(doc: Any) -> dict[tuple[int, int], frozenset[str]]:
    """Every span of the parsed sentence `doc` that could answer a question, with where it came from, in the order
    found (what `span_candidates` returns before the rules' span joins)."""
    found: dict[tuple[int, int], set[str]] = {}
    # Read once per token: `_trimmed` and `add` test the edges and words of every proposed stretch.
    opens = [t.dep_ in _EDGE_DEPS or t.is_punct or t.tag_ == "PRP$" for t in doc]
    closes = [t.dep_ in _EDGE_DEPS or t.is_punct or t.tag_ == "POS" for t in doc]
    light = [t.is_stop or t.is_punct for t in doc]

    def add(start: int, end: int, source: str) -> None:
        while start < end and opens[start]:
            start += 1
        while end > start and closes[end - 1]:
            end -= 1
        if end <= start or end - start > MAX_WORDS or all(light[start:end]):
            return
        found.setdefault((start, end), set()).add(source)

    for ent in doc.ents:
        add(ent.start, ent.end, "entity")
    for first, last in _entity_runs(doc):
        add(first.start, last.end, "entity")
    for chunk in doc.noun_chunks:
        add(chunk.start, chunk.end, "chunk")
        root = chunk.root
        add(root.i, root.i + 1, "head")
        compounds = [child.i for child in root.lefts if child.dep_ == "compound"]
        if compounds:
            add(min(compounds), root.i + 1, "head")
    for token in doc:
        if token.dep_ in MODIFIER_DEPS and token.head.pos_ in {"NOUN", "PROPN"} and token.i < token.head.i:
            add(token.left_edge.i, token.i + 1, "modifier")
        if token.pos_ in {"NOUN", "PROPN"}:
            left = [child for child in token.lefts if child.dep_ in MODIFIER_DEPS]
            if left:
                add(min(child.left_edge.i for child in left), token.i, "modifier")
            kept = phrase_tokens(token)
            add(min(kept), max(kept) + 1, "phrase")
            members = [token, *(child for child in token.children if child.dep_ == "conj")]
            if len(members) > 1:
                add(token.left_edge.i, max(member.right_edge.i for member in members) + 1, "list")
            if token.dep_ == "conj":
                add(token.left_edge.i, token.i + 1, "member")
                kept = phrase_tokens(token)
                add(min(kept), max(kept) + 1, "member")
        if token.like_num or token.ent_type_ in VALUE_LABELS:
            add(token.i, token.i + 1, "number")
            if token.dep_ == "nummod":
                add(token.i, token.head.i + 1, "number")
        if token.dep_ == "pobj":
            add(token.left_edge.i, token.right_edge.i + 1, "object")
        if token.pos_ == "ADJ" and token.dep_ in {"acomp", "amod", "conj"}:
            add(token.i, token.i + 1, "modifier")
        if token.pos_ == "VERB" and token.lemma_.lower() not in LIGHT_VERBS:
            following = [child for child in token.rights if child.dep_ not in {"punct", "cc", "conj", "advcl", "relcl"}]
            add(token.i, max([token.i, *(child.right_edge.i for child in following)]) + 1, "verb")
            objects = [child for child in token.rights if child.dep_ in {"dobj", "prt"}]
            if objects:
                add(token.i, max(child.right_edge.i for child in objects) + 1, "verb")
    return {span: frozenset(sources) for span, sources in found.items()}


def _rule_place(doc: Any, rule_span: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Where the rules' span lies in the sentence `doc` (None when it does not), and that stretch trimmed."""
    located = _locate(doc, rule_span) if rule_span else None
    return located, _trimmed(doc, *located) if located is not None else None


def _with_rule_span(
    found: Sequence[Candidate], rule_span: str, place: tuple[tuple[int, int] | None, tuple[int, int] | None]
) -> list[Candidate]:
    """The `found` candidates of a sentence, and the rules' span (`rule_span`, at `place`: `_rule_place`) last,
    merged with the one it trims to."""
    candidates = list(found)
    if rule_span:
        located, trimmed = place
        same = [c for c in candidates if located is not None and (c.start, c.end) == trimmed]
        candidates = [c for c in candidates if c not in same]
        start, end = located if located is not None else (None, None)
        sources = frozenset({"rule"}).union(*(c.sources for c in same))
        candidates.append(Candidate(rule_span, start, end, sources))
    return candidates


def span_candidates(doc: Any, rule_span: str = "") -> list[Candidate]:
    """Every span of the parsed sentence `doc` that could answer a question, and the rules' span (`rule_span`),
    each once."""
    found = [Candidate(doc[start:end].text, start, end, sources) for (start, end), sources in _found_spans(doc).items()]
    return _with_rule_span(found, rule_span, _rule_place(doc, rule_span))


def _locate(doc: Any, text: str) -> tuple[int, int] | None:
    """The tokens of the first occurrence of `text` in the sentence (letter case aside), or None."""
    at = doc.text.lower().find(" ".join(text.split()).lower())
    if at < 0:
        return None
    span = doc.char_span(at, at + len(" ".join(text.split())), alignment_mode="expand")
    return (span.start, span.end) if span is not None and len(span) else None


@dataclass(frozen=True)
class QuestionContext:
    """What the candidates' features read of the question part: its flags, terms, verbs, asked noun and gap."""

    flags: Mapping[str, float]
    labels: tuple[str, ...]
    question_terms: frozenset[str]
    verbs: frozenset[str]
    focus: str
    part_text: str
    preposition: str = ""  # the preposition before the wh-phrase ("in" of "In what year ...?"), or ""
    counted: str = ""  # the term of the noun a "how many"/"how much" part counts ("yard"), or ""
    kind_of: bool = False  # the part asks "what kind of" its `focus`
    not_time: bool = False  # the part asks for a name or a thing, neither a time nor an amount
    role: str = ""  # the lemma of the noun a copular "who" part asks about ("Who is the chief executive ...?"), or ""


def question_context(part: QuestionPart, question_terms: frozenset[str]) -> QuestionContext:
    """The part's context for `candidate_features` (its light parse is cached: the question analysis made it)."""
    doc = parse_question(part.text)
    verbs = frozenset(
        token.lemma_.lower() for token in doc if token.pos_ == "VERB" and token.lemma_.lower() not in LIGHT_VERBS
    )
    lemmas = [token.lemma_.lower() for token in doc if not token.is_punct]
    first = part.labels[0] if part.labels else ""
    action = bool(lemmas) and lemmas[-1] == "do" and part.kind in {"what", "which"}
    flags = {
        "q_person": float(first in {"PERSON", "ORG", "NORP"}),
        "q_time": float(first in {"DATE", "TIME"}),
        "q_place": float(first in {"GPE", "LOC", "FAC"}),
        "q_amount": float(first in {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}),
        "q_name": float(bool(first) and first not in VALUE_LABELS and first not in {"PERSON", "GPE", "LOC", "FAC"}),
        "q_thing": float(not first and bool(part.focus) and not action),
        "q_action": float(action),
    }
    flags["q_other"] = float(not any(flags.values()))
    focus = part.focus if part.focus not in {"", "?"} else ""
    wh = next((token.i for token in doc if token.lower_ in WH_WORDS), None)
    preposition = doc[wh - 1].lower_ if wh and doc[wh - 1].pos_ == "ADP" else ""
    counted = counted_noun(part.text) if part.kind in {"how_many", "how_much"} else ""
    kind_of = bool(focus) and KIND_OF.search(part.text) is not None
    # A name or a thing asked: a kind of name (labels), or a thing the wh-word stands for with no noun named ("What is
    # at the harbour?"); a named noun without a kind ("which draft") may be named by its date ("the 2011 draft").
    asks_thing = bool(part.labels) or part.focus == "?"
    # A "when" or a "how many/much/long ..." anywhere in the part asks for a time or an amount, whatever wh-word opens
    # it ("..., which was how many years ago?").
    words = [token.lower_ for token in doc]
    asks_value = "when" in words or any(a == "how" and b in HOW_ADJECTIVE_LABELS for a, b in pairwise(words))
    not_time = (
        asks_thing
        and not asks_value
        and part.kind in {"who", "what", "which", "where"}
        and VALUE_LABELS.isdisjoint(part.labels)
    )
    role = asked_role(part.text) if part.kind == "who" else ""
    return QuestionContext(
        flags,
        tuple(part.labels),
        question_terms,
        verbs,
        focus,
        part.text,
        preposition,
        counted,
        kind_of,
        not_time,
        role,
    )


def _depths(doc: Any) -> list[list[int]]:
    """Every token's path to the root of its sentence (itself first)."""
    paths = []
    for token in doc:
        path, seen = [token.i], {token.i}
        while token.head.i != token.i and token.head.i not in seen:
            token = token.head
            path.append(token.i)
            seen.add(token.i)
        paths.append(path)
    return paths


def _tree_distance(paths: list[list[int]], a: int, b: int) -> int:
    """Arcs between tokens `a` and `b` of one parse (`FAR` when they share no root)."""
    where = {node: depth for depth, node in enumerate(paths[a])}
    return _arcs_to(where, paths[b])


def _arcs_to(where: Mapping[int, int], path: Sequence[int]) -> int:
    """Arcs from the token whose path to the root has the depths `where` to the token whose path is `path`."""
    for depth, node in enumerate(path):
        if node in where:
            return where[node] + depth
    return FAR


def _token_f1(a: Sequence[str], b: Sequence[str]) -> float:
    common = sum(min(a.count(word), b.count(word)) for word in set(a))
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class _SpanFacts:
    """What a candidate's features read of its own words and of the parse, whatever the question asks (the parse
    facts only when the candidate lies in the parse)."""

    terms: tuple[str, ...]
    words: tuple[str, ...]
    capital: float
    digits: float
    root: int = -1
    label: str = ""
    value: float = 0.0
    proper: float = 0.0
    pronoun: float = 0.0
    has_verb: float = 0.0
    position: float = 0.0
    root_dep: str = ""
    head: int = -1
    head_head: int = -1
    root_lemma: str = ""
    head_lemma: str = ""
    lemmas: frozenset[str] = frozenset()
    beside: frozenset[str] = frozenset()  # a focus with one of these lemmas stands beside it or is equated with it
    depths: Mapping[int, int] | None = None  # its head's path to the root: token -> arcs


class _SentenceReading:
    """A parsed sentence as the candidates' features read it: each token's term, lemma and path to the root, its
    found spans, and each candidate's own facts, read once (`_reading` keeps one per sentence: the same sentences
    come back for many questions and parts)."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.first_terms = [next(iter(terms(token.text)), None) for token in doc]
        self.lemmas = [token.lemma_.lower() for token in doc]
        self.paths = _depths(doc)
        self._facts: dict[tuple[str, int | None, int | None], _SpanFacts] = {}
        self._fillers: dict[Any, int | None] = {}
        self._found: list[Candidate] | None = None
        self._places: dict[str, tuple[tuple[int, int] | None, tuple[int, int] | None]] = {}

    def candidates(self, rule_span: str) -> list[Candidate]:
        """`span_candidates` of the sentence (its found spans read once)."""
        if self._found is None:
            self._found = span_candidates(self.doc)
        if rule_span not in self._places:
            self._places[rule_span] = _rule_place(self.doc, rule_span)
        return _with_rule_span(self._found, rule_span, self._places[rule_span])

    def filler(self, gap: Any) -> int | None:
        """The token that fills the question's `gap` in the sentence (`fill_gap_token`), or None."""
        if gap not in self._fillers:
            token = fill_gap_token(self.doc, gap)
            self._fillers[gap] = token.i if token is not None else None
        return self._fillers[gap]

    def facts(self, candidate: Candidate) -> _SpanFacts:
        key = (candidate.text, candidate.start, candidate.end)
        found = self._facts.get(key)
        if found is None:
            found = self._facts[key] = self._read(candidate)
        return found

    def _read(self, candidate: Candidate) -> _SpanFacts:
        text = candidate.text
        own = {
            "terms": tuple(terms(text)),
            "words": tuple(text.lower().split()),
            "capital": float(text[:1].isupper()),
            "digits": float(any(ch.isdigit() for ch in text)),
        }
        if candidate.start is None:
            return _SpanFacts(**own)
        doc = self.doc
        span = doc[candidate.start : candidate.end]
        root = span.root
        head = root.head
        beside = {head.lemma_.lower()} if root.dep_ == "appos" else set()
        beside |= {child.lemma_.lower() for child in root.children if child.dep_ == "appos"}
        if root.dep_ in {"attr", "nsubj"}:
            beside |= {c.lemma_.lower() for c in head.children if c.dep_ in {"attr", "nsubj"} and c.i != root.i}
        return _SpanFacts(
            **own,
            root=root.i,
            label=root.ent_type_ or next((t.ent_type_ for t in span if t.ent_type_), ""),
            value=float(any(t.like_num or t.ent_type_ in VALUE_LABELS for t in span)),
            proper=sum(t.pos_ == "PROPN" for t in span) / len(span),
            pronoun=float(root.pos_ == "PRON"),
            has_verb=float(any(t.pos_ == "VERB" for t in span)),
            position=candidate.start / max(1, len(doc)),
            root_dep=root.dep_,
            head=head.i,
            head_head=head.head.i,
            root_lemma=root.lemma_.lower(),
            head_lemma=head.lemma_.lower(),
            lemmas=frozenset(self.lemmas[candidate.start : candidate.end]),
            beside=frozenset(beside),
            depths={node: depth for depth, node in enumerate(self.paths[root.i])},
        )


@lru_cache(maxsize=1024)
def _reading(sentence: str) -> _SentenceReading:
    """The reading of one sentence, made once per sentence text (as its parse is)."""
    doc = parse(sentence)  # this reading's own copy: its token vectors are never read, and they are most of its memory
    doc.tensor = numpy.zeros((0, 0), dtype="float32")
    return _SentenceReading(doc)


def candidate_features(
    doc: Any, candidates: Sequence[Candidate], context: QuestionContext, rule_span: str, rule_way: str
) -> list[dict[str, float]]:
    """The features (`FEATURES`) of each candidate of one sentence."""
    return _features(_SentenceReading(doc), candidates, context, rule_span, rule_way)


def _features(
    reading: _SentenceReading,
    candidates: Sequence[Candidate],
    context: QuestionContext,
    rule_span: str,
    rule_way: str,
) -> list[dict[str, float]]:
    matched = [i for i, term in enumerate(reading.first_terms) if term is not None and term in context.question_terms]
    verb_tokens = {i for i, lemma in enumerate(reading.lemmas) if lemma in context.verbs}
    gap = question_gap(context.part_text) if (context.flags["q_thing"] or context.flags["q_person"]) else None
    filler = reading.filler(gap) if gap is not None else None
    first_terms, asked_terms = reading.first_terms, max(1, len(context.question_terms))
    rule_words = rule_span.lower().split()
    rule_text = " ".join(rule_words)
    first = context.labels[0] if context.labels else ""
    far = math.log1p(FAR)
    out = []
    for candidate in candidates:
        facts = reading.facts(candidate)
        f = dict.fromkeys(FEATURES, 0.0)
        for source in candidate.sources:
            f[f"from_{source}"] = 1.0
        cand_terms, words_ = facts.terms, facts.words
        if rule_span:
            f["rule_overlap"] = _token_f1(words_, rule_words)
            f["rule_inside"] = float(rule_text in " ".join(words_))
            if "rule" in candidate.sources and rule_way in RULE_WAYS:
                f[f"rule_{rule_way}"] = 1.0
        f["asked_share"] = sum(t in context.question_terms for t in cand_terms) / len(cand_terms) if cand_terms else 0
        f["asked_any"] = float(any(t in context.question_terms for t in cand_terms))
        f["no_terms"] = float(not cand_terms)
        f["words"] = math.log1p(len(words_))
        f["capital"] = facts.capital
        f["value"] = facts.digits
        f["distance"] = f["tree_distance"] = far
        if candidate.start is not None:
            start, end, root = candidate.start, candidate.end, facts.root
            if facts.label:
                f["label_first"] = float(facts.label == first)
                f["label_asked"] = float(facts.label != first and facts.label in context.labels)
                f["label_other"] = float(facts.label not in context.labels)
            f["value"] = max(f["value"], facts.value)
            f["proper"] = facts.proper
            f["pronoun"] = facts.pronoun
            f["has_verb"] = facts.has_verb
            outside = [i for i in matched if not start <= i < end]
            if outside:
                gaps = [start - i if i < start else i - end + 1 for i in outside]
                nearest = outside[min(range(len(gaps)), key=gaps.__getitem__)]
                f["distance"] = math.log1p(min(gaps))
                f["tree_distance"] = math.log1p(min(_arcs_to(facts.depths, reading.paths[i]) for i in outside))
                f["before_match"] = float(end <= nearest)
            f["position"] = facts.position
            if facts.head in verb_tokens and facts.root_dep in SUBJECT_DEPS:
                f["verb_subject"] = 1.0
            if facts.head in verb_tokens and facts.root_dep in OBJECT_DEPS:
                f["verb_object"] = 1.0
            if facts.root_dep == "pobj" and facts.head_head in verb_tokens:
                f["verb_oblique"] = 1.0
            if context.focus:
                f["focus_head"] = float(facts.root_lemma == context.focus)
                f["focus_held"] = float(context.focus in facts.lemmas)
                f["focus_modifier"] = float(
                    facts.head_lemma == context.focus and facts.root_dep in MODIFIER_DEPS | {"amod"}
                )
                f["focus_equated"] = float(context.focus in facts.beside)
            if filler is not None:
                f["gap_filler"] = float(root == filler)
                f["gap_held"] = float(start <= filler < end)
            near = {first_terms[i] for i in outside if start - WINDOW <= i < end + WINDOW}
            f["window_terms"] = len(near) / asked_terms
            if context.preposition:
                f["prep_match"] = float(facts.root_dep == "pobj" and reading.lemmas[facts.head] == context.preposition)
        for flag, value in context.flags.items():
            f[flag] = value
        f["q_person_x_proper"] = f["q_person"] * f["proper"]
        f["q_time_x_value"] = f["q_time"] * f["value"]
        f["q_amount_x_value"] = f["q_amount"] * f["value"]
        f["q_place_x_object"] = f["q_place"] * f["from_object"]
        f["q_thing_x_chunk"] = f["q_thing"] * f["from_chunk"]
        f["q_thing_x_modifier"] = f["q_thing"] * f["from_modifier"]
        f["q_thing_x_proper"] = f["q_thing"] * f["proper"]
        f["q_action_x_verb"] = f["q_action"] * f["from_verb"]
        f["q_name_x_label"] = f["q_name"] * (f["label_first"] + f["label_asked"])
        f["q_amount_x_asked"] = f["q_amount"] * f["asked_any"]
        f["q_person_x_list"] = f["q_person"] * f["from_list"]
        out.append(f)
    return out


# The conditions a question's own form sets on its answer, each in general grammar (`asked_form`): a "how many N" part
# is answered by a number that counts N ("count": "1,204" of "1,204 yards", not "12 goals"); a "what kind of N" part
# by a phrase that ends in N with words of its own before it ("kind": "a family shipping company", not "family
# shipping" nor another noun); a part asking for a name (a who, where, or a what/which whose noun names a kind of name
# other than a time or an amount) or for a thing with no noun named ("What is at ...?") by no bare date ("time": "an
# office", not "2015"); a part whose wh-word is the doer of its verb ("Who won X?", "By whom was X won?", `asks_doer`)
# by the phrase that holds that verb's doer in the sentence, a noun: its active subject, its passive's "by" object, or,
# for an infinitive with no subject of its own, the subject of the verb it depends on ("doer": "The Dane Owls" of "The
# Dane Owls beat the Fen Hares to win X", not the beaten "Fen Hares"); a "who" part whose wh-word is one side of "be"
# and a noun the other ("Who is the chief executive of X?") by a candidate holding a name the sentence equates with
# that noun ("role": "Ada Quill" of "..., with Ada Quill as chief executive", not the founders named before;
# `equations.equated_names`). A candidate that breaks one is not eligible while the sentence holds one that keeps it;
# the model ranks the eligible ones.
FORM_CHECKS = ("count", "kind", "time", "doer", "role")


def asked_form(
    reading: _SentenceReading,
    candidates: Sequence[Candidate],
    context: QuestionContext,
    checks: Sequence[str] | None = None,
) -> list[bool]:
    """Whether each candidate is eligible under the question's form (`checks`, default `FORM_CHECKS`): a check that
    none of the still eligible candidates keeps, or that does not apply to the part, leaves them as they are."""
    eligible = [True] * len(candidates)
    for check in FORM_CHECKS if checks is None else checks:
        kept = _keeps(check, reading, candidates, context)
        if kept is not None and any(k and e for k, e in zip(kept, eligible, strict=True)):
            eligible = [k and e for k, e in zip(kept, eligible, strict=True)]
    return eligible


def _keeps(
    check: str, reading: _SentenceReading, candidates: Sequence[Candidate], context: QuestionContext
) -> list[bool] | None:
    """Whether each candidate keeps the condition `check` of `FORM_CHECKS` (None: the part sets no such condition)."""
    doc = reading.doc
    spans = [doc[c.start : c.end] if c.start is not None else None for c in candidates]
    if check == "count" and context.counted:
        return [
            span is not None and any(t.like_num and context.counted in counted_nouns(t) for t in span) for span in spans
        ]
    if check == "kind" and context.kind_of:
        # The kind is said by the words before the noun ("a family shipping company"), not by a phrase after it.
        return [
            span is not None
            and reading.facts(candidate).root_lemma == context.focus
            and reading.facts(candidate).root == candidate.end - 1
            and any(term not in context.question_terms for term in reading.facts(candidate).terms)
            for candidate, span in zip(candidates, spans, strict=True)
        ]
    if check == "time" and context.not_time:
        return [span is None or not _bare_time(span) for span in spans]
    if check == "doer":
        doers = _asked_doers(doc, context.part_text, context.question_terms)
        if doers:
            return [c.start is not None and any(c.start <= i < c.end for i in doers) for c in candidates]
    if check == "role" and context.role:
        names = equated_names(doc, context.role, context.question_terms)
        if names:
            return [c.start is not None and any(c.start <= i < c.end for i in names) for c in candidates]
    if check not in FORM_CHECKS:
        raise ValueError(f"no such check of the question's form: {check!r}")
    return None


def _asked_doers(doc: Any, part_text: str, question_terms: frozenset[str]) -> set[int]:
    """The nouns that do, in the parsed sentence `doc`, the verb a part asking for its doer names (`asks_doer`; the
    sentence's verb with the stem of the question's): `_doer_of` each, or, for an infinitive with no subject of its
    own that says what the verb it depends on was done for ("... to win X"), that verb's active subject; with the
    nouns in apposition to it or coordinated with it ("two students, Ada Quill and ..."), but for those the question
    itself names ("Who founded X with Ada Quill?" of "Ada Quill and Tom Berg founded X")."""
    if not asks_doer(part_text):
        return set()
    head = question_gap(part_text).head
    doers = set()
    for verb in doc:
        if verb.pos_ not in {"VERB", "AUX"} or term_of(verb) != head:
            continue
        doer = _doer_of(verb)
        if doer is None and verb.dep_ == "advcl" and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):
            doer = _doer_of(verb.head)
        if doer is None or doer.pos_ not in {"NOUN", "PROPN"}:
            continue
        beside = [doer]
        while beside:
            noun = beside.pop()
            if term_of(noun) not in question_terms:
                doers.add(noun.i)
            beside += [c for c in noun.children if c.dep_ in {"appos", "conj"} and c.pos_ in {"NOUN", "PROPN"}]
    return doers


def _bare_time(span: Any) -> bool:
    """Whether the stretch is a date or a time and nothing else, with a figure in it ("2015", "May 1990")."""
    words = [token for token in span if not token.is_punct]
    return (
        bool(words)
        and any(ch.isdigit() for ch in span.text)
        and all(token.ent_type_ in {"DATE", "TIME"} or YEARS.fullmatch(token.text) for token in words)
    )


def candidate_eligibility(doc: Any, candidates: Sequence[Candidate], context: QuestionContext) -> list[bool]:
    """`asked_form` of each candidate of the parsed sentence `doc` (as `candidate_features` reads it)."""
    return asked_form(_SentenceReading(doc), candidates, context)


class SpanModelError(ValueError):
    """A span model file that cannot be used; the message says why."""


class RatedCandidate(NamedTuple):
    """A candidate with the span model's `probability` that it is right, the ranker's score (`rank`, None for a
    model without a ranker: the probability orders the candidates) and whether the question's form lets it answer
    (`eligible`: `asked_form`)."""

    probability: float
    candidate: Candidate
    rank: float | None = None
    eligible: bool = True

    @property
    def order(self) -> float:
        """The score the candidates are ranked by."""
        return self.probability if self.rank is None else self.rank


@dataclass(frozen=True)
class SpanModel(logistic_model.LogisticModel):
    """A fitted logistic model: `probability(features)` that a candidate span is a right short answer (an absent
    feature reads as 0); with a `rank` model (a ranker over a part's candidates), that one orders the candidates and
    chooses the pick, this one still gives its probability."""

    rank: SpanModel | None = None

    WHAT = "span model"
    VERSION = MODEL_VERSION
    KNOWN = FEATURES
    ERROR = SpanModelError
    DEFAULT_PATH = DEFAULT_MODEL_PATH

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SpanModel:
        """The model a file holds; `SpanModelError` (one sentence) when it is not one this code can use, also when
        its `switch_margin` is not a number from 0 to 1 (read when a part's span is chosen, it must fail here)."""
        margin = data.get("switch_margin", 0.0)
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0.0 <= margin <= 1.0:
            raise SpanModelError(f"the span model's switch_margin is {margin!r}, not a number from 0 to 1")
        given = data.get("version")
        # `true` equals 1 to Python but is no version: it is read as an unknown one and refused.
        version = given if not isinstance(given, bool) and given in READ_VERSIONS else MODEL_VERSION
        read = logistic_model.read_logistic(data, cls.WHAT, version, cls.KNOWN, cls.ERROR, cls.NUMBERS)
        meta = dict(read.meta)
        rank = meta.pop("rank", None)
        if rank is not None and (version == 1 or not isinstance(rank, Mapping)):
            raise SpanModelError(f"the span model's rank is {type(rank).__name__}, not a ranker of a version 2 file")
        ranker = None
        if rank is not None:
            rank_read = logistic_model.read_logistic(
                {**rank, "version": version}, "span model's ranker", version, cls.KNOWN, cls.ERROR, cls.NUMBERS
            )
            rank_meta = {key: value for key, value in rank_read.meta.items() if key != "version"}
            ranker = cls(rank_read.features, *rank_read.columns, meta=rank_meta, **rank_read.numbers)
        return cls(read.features, *read.columns, meta=meta, rank=ranker, **read.numbers)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if self.rank is not None:
            data["rank"] = self.rank.to_dict()
        return data

    @property
    def switch_margin(self) -> float:
        """How far the model's pick must lead the rules' span in probability to replace it ("switch"; fitted on the
        tune half by `research fit spans`); a file without one switches on any lead."""
        return float(self.meta.get("switch_margin", 0.0))

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """`probability` of each row: the same numbers, summed term by term in the model's feature order as
        `probability` sums them (`cumsum` adds in order, so the sums are bit for bit the same), with numpy over all
        the rows at once instead of a loop per row."""
        if not rows:
            return []
        coef, mean, scale, pick = self._columns
        try:
            matrix = numpy.array([pick(row) for row in rows], dtype=float).reshape(len(rows), len(self.features))
        except KeyError:  # a row without some feature: it reads as 0
            matrix = numpy.array([[row.get(name, 0.0) for name in self.features] for row in rows], dtype=float)
        terms_ = coef * (matrix - mean) / scale
        z = numpy.cumsum(numpy.column_stack((numpy.full(len(rows), self.intercept), terms_)), axis=1)[:, -1]
        return [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, value)))) for value in z.tolist()]

    def rank_scores(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """The scores that order the rows' candidates: the ranker's probabilities, or without one this model's."""
        return (self.rank or self).probabilities(rows)

    @cached_property
    def _columns(self) -> tuple[Any, Any, Any, Callable[[Mapping[str, float]], Any]]:
        return numpy.array(self.coef), numpy.array(self.mean), numpy.array(self.scale), itemgetter(*self.features)


# How `fit` learns the weights: one candidate at a time ("pointwise", a logistic regression over right and wrong
# candidates), a part's candidates against each other ("pairwise": a logistic regression without intercept on each
# right candidate's features minus each wrong one's of its part, both signs) or all at once ("listwise": a
# conditional logit, the softmax over a part's candidates, fitted on the parts that hold a right one).
OBJECTIVES = ("pointwise", "pairwise", "listwise")


def fit(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[bool],
    features: Sequence[str] = FEATURES,
    c: float = 1.0,
    meta: Mapping[str, Any] | None = None,
    objective: str = "pointwise",
    parts: Sequence[Any] | None = None,
) -> SpanModel:
    """A logistic regression (scikit-learn, standardised features, L2 with strength `1/c`) fitted to candidate
    rows labelled right (True) or wrong; both labels must occur. With a ranking `objective` ("pairwise",
    "listwise"; `parts` names each row's part) the weights rank a part's candidates, and one slope and an intercept
    over their score (a logistic regression of the labels on it) turn them into the same probability a pointwise
    model gives, so the file and the generator read it alike."""
    import numpy as np

    logistic_model.check_labels(rows, labels, "candidate spans")
    if objective not in OBJECTIVES:
        raise ValueError(f"the span model's objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    matrix = np.array([[float(row.get(name, 0.0)) for name in features] for row in rows])
    meta = {"version": MODEL_VERSION, **(meta or {})}
    if objective == "pointwise":
        fitted = logistic_model.fit_standardised(matrix, matrix.mean(axis=0), labels, c, max_iter=2000)
        return SpanModel(tuple(features), *fitted, meta)
    if parts is None or len(parts) != len(rows):
        raise ValueError("a ranking objective needs the part of every row")
    mean, scale = matrix.mean(axis=0), matrix.std(axis=0)
    scale[scale == 0] = 1.0
    standard = (matrix - mean) / scale
    right = np.array(labels, dtype=bool)
    groups = [np.flatnonzero(np.array([part == key for part in parts])) for key in dict.fromkeys(parts)]
    ranked = [index for index in groups if right[index].any() and not right[index].all()]
    if not ranked:
        raise ValueError("a ranking objective needs parts holding both right and wrong candidate spans")
    weights = (_pairwise if objective == "pairwise" else _listwise)(standard, right, ranked, c)
    # The features a part's candidates all share (what the question asks) cannot rank them; they set the level of
    # the probability, beside the ranker's score, so it says how often such a part's pick is right.
    shared = np.flatnonzero([all(np.ptp(standard[index, j]) == 0 for index in groups) for j in range(len(features))])
    coef, intercept = _calibrated(standard, weights, shared, right)
    return SpanModel(
        tuple(features),
        tuple(float(value) for value in mean),
        tuple(float(value) for value in scale),
        tuple(float(value) for value in coef),
        intercept,
        {**meta, "objective": objective},
    )


def _pairwise(standard: Any, right: Any, parts: Sequence[Any], c: float) -> Any:
    """Weights of a logistic regression without intercept on a right candidate's features minus a wrong one's, for
    every such pair within a part, each pair also reversed (labelled wrong)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    differences = np.vstack(
        [standard[i] - standard[index[~right[index]]] for index in parts for i in index[right[index]]]
    )
    pairs = np.vstack([differences, -differences])
    targets = np.r_[np.ones(len(differences), dtype=int), np.zeros(len(differences), dtype=int)]
    return LogisticRegression(C=c, fit_intercept=False, max_iter=4000).fit(pairs, targets).coef_[0]


def _listwise(standard: Any, right: Any, parts: Sequence[Any], c: float) -> Any:
    """Weights of a conditional logit: per part, the softmax of its candidates' scores, whose target shares one
    between the part's right candidates; L2 with strength `1/c`, as scikit-learn's logistic regression weighs it
    (L-BFGS, scipy)."""
    import numpy as np
    from scipy.optimize import minimize
    from scipy.special import logsumexp, softmax

    blocks = [(standard[index], right[index] / right[index].sum()) for index in parts]

    def loss(weights: Any) -> tuple[float, Any]:
        value, gradient = 0.5 * weights @ weights, weights.copy()
        for features, target in blocks:
            scores = features @ weights
            value -= c * (target @ scores - logsumexp(scores))
            gradient += c * features.T @ (softmax(scores) - target)
        return value, gradient

    return minimize(loss, np.zeros(standard.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 3000}).x


def _calibrated(standard: Any, weights: Any, shared: Any, right: Any) -> tuple[Any, float]:
    """The coefficients and intercept of a logistic regression of the labels on the ranker's score and the features
    every part's candidates share (`shared`, columns of `standard`), as weights of the standardised features."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    columns = np.column_stack([standard @ weights, standard[:, shared]])
    model = LogisticRegression(max_iter=2000).fit(columns, right.astype(int))
    coef = model.coef_[0][0] * weights
    coef[shared] += model.coef_[0][1:]
    return coef, float(model.intercept_[0])


def scored_candidates(
    sentence: str, part: QuestionPart, question_terms: frozenset[str], rule_span: str, rule_way: str
) -> tuple[list[Candidate], list[dict[str, float]], list[bool]]:
    """The candidates of one sentence for one part, with their features and whether the question's form lets each
    answer (`asked_form`); the sentence's reading is cached and the part's context read once for both."""
    reading = _reading(sentence)
    candidates = reading.candidates(rule_span)
    context = question_context(part, question_terms)
    rows = _features(reading, candidates, context, rule_span, rule_way)
    return candidates, rows, asked_form(reading, candidates, context)


def rated_candidates(
    sentence: str,
    part: QuestionPart,
    question_terms: frozenset[str],
    rule_span: str,
    rule_way: str,
    model: SpanModel,
) -> list[RatedCandidate]:
    """The sentence's candidates with the model's probability and rank score, the eligible ones under the question's
    form (`asked_form`) first, each best ranked first (the shorter first on a tie)."""
    candidates, rows, eligible = scored_candidates(sentence, part, question_terms, rule_span, rule_way)
    probabilities = model.probabilities(rows)
    ranks = [None] * len(rows) if model.rank is None else model.rank.probabilities(rows)
    rated = [RatedCandidate(*item) for item in zip(probabilities, candidates, ranks, eligible, strict=True)]
    return sorted(rated, key=lambda item: (not item.eligible, -item.order, len(item.candidate.text)))


def _root_label(sentence: str, candidate: Candidate) -> str:
    """The entity label of the candidate's head word ("" for one outside the sentence's parse)."""
    if candidate.start is None:
        return ""
    reading = _reading(sentence)
    return reading.doc[reading.facts(candidate).root].ent_type_


def _choice(sentence: str, rated: Sequence[RatedCandidate], chosen: RatedCandidate, text: str) -> SpanChoice:
    """`chosen` as the span `text`, with its probability and its lead over the best other candidate. When a ranker
    ordered the candidates (its scores are not the probabilities), the probability is the best of the candidates
    holding the same text and the lead is over those holding another."""
    if chosen.rank is not None:
        probability = max(item.probability for item in rated if item.candidate.text == chosen.candidate.text)
        others = [item.probability for item in rated if item.candidate.text != chosen.candidate.text]
    else:
        probability = chosen.probability
        others = [item.probability for item in rated if item is not chosen]
    return SpanChoice(
        text, probability, probability - max(others, default=0.0), _root_label(sentence, chosen.candidate)
    )


def choose_span(sentence: str, rated: Sequence[RatedCandidate]) -> SpanChoice | None:
    """The candidate the model ranks highest among the sentence's `rated_candidates` (None when the sentence
    offers none), with its probability, its lead over the runner-up and its entity label."""
    if not rated:
        return None
    return _choice(sentence, rated, rated[0], rated[0].candidate.text)


def rate_span(rated: Sequence[RatedCandidate]) -> tuple[float, float]:
    """The rules' span as the model sees it among the sentence's `rated_candidates`: its probability of being
    right, and its lead over the best other candidate (negative when the model prefers another)."""
    own = next((item.probability for item in rated if "rule" in item.candidate.sources), 0.0)
    others = [item.probability for item in rated if "rule" not in item.candidate.sources]
    return own, own - max(others, default=0.0)


def switch_span(sentence: str, rule_span: str, rated: Sequence[RatedCandidate], margin: float) -> SpanChoice | None:
    """The model's pick among the sentence's `rated_candidates` when its rank score leads the rules' span's by
    `margin` (the model's `switch_margin`), the rules found none, or the question's form lets the pick answer and not
    the rules' span (`asked_form`), with its probability and lead over the runner-up; otherwise the rules' span, with
    its probability and its lead over the best other candidate (negative when the model prefers another). None
    without candidates."""
    if not rated:
        return None
    own = next((item for item in rated if "rule" in item.candidate.sources), None) if rule_span else None
    best = rated[0]
    if own is None or best is own or best.order - own.order >= margin or (best.eligible and not own.eligible):
        return _choice(sentence, rated, best, best.candidate.text)
    return _choice(sentence, rated, own, rule_span)


# A personal pronoun, and whether the name it stands for may be a person's ("he"), may not ("it") or may be either.
PERSONAL_PRONOUNS = {"it": False, "he": True, "she": True, "they": None}
# The clauses and phrases that modify a noun ("a start-up that made maps", "a studio founded by X", "X, a painter"):
# a name inside one says something of that noun, not of the clause's subject.
NOUN_MODIFIER_DEPS = frozenset({"acl", "relcl", "appos"})


@dataclass(frozen=True)
class PronounDoer:
    """The personal pronoun that does, in the answer sentence, what the question asks the doer of (`pronoun`,
    lower case, e.g. "it"); whether the span chosen sits inside a clause or phrase that modifies another noun
    (`span_in_modifier`: "a start-up founded by Ada Quill"), whether it could stand for the pronoun
    (`span_could_be_it`: it comes before the pronoun, outside such a modifier, and agrees with it), and whether the
    recogniser's label of it cannot agree with the pronoun (`span_disagrees`: "Orvel Labs, where he built ...": an
    organisation is no "he", a person no "it")."""

    pronoun: str
    span_in_modifier: bool
    span_could_be_it: bool
    span_disagrees: bool = False
    at: int = field(default=-1, compare=False)  # the pronoun's token in the sentence


def asks_doer(part_text: str) -> bool:
    """Whether the question asks for the doer of its verb: its wh-word is that verb's subject ("Who bought X?",
    "Which company acquired X?") or the object of its "by" ("By whom was X bought?")."""
    gap = question_gap(part_text)
    return gap is not None and (gap.role == "subject" or (gap.role == "prep" and gap.preposition == "by"))


def _doer_of(verb: Any) -> Any:
    """The doer of `verb`: its active subject or the object of its passive's "by", or the subject of the verb it
    is coordinated with or depends on ("she moved and founded ...", "it decided to buy ..."); None."""
    passive = any(child.dep_ in {"auxpass", "nsubjpass"} for child in verb.children)
    for child in verb.children:
        if child.dep_ in {"nsubj", "csubj"} and not passive:
            return child
        if child.dep_ == "agent":
            return next((grandchild for grandchild in child.children if grandchild.dep_ == "pobj"), None)
    if verb.dep_ in {"conj", "xcomp"} and verb.head.pos_ in {"VERB", "AUX"} and not passive:
        return next((child for child in verb.head.children if child.dep_ == "nsubj"), None)
    return None


def _in_noun_modifier(token: Any, stop: Any) -> bool:
    """Whether `token` sits inside a clause or phrase that modifies a noun, below `stop` (the clause's verb)."""
    for node in [token, *token.ancestors]:
        if node.i == stop.i:
            return False
        if node.dep_ in NOUN_MODIFIER_DEPS and node.head.pos_ in {"NOUN", "PROPN", "PRON"}:
            return True
    return False


def pronoun_doer(sentence: str, part_text: str, question_terms: frozenset[str], span: str) -> PronounDoer | None:
    """When the question asks for the doer of its verb (`asks_doer`) and in `sentence` that doer is a personal
    pronoun ("In 1905 it acquired Quillby, a start-up founded by Ada Quill"), the pronoun and whether the span the
    rules chose could stand for it; None otherwise. The question's verb is the word of the sentence with its stem,
    else, the question's verb being put in other words ("Who purchased Quillby?"), a verb whose object or passive
    subject is a word of the question."""
    if not asks_doer(part_text):
        return None
    gap = question_gap(part_text)
    doc = _reading(sentence).doc
    verbs = [token for token in doc if token.pos_ in {"VERB", "AUX"} and term_of(token) == gap.head]
    if not verbs:
        verbs = [
            token.head
            for token in doc
            if token.dep_ in {"dobj", "nsubjpass"}
            and token.head.pos_ == "VERB"
            and not question_terms.isdisjoint(terms(token.text)[:1])
        ]
    for verb in verbs:
        doer = _doer_of(verb)
        if doer is None or doer.lower_ not in PERSONAL_PRONOUNS:
            continue
        place = _locate(doc, span) if span else None
        inside = place is not None and _in_noun_modifier(doc[place[0] : place[1]].root, verb)
        disagrees = place is not None and not _agrees(doer.lower_, doc[place[0] : place[1]].root.ent_type_)
        before = place is not None and place[1] <= doer.i and not inside
        return PronounDoer(doer.lower_, inside, before and not disagrees, disagrees, doer.i)
    return None


# The recogniser's labels of things that are never a person (a "he" or a "she"); a person is never an "it".
NOT_PERSON_LABELS = frozenset(
    {"ORG", "NORP", "GPE", "LOC", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "LAW", "LANGUAGE"}
)


def _agrees(pronoun: str, label: str) -> bool:
    """Whether a name the recogniser labels `label` ("" for none) may be what `pronoun` stands for."""
    person = PERSONAL_PRONOUNS.get(pronoun)
    if person is None or not label:
        return True
    return label not in NOT_PERSON_LABELS if person else label != "PERSON"


def pronoun_antecedent(
    before: str,
    pronoun: str,
    labels: Sequence[str],
    question_terms: frozenset[str],
    sentence: str = "",
    at: int = -1,
) -> tuple[str, str]:
    """The name `pronoun` most likely stands for, with its entity label: the subject of the main clause of its own
    `sentence` when the pronoun (its token `at`) comes later, in another clause ("Orla Venn taught at Harrow, where
    she founded ..."), else the subject of the sentence `before` it; a subject that is a named entity of one of
    `labels` that agrees with the pronoun ("it": not a person; "he", "she": a person), or for "it" and "they" a
    proper name the recogniser left without a label (its label then ""), and the question does not already name
    it; ("", "") otherwise."""
    if pronoun not in PERSONAL_PRONOUNS:
        return "", ""
    if sentence and at > 0:
        doc = _reading(sentence).doc
        subject = _main_subject(doc)
        if subject is not None and subject.i < at and subject.lower_ not in PERSONAL_PRONOUNS:
            found = _named_subject(doc, subject, pronoun, labels, question_terms)
            if found[0]:
                return found
    if not before:
        return "", ""
    doc = _reading(before).doc
    subject = _main_subject(doc)
    if subject is None:
        return "", ""
    return _named_subject(doc, subject, pronoun, labels, question_terms)


def _main_subject(doc: Any) -> Any:
    """The subject of the sentence's main verb, or None."""
    return next((t for t in doc if t.dep_ in {"nsubj", "nsubjpass"} and t.head.dep_ == "ROOT"), None)


def _named_subject(
    doc: Any, subject: Any, pronoun: str, labels: Sequence[str], question_terms: frozenset[str]
) -> tuple[str, str]:
    """The name `subject` gives, with its label, when it may be what `pronoun` stands for (`pronoun_antecedent`)."""
    person = PERSONAL_PRONOUNS[pronoun]
    entity = next((ent for ent in doc.ents if ent.start <= subject.i < ent.end), None)
    if entity is not None:
        if entity.label_ not in labels or (person is not None and (entity.label_ == "PERSON") != person):
            return "", ""
        found, label = entity.text.strip(" ,;-–"), entity.label_
    else:
        name = [t for t in subject.subtree if t.dep_ == "compound" or t.i == subject.i]
        if person or subject.pos_ != "PROPN" or any(t.pos_ != "PROPN" for t in name):
            return "", ""
        found, label = doc[name[0].i : name[-1].i + 1].text, ""
    if frozenset(terms(found)) <= question_terms:
        return "", ""
    return found, label
