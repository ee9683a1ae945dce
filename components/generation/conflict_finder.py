"""`ConflictFinder`: values the numbered chunks give differently for what the question asks about its subject (a
date, an amount, a count, a place, a person), reported as `conflicts` and said in the answer ("Sources disagree:
2019 [1], 2020 [3].").

Usage:
```python
finder = ConflictFinder()
chunks = [Document(content="Brevik Labs was founded in 2019."), Document(content="Brevik Labs was founded in 2020.")]
finder.run(query="When was Brevik Labs founded?", answer="Brevik Labs was founded in 2019 [1].", documents=chunks)
# {'answer': '... Sources disagree: 2019 [1], 2020 [2].', 'conflicts': [{'attribute': 'founded', ...}]}
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from haystack import Document, component

from components.contracts import RankedDocuments, documents_of
from components.generation.question_analysis import DATE_LABELS, WH_WORDS, analyze_question
from components.resilience.scheduling import async_twin
from components.serialization import InitParameterSerialization
from components.settings import setting_or
from components.text.analyzer import content_words, terms, words
from components.text.dates import MONTH_NAMES, iso_date
from components.text.language import (
    ENTITY_KINDS_BY_LABEL,
    VALUE_LABELS,
    chunk_sentences,
    parse,
    parse_question,
    use_language_pipeline,
)
from components.text.phrases import capitalised_phrases

# What a question's wanted labels are compared as.
AMOUNT_LABELS = frozenset({"MONEY", "CARDINAL", "QUANTITY", "PERCENT"})
NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"})
# A sentence opening on one of these speaks of the subject the sentence before it named.
REFERRING_OPENINGS = frozenset({"it", "its", "the", "they", "their", "he", "she", "his", "her"})
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9}
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)\s*(thousand|million|billion|bn|mn|k|m|b)?\b", re.IGNORECASE)
# A year a value or a sentence names (1500-2199).
YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d|21\d\d)\b")
_DAY = re.compile(r"\b([0-3]?\d)(?:st|nd|rd|th)?\b")
# Parsing is the finder's whole cost (spaCy, ~5 ms a sentence on an idle core): at most this many sentences of one
# document, and in all.
PARSED_PER_DOCUMENT = 1
MAX_PARSED = 4
# A value further than this many words from the asked word belongs to another clause.
MAX_VALUE_DISTANCE = 12
# Two amounts within this relative difference are the same value, rounded ("$40 million" and "$40.2 million").
AMOUNT_TOLERANCE = 0.02


@dataclass(frozen=True)
class _Value:
    text: str
    number: int  # the chunk's [n]
    key: Any  # the comparable form: (year, month, day) for dates, a float for amounts, a set of words for names
    kind: str  # date, amount or name
    when: frozenset[int]  # years the sentence dates the value to (not for dates themselves)
    document: str


def date_key(text: str) -> tuple[int, int | None, int | None] | None:
    """A date value as `(year, month, day)` (month and day None when not named) for comparing two sources' values;
    None without a year."""
    year = YEAR.search(text)
    if year is None:
        return None
    lower = text.lower()
    month = next((index + 1 for index, name in enumerate(MONTH_NAMES) if re.search(rf"\b{name[:3]}", lower)), None)
    day = None
    if month is not None:
        rest = YEAR.sub(" ", text)
        found = _DAY.search(rest)
        day = int(found.group(1)) if found and 1 <= int(found.group(1)) <= 31 else None
    return int(year.group(1)), month, day


def amount_key(text: str) -> float | None:
    """An amount as one number ("$1.2 billion" -> 1.2e9; currency signs ignored); None without a number."""
    found = _NUMBER.search(text.replace("$", " ").replace("€", " ").replace("£", " "))
    if found is None:
        return None
    digits = found.group(1).replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    scale = (found.group(2) or "").lower()
    return value * SCALES.get(scale, 1.0)


def name_key(text: str) -> frozenset[str]:
    """A name as its set of content words, so that word order and small words do not make two values differ."""
    return frozenset(content_words(text))


def _same(a: _Value, b: _Value) -> bool:
    """Whether two values agree: equal up to the coarser precision, rounding, or a shorter form of a name."""
    if a.kind == "date":
        return all(x is None or y is None or x == y for x, y in zip(a.key, b.key, strict=True))
    if a.kind == "amount":
        return abs(a.key - b.key) <= AMOUNT_TOLERANCE * max(abs(a.key), abs(b.key), 1e-9)
    return a.key <= b.key or b.key <= a.key


def _at_other_times(a: _Value, b: _Value) -> bool:
    """Whether both values are dated and never to the same year ("40 million in 2021", "100 million in 2022")."""
    return bool(a.when and b.when and not a.when & b.when)


@component
class ConflictFinder(InitParameterSerialization):
    """Finds where the numbered chunks disagree on the value the question asks for about its subject.

    A value is read from a sentence that names the question's subject (or opens on a pronoun right after a
    sentence that names it) and shares a word with what the question asks ("founded", "raise", "employees") said
    of that subject (its subject, object or agent in spaCy's parse), as the entity the question
    wants (a date for "when", an amount for "how much", a person for "who", a place for "where"). Values that are the
    same up to precision ("2019", "March 2019"), up to rounding, or that their sentences date to different years
    ("raised 40 million in 2021", "raised 100 million in 2022") do not disagree; nor do two values of one chunk.
    The answer gains one sentence citing each side; `conflicts` holds them structured.
    """

    def __init__(self, max_conflicts: int = 3, spacy_model: str | None = None) -> None:
        """
        :param max_conflicts: how many disagreements one answer reports at most (1-10).
        :param spacy_model: the spaCy pipeline whose entities and parses the values are read with; None:
            SPACY_MODEL as it is built.
        """
        if not 1 <= max_conflicts <= 10:
            raise ValueError("max_conflicts must be between 1 and 10")
        self.max_conflicts = int(max_conflicts)
        self.spacy_model = setting_or(spacy_model, "spacy_model")

    def warm_up(self) -> None:
        """Load the language pipeline (once per process)."""
        use_language_pipeline(self.spacy_model)

    @component.output_types(answer=str, conflicts=list[dict])
    def run(self, query: str, answer: str, documents: list[Document] | RankedDocuments | None = None) -> dict[str, Any]:
        """Find the disagreements among `documents` (numbered from 1, as the answer cites them; a list or the
        ranker's `RankedDocuments`).

        :returns: `answer`: the answer, with a "Sources disagree: ..." sentence when there is a disagreement;
            `conflicts`: [{"attribute", "subject", "values": [{"value", "citations", "document_dates"}]}].
        """
        conflicts = find_conflicts(query, documents_of(documents))[: self.max_conflicts]
        for conflict in conflicts:
            answer = f"{answer.rstrip()} {disagreement_sentence(conflict)}".strip()
        return {"answer": answer, "conflicts": conflicts}

    run_async = async_twin(run)


def disagreement_sentence(conflict: dict[str, Any]) -> str:
    """The sentence the answer gains for one conflict: "Sources disagree: 2019 [1], 2020 [3]."."""
    sides = ", ".join(
        f"{side['value']} " + "".join(f"[{number}]" for number in side["citations"]) for side in conflict["values"]
    )
    return f"Sources disagree: {sides}."


def _question_parts(query: str) -> list[tuple[tuple[str, ...], frozenset[str], frozenset[str], str, str]]:
    """For each part of the question that asks for a value: (labels, subject terms, predicate terms, subject,
    attribute words)."""
    analysis = analyze_question(query)
    names = capitalised_phrases(query)
    anchors = frozenset(analysis.anchor_terms)
    # Only a part that asks for a value is read further: without one, the question is not parsed at all.
    if not anchors or not names or not any(part.labels for part in analysis.parts):
        return []
    doc = parse_question(analysis.question)
    attribute_words = [
        token.text
        for token in doc
        if token.pos_ in {"VERB", "NOUN", "ADJ"}
        and token.lower_ not in WH_WORDS
        and not set(terms(token.text)) & anchors
        and terms(token.text)
    ]
    found = []
    for part in analysis.parts:
        if not part.labels:
            continue
        # What is asked of the subject: the part's words, less the subject's, the noun naming the kind of value
        # ("which firm", "what year") and numbers the question itself states ("in 2023").
        focus = set(terms(part.focus)) if part.focus and part.focus != "?" else set()
        predicate = frozenset(term for term in part.terms if not term.isdigit()) - anchors - focus
        words = [word for word in attribute_words if set(terms(word)) & predicate] or [part.kind]
        found.append((part.labels, anchors, predicate, names[0], " ".join(words)))
    return found


def _may_hold(sentence: str, kind: str, anchors: frozenset[str]) -> bool:
    """Whether the sentence can hold a value of `kind` at all: a year for a date, a digit or a scale word for an
    amount, a capitalised word that is not the subject's for a name."""
    if kind == "date":
        return bool(YEAR.search(sentence))
    if kind == "amount":
        return any(character.isdigit() for character in sentence) or bool(set(words(sentence)) & set(SCALES))
    return any(word[:1].isupper() and not set(terms(word)) & anchors for word in sentence.split()[1:])


def _written_values(sentence: str, kind: str, anchors: frozenset[str]) -> set[Any]:
    """The values a sentence may state, read from its characters only: years, numbers, or capitalised words."""
    if kind == "date":
        return set(YEAR.findall(sentence))
    if kind == "amount":
        return {amount_key(match.group(0)) for match in _NUMBER.finditer(sentence.replace(",", ""))}
    words = sentence.split()[1:]
    return {word.strip(".,;:") for word in words if word[:1].isupper() and not set(terms(word)) & anchors}


def _most_asked(found: list[tuple[int, str, str]], predicate: frozenset[str]) -> list[tuple[int, str, str]]:
    """At most `PARSED_PER_DOCUMENT` candidate sentences of each document and `MAX_PARSED` in all, those sharing most
    of the question's asked words first, in their original order."""
    ranked = sorted(range(len(found)), key=lambda index: -len(predicate & set(terms(found[index][2]))))
    kept: list[int] = []
    per_owner: dict[str, int] = {}
    for index in ranked:
        owner = found[index][1]
        if per_owner.get(owner, 0) < PARSED_PER_DOCUMENT and len(kept) < MAX_PARSED:
            kept.append(index)
            per_owner[owner] = per_owner.get(owner, 0) + 1
    return [found[index] for index in sorted(kept)]


def _may_disagree(found: list[tuple[int, str, str]], kind: str, anchors: frozenset[str]) -> bool:
    """Whether two documents' candidate sentences could state different values: at least two documents, and some
    value written in one that another does not write. Parsing is the finder's whole cost; most answers skip it."""
    written: dict[str, set[Any]] = {}
    for _, owner, sentence in found:
        written.setdefault(owner, set()).update(_written_values(sentence, kind, anchors))
    sets = [values for values in written.values() if values]
    return len(sets) > 1 and any(a - b for a in sets for b in sets if a is not b)


def _about_subject(doc: Any, anchors: frozenset[str], predicate: frozenset[str]) -> bool:
    """Whether the words the question asks about are said of its subject in this parsed sentence (see
    `_said_of_subject`)."""
    asked = [token for token in doc if set(terms(token.text)) & predicate]
    return not asked or any(_said_of_subject(token, anchors) for token in asked)


def _said_of_subject(token: Any, anchors: frozenset[str]) -> bool:
    """Whether an asked word is said of the question's subject: the subject (or a pronoun) is the subject, object or
    agent of the word or of the clause it belongs to, not of another clause ("Fennick Rail is based in Fennick and
    supplies Astrel Motors") or a phrase aside ("as a fork of X"). A pronoun stands for the subject in a sentence
    that does not name it (one that speaks of it by the sentence before); where the subject is named, only a
    possessive does ("In its seed round Brevik Labs raised ..."), and "it" is something else ("It was released in
    2023 and runs Brevik code")."""
    pronouns = not anchors <= set(terms(token.doc.text))
    for head in (token, token.head, token.head.head):
        if head.pos_ == "PROPN" and set(terms(head.text)) & anchors:
            return True  # "Brevik Labs, founded in 2019, ..."
        for child in head.children:
            if child.dep_ in _ARGUMENTS:
                words = list(child.subtree)
                standing = any(word.pos_ == "PRON" and (pronouns or word.tag_ == "PRP$") for word in words)
                if standing or anchors & set(terms(" ".join(w.text for w in words))):
                    return True
    return False


def _written_subject(query: str, subject: str) -> str:
    """The subject as the question writes it with the version or number that follows its name ("Brevik OS 3.0"),
    which a sentence must write too ("Brevik OS 2.0" is another release); "" when no number follows the name."""
    found = re.search(rf"\b{re.escape(subject)}\s+v?\d+(?:\.\d+)*\b", query) if subject else None
    return found.group(0) if found else ""


def _writes(text: str, written: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(written)}(?![\w]|\.\d)", text, re.I))


_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "agent", "poss", "attr"})


def _candidates(
    document: Document, number: int, kind: str, anchors: frozenset[str], predicate: frozenset[str], written: str = ""
) -> list[tuple[int, str, str]]:
    """(number, owning document, sentence) for each sentence of the chunk that may state the asked value of the
    subject: read with the shared analyzer's terms only, before any parse. With `written` (the subject with its
    version, `_written_subject`), the sentence, or the one before it that a referring opening speaks of, writes it."""
    text = document.content or ""
    if not anchors <= set(terms(text)) or (written and not _writes(text, written)):
        return []
    meta = document.meta or {}
    owner = str(meta.get("document_id") or meta.get("source_id") or document.id)
    found = []
    previous_terms: set[str] = set()
    previous_writes = False
    for sentence in chunk_sentences(text, meta):
        sentence_terms = set(terms(sentence))
        first = sentence.split(maxsplit=1)[0].lower() if sentence.strip() else ""
        writes = not written or _writes(sentence, written)
        # A sentence opening on "It"/"The company" speaks of the subject only right after a sentence naming it.
        refers = first in REFERRING_OPENINGS and anchors <= previous_terms and previous_writes
        previous_terms, previous_writes = sentence_terms, writes
        if not ((anchors <= sentence_terms and writes) or refers):
            continue
        if predicate and not predicate & sentence_terms:
            continue
        if _may_hold(sentence, kind, anchors):
            found.append((number, owner, sentence))
    return found


def _value(
    doc: Any,
    number: int,
    owner: str,
    kind: str,
    labels: tuple[str, ...],
    anchors: frozenset[str],
    predicate: frozenset[str],
    question: str,
) -> _Value | None:
    """The value a parsed sentence states for what the question asks of its subject, or None."""
    if not _about_subject(doc, anchors, predicate):
        return None
    # A name's label is the recogniser's weakest call on unfamiliar names ("Tarnwick" as a product): any entity
    # label answers a "who" or a "where"; the value nearest to what is asked is taken.
    wanted = set(labels) | (set(ENTITY_KINDS_BY_LABEL) if kind == "name" else set())
    candidates = [
        ent
        for ent in doc.ents
        if ent.label_ in wanted and not set(terms(ent.text)) & anchors and ent.text.lower() not in question
    ]
    if kind == "date":
        candidates = [ent for ent in candidates if date_key(ent.text)]
    if not candidates:
        return None
    # The value nearest to an asked word said of the subject ("raised" in "raised 40 million in 2021"), within a
    # clause's reach of it.
    asked = [token for token in doc if set(terms(token.text)) & predicate]
    if asked:
        asked = [token for token in asked if _said_of_subject(token, anchors)]
        candidates = [
            ent for ent in candidates if min(abs(ent.start - token.i) for token in asked) <= MAX_VALUE_DISTANCE
        ]
        if not candidates:
            return None
    positions = [token.i for token in asked] or [0]
    best = min(candidates, key=lambda ent: min(abs(ent.start - position) for position in positions))
    # The years the sentence dates its value to: any year written outside the value itself.
    sentence = doc.text
    outside = sentence[: best.start_char] + " " + sentence[best.end_char :]
    when = frozenset(int(year) for year in YEAR.findall(outside)) if kind != "date" else frozenset()
    key: Any = date_key(best.text) if kind == "date" else amount_key(best.text) if kind == "amount" else None
    if kind == "name":
        key = name_key(best.text)
    if key is None or (kind == "name" and not key):
        return None
    return _Value(best.text.strip(), number, key, kind, when, owner)


def find_conflicts(query: str, documents: list[Document]) -> list[dict[str, Any]]:
    """The disagreements among `documents` (numbered from 1) on what `query` asks about its subject."""
    conflicts = []
    for labels, anchors, predicate, subject, attribute in _question_parts(query):
        kind = "date" if labels[0] in DATE_LABELS else "amount" if labels[0] in AMOUNT_LABELS else "name"
        written = _written_subject(query, subject)
        found = [
            candidate
            for number, document in enumerate(documents, start=1)
            for candidate in _candidates(document, number, kind, anchors, predicate, written)
        ]
        if not _may_disagree(found, kind, anchors):
            continue  # one document, or the same written values everywhere: nothing to parse
        # The sentences saying most of what is asked, a few per document; parsed through the shared cache, where
        # the answer's own parses of the same sentences already are.
        found = _most_asked(found, predicate)
        docs = [parse(sentence) for _, _, sentence in found]
        values = [
            value
            for (number, owner, _), doc in zip(found, docs, strict=True)
            if (value := _value(doc, number, owner, kind, labels, anchors, predicate, query.lower())) is not None
        ]
        disagreeing = _disagreeing_groups(values)
        if len(disagreeing) < 2:
            continue
        dates = {
            number: str((document.meta or {}).get("source_date") or "")
            for number, document in enumerate(documents, start=1)
        }
        conflicts.append(
            {
                "attribute": attribute,
                "subject": subject,
                "values": [
                    {
                        "value": max((value.text for value in group), key=len),
                        "citations": sorted({value.number for value in group}),
                        "document_dates": sorted({dates[value.number] for value in group if dates[value.number]}),
                    }
                    for group in disagreeing
                ],
            }
        )
    return conflicts


def _disagreeing_groups(values: list[_Value]) -> list[list[_Value]]:
    """The values grouped by sameness (each joins the first group all of whose members it equals), keeping the
    groups that disagree with another group: two or more of them are a conflict."""
    groups: list[list[_Value]] = []
    for value in values:
        group = next((group for group in groups if all(_same(value, other) for other in group)), None)
        if group is None:
            groups.append([value])
        else:
            group.append(value)
    return [
        group
        for group in groups
        if any(_disagree(a, b) for other in groups if other is not group for a in group for b in other)
    ]


def _disagree(a: _Value, b: _Value) -> bool:
    return a.number != b.number and a.document != b.document and not _same(a, b) and not _at_other_times(a, b)


def _event_key(sentence: str) -> tuple[str, frozenset[str], frozenset[str], str] | None:
    """What a dated fact says happened, apart from when: the lemma of the verb its date belongs to, that verb's
    object, and the sentence's other values (amounts, counts); then the verb as written. None when the sentence has
    no dated verb."""
    doc = parse(sentence)
    dates = [ent for ent in doc.ents if ent.label_ in DATE_LABELS and YEAR.search(ent.text)]
    if not dates:
        return None
    verb = dates[0].root
    while verb.pos_ not in {"VERB", "AUX"} and verb.head.i != verb.i:  # spaCy makes a new Token per access
        verb = verb.head
    if verb.pos_ not in {"VERB", "AUX"}:
        return None
    objects = frozenset(
        term
        for child in verb.children
        if child.dep_ in {"dobj", "attr"}
        for term in terms(" ".join(word.text for word in child.subtree))
    )
    values = frozenset(
        ent.text.lower() for ent in doc.ents if ent.label_ in VALUE_LABELS and ent.label_ not in DATE_LABELS
    )
    return verb.lemma_.lower(), objects, values, verb.text.lower()


def _suspects(facts: list[dict[str, Any]], entity: str) -> set[int]:
    """Positions (1-based) of the dated facts worth a parse: those sharing a word (besides years) with a fact of
    another document dated to another year. Most timelines have none, and parsing is the whole cost."""
    read = []
    for position, fact in enumerate(facts, start=1):
        years = set(YEAR.findall(str(fact.get("valid_at") or "")))
        if years:
            words = {term for term in terms(str(fact.get("fact") or "")) if not term.isdigit()}
            read.append((position, str(fact.get("document_id") or position), years, words))
    # The entity's own name is in every fact: it says nothing of what happened.
    read = [(position, owner, years, words - set(terms(entity))) for position, owner, years, words in read]
    found: set[int] = set()
    for index, (position, owner, years, words) in enumerate(read):
        for other, other_owner, other_years, other_words in read[index + 1 :]:
            if owner != other_owner and years != other_years and words & other_words:
                found.update((position, other))
    return found


def timeline_conflicts(facts: list[dict[str, Any]], entity: str = "") -> list[dict[str, Any]]:
    """Where an entity's dated facts (the timeline's contract dicts: `fact`, `valid_at`, `document_id`,
    `document_title`) date the same event differently: the same verb, object and values, in different documents,
    at dates that differ beyond their precision. Each conflict names the event and the facts' positions (1-based)
    on each side. `entity` (the timeline's entity) keeps its name's words from counting as a shared event."""
    by_event: dict[tuple[str, frozenset[str], frozenset[str]], list[tuple[int, dict[str, Any]]]] = {}
    verbs: dict[tuple[str, frozenset[str], frozenset[str]], str] = {}
    suspects = _suspects(facts, entity)
    for position, fact in enumerate(facts, start=1):
        found = _event_key(str(fact.get("fact") or "")) if position in suspects else None
        if found is not None:
            by_event.setdefault(found[:3], []).append((position, fact))
            verbs.setdefault(found[:3], found[3])
    conflicts = []
    for key, items in by_event.items():
        event = verbs[key]
        values = []
        for position, fact in items:
            # A fact the text does not date carries its document's date, which says nothing of the event's.
            found = None if fact.get("undated") else iso_date(str(fact["valid_at"]))
            if found is None:
                continue
            day, precision = found
            key = (day.year, day.month if precision != "year" else None, day.day if precision == "day" else None)
            owner = str(fact.get("document_id") or fact.get("document_title") or position)
            values.append(_Value(str(fact["valid_at"]), position, key, "date", frozenset(), owner))
        disagreeing = _disagreeing_groups(values)
        if len(disagreeing) > 1:
            conflicts.append(
                {
                    "attribute": event,
                    "subject": "",
                    "values": [
                        {
                            "value": max((value.text for value in group), key=len),
                            "citations": sorted({value.number for value in group}),
                            "document_dates": [],
                        }
                        for group in disagreeing
                    ],
                }
            )
    return conflicts
