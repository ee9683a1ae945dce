"""Entity and dated-fact extraction at ingestion: the extractor interface and the offline rule-based extractor.

The rule-based extractor needs no model: sentences are split with regular expressions, names are runs of
capitalised (or camel-case "iPhone") words, kinds come from titles, designators and context words, and names are
merged within a document by a gazetteer built from the document itself (a person's surname or first name, an
acronym in parentheses, "he"/"she" and "the company" to the last person or organisation named). Every sentence
that names an entity becomes a fact dated by `components.graph.dates`.
"""

from __future__ import annotations

import datetime as dt
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from components.graph.dates import FuzzyDate, find_dates, sentence_validity
from components.graph.model import (
    DESIGNATORS,
    ENTITY_KINDS,
    DocumentGraph,
    EntityMention,
    Fact,
    fact_uuid,
    normalise_name,
)
from components.text.analyzer import ABBREVIATIONS

ENTITY_KINDS_TEXT = " | ".join(ENTITY_KINDS)


class GraphExtractor(ABC):
    """Turns one document and its chunks into entities and dated facts; never downloads anything."""

    name: str = "extractor"

    @abstractmethod
    def extract(
        self, document: Any, chunks: list[Any], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> DocumentGraph:
        """The graph of `document` (a `DocumentRecord`) whose `chunks` (`ChunkRecord`s) are already split.

        `known_names(keys)` answers which of some normalised names the graph already holds (the corpus's own
        gazetteer), so a name that only opens sentences in this document is still recognised.
        """

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.name}


# --- sentences ------------------------------------------------------------------------------------------------

_BOUNDARY_RE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[tuple[int, str]]:
    """(character offset, sentence) pairs: lines first, then sentence ends not after an abbreviation or initial."""
    sentences: list[tuple[int, str]] = []
    for line_match in re.finditer(r"[^\n]+", text):
        line, base = line_match.group(), line_match.start()
        start = 0
        for boundary in _BOUNDARY_RE.finditer(line):
            before = line[start : boundary.start()].rstrip("\"'”’)] ")
            last_word = before.rsplit(None, 1)[-1].lower().rstrip(".") if before.split() else ""
            if last_word in ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
                continue
            if last_word == "no" and line[boundary.end():boundary.end() + 1].isdigit():
                continue  # "No. 1"
            piece = line[start : boundary.start() + len(boundary.group().rstrip())].strip()
            if piece:
                sentences.append((base + start, piece))
            start = boundary.end()
        piece = line[start:].strip()
        if piece:
            sentences.append((base + start, piece))
    return sentences


# --- names ----------------------------------------------------------------------------------------------------

_CAP = r"(?:[A-Z][\w&'’.-]*[\w&]|[A-Z]\.?|[a-z]{1,2}[A-Z][\w-]*)"
_TAIL = r"(?:(?!(?:1[5-9]\d\d|20\d\d)\b)\d[\w.]*|[IVX]{1,4}\b)"
_CONNECTOR = r"(?:of|for|de|du|des|del|da|von|van|der|den|la|le|&)"
_NAME_RE = re.compile(rf"(?<![\w'’-]){_CAP}(?:\s+(?:{_CAP}|{_TAIL})|\s+{_CONNECTOR}\s+(?:the\s+)?{_CAP})*")

_TITLES = {
    "mr",
    "mrs",
    "ms",
    "miss",
    "dr",
    "sir",
    "dame",
    "lord",
    "lady",
    "prof",
    "professor",
    "president",
    "ceo",
    "cfo",
    "coo",
    "cto",
    "chairman",
    "chairwoman",
    "chair",
    "judge",
    "justice",
    "senator",
    "sen",
    "governor",
    "gov",
    "mayor",
    "minister",
    "secretary",
    "king",
    "queen",
    "prince",
    "princess",
    "pope",
    "general",
    "gen",
    "captain",
    "commissioner",
    "director",
    "chief",
    "executive",
    "officer",
    "founder",
    "co-founder",
    "rep",
    "representative",
    "chancellor",
    "prime",
    "vice",
    "saint",
    "st",
    "presiding",
    "former",
    "late",
}
# Words that go with a title but do not make one: "former Microsoft" is not a person.
_TITLE_MODIFIERS = {"former", "late", "vice", "prime", "chief", "executive", "presiding", "then", "acting", "deputy"}
_STOP = {
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "he",
    "she",
    "they",
    "we",
    "i",
    "you",
    "his",
    "her",
    "their",
    "our",
    "my",
    "your",
    "in",
    "on",
    "at",
    "of",
    "for",
    "to",
    "from",
    "by",
    "with",
    "as",
    "and",
    "but",
    "or",
    "if",
    "when",
    "while",
    "after",
    "before",
    "since",
    "until",
    "during",
    "although",
    "though",
    "because",
    "however",
    "meanwhile",
    "moreover",
    "also",
    "then",
    "there",
    "here",
    "so",
    "yet",
    "still",
    "both",
    "all",
    "some",
    "many",
    "most",
    "such",
    "other",
    "another",
    "each",
    "every",
    "no",
    "not",
    "one",
    "two",
    "new",
    "according",
    "today",
    "yesterday",
    "tomorrow",
    "tonight",
    "last",
    "next",
    "earlier",
    "later",
    "now",
    "what",
    "who",
    "which",
    "where",
    "why",
    "how",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "is",
    "was",
    "are",
    "were",
    "will",
    "would",
    "should",
    "could",
    "can",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "be",
    "been",
    "said",
    "says",
    "we're",
    "it's",
    "mid",
    "early",
    "late",
    "about",
    "over",
    "under",
    "more",
    "less",
    "than",
    "only",
    "even",
    "just",
    "like",
    "through",
    "into",
    "onto",
    "out",
    "up",
    "down",
    "off",
    "via",
    "per",
    "within",
    "without",
    "among",
    "between",
    "despite",
    "unlike",
    "following",
    "including",
    "once",
    "whether",
    "where's",
    "let",
    "let's",
    "yes",
    "oh",
}
_ORG_WORDS = {
    "inc",
    "corp",
    "corporation",
    "corps",
    "company",
    "co",
    "ltd",
    "llc",
    "plc",
    "gmbh",
    "ag",
    "group",
    "holdings",
    "bank",
    "university",
    "college",
    "school",
    "institute",
    "commission",
    "committee",
    "council",
    "agency",
    "association",
    "federation",
    "union",
    "party",
    "ministry",
    "department",
    "court",
    "foundation",
    "labs",
    "laboratories",
    "studios",
    "records",
    "network",
    "networks",
    "times",
    "news",
    "post",
    "journal",
    "press",
    "computer",
    "computers",
    "systems",
    "technologies",
    "motors",
    "airlines",
    "airways",
    "partners",
    "fund",
    "office",
    "board",
    "authority",
    "administration",
    "service",
    "services",
    "society",
    "club",
    "team",
    "police",
    "army",
    "navy",
    "government",
    "parliament",
    "congress",
    "senate",
    "organization",
    "organisation",
}
_EVENT_WORDS = {
    "conference",
    "summit",
    "expo",
    "exhibition",
    "war",
    "olympics",
    "games",
    "championship",
    "championships",
    "festival",
    "election",
    "elections",
    "awards",
    "cup",
    "convention",
    "forum",
    "show",
    "fair",
    "revolution",
    "crisis",
    "hurricane",
    "earthquake",
    "congress",
    "tournament",
    "marathon",
    "keynote",
}
_PLACE_CUES = {"in", "at", "near", "from", "across", "throughout", "outside", "inside", "to"}
_PERSON_PRONOUNS = re.compile(r"\b(he|she|him|his|her|hers|himself|herself)\b", re.I)
_ORG_REFERENCE = re.compile(
    r"\bthe\s+(company|firm|corporation|group|organi[sz]ation|manufacturer|maker|label)\b", re.I
)
_PRODUCT_REFERENCE = re.compile(
    r"^(?:it|its|the\s+(?:device|phone|product|player|software|service|store|system))\b", re.I
)
_DATE_ONLY_RE = re.compile(r"^[\W\d_]*$")
_PAST_RE = re.compile(
    r"\b(was|were|had|did|said|told|made|took|gave|went|came|began|showed|held|won|lost|led|left|met|sold|bought|"
    r"[a-z]{2,}ed)\b",
    re.I,
)
_FUTURE_WORDS = re.compile(r"\b(will|shall|going to|plans? to|expected to|slated)\b", re.I)
_SPEECH_AFTER = re.compile(r"^\s*,?\s*(said|says|told|stated|added|explained|wrote|argued|claimed)\b", re.I)
_SPEECH_BEFORE = re.compile(r"\b(said|says|told|according to)\s*$", re.I)


@dataclass
class _Span:
    start: int
    end: int
    text: str
    kind_hint: str | None = None


@dataclass
class _DocEntity:
    key: str
    names: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    aliases: set[str] = field(default_factory=set)

    def best_name(self) -> str:
        # The full name ("Steve Jobs" over "Jobs"), then the most used, shortest spelling ("Airbus" over "Airbus SE").
        def rank(item: tuple[str, int]) -> tuple[int, int, int]:
            return len(normalise_name(item[0]).split()), item[1], -len(item[0])

        return max(self.names.items(), key=rank)[0]

    def kind(self) -> str:
        for kind in ("event", "person", "product", "organization", "place"):
            if self.kinds.get(kind, 0) and self.kinds[kind] >= max(self.kinds.values()) / 2:
                return kind
        return self.kinds.most_common(1)[0][0] if self.kinds else "other"


def _token_words(text: str) -> list[str]:
    return [word.strip(".,'’").lower() for word in text.split()]


def _trim_span(sentence: str, match: re.Match[str], sentence_start: bool) -> _Span | None:
    words = [(m.start() + match.start(), m.group()) for m in re.finditer(r"\S+", match.group())]
    kind_hint: str | None = None
    # Strip leading function words and titles (which mark a person: "CEO Steve Jobs").
    while words:
        token = words[0][1].strip(".,'’")
        word = token.lower()
        if word in _TITLES - _TITLE_MODIFIERS and len(words) > 1:
            kind_hint = "person"
        elif re.search(r"[A-Z]", token[1:]):
            break  # mixed or upper case ("NeXT", "WHO") is a name, never a function word
        elif word not in _STOP and word not in _TITLE_MODIFIERS:
            break
        words = words[1:]
    while words and (words[0][1][0].isdigit()):
        words = words[1:]
    while (
        words
        and words[-1][1].strip(".,'’").lower() in _STOP | {"&", "de"}
        and not re.search(r"[A-Z]", words[-1][1][1:])
    ):
        words = words[:-1]
    if all(w.strip(".,'’").lower() in _TITLES for _, w in words):
        return None
    if not words:
        return None
    start = words[0][0]
    text = sentence[start : words[-1][0] + len(words[-1][1])].rstrip(".,")
    text = re.sub(r"['’]s?$", "", text).strip()
    if len(text) < 2 or not re.search(r"[A-Za-z]", text):
        return None
    if start > 0:
        # A title just before the name ("CEO Steve Jobs", "Mr Mann") marks a person.
        previous = sentence[:start].split()[-1:] or [""]
        if previous[0].strip(".,").lower() in _TITLES - _TITLE_MODIFIERS:
            kind_hint = kind_hint or "person"
    return _Span(start, start + len(text), text, kind_hint)


class _Part:
    """A piece of a name match, with the `re.Match` methods `_trim_span` uses."""

    def __init__(self, text: str, start: int) -> None:
        self._text, self._start = text, start

    def group(self) -> str:
        return self._text

    def start(self) -> int:
        return self._start


def _split_at_titles(match: re.Match[str]) -> list[Any]:
    """ "Microsoft CEO Bill Gates" -> "Microsoft", "CEO Bill Gates": an inner title starts a new (person) name."""
    tokens = list(re.finditer(r"\S+", match.group()))
    cuts = [
        index
        for index, token in enumerate(tokens)
        if index > 0
        and token.group().strip(".,").lower() in _TITLES
        and token.group()[0].isupper()
        and tokens[index - 1].group().strip(".,").lower() not in _TITLES
    ]
    if not cuts:
        return [match]
    parts = []
    bounds = [0, *cuts, len(tokens)]
    for left, right in zip(bounds, bounds[1:], strict=False):
        begin, end = tokens[left].start(), tokens[right - 1].end()
        parts.append(_Part(match.group()[begin:end], match.start() + begin))
    return parts


def _kind_of(span: _Span, sentence: str) -> str:
    words = _token_words(span.text)
    if any(word in _EVENT_WORDS for word in words):
        return "event"
    if span.kind_hint:
        return span.kind_hint
    if any(word in _ORG_WORDS for word in words[1:]) or words[-1] in _ORG_WORDS or (
        len(words) > 1 and words[-1].replace(".", "") in DESIGNATORS
    ):
        return "organization"
    if re.search(r"\d", span.text) or re.match(r"[a-z]{1,2}[A-Z]", span.text):
        return "product"
    if len(words) == 1 and span.text.isupper() and len(span.text) <= 6:
        return "organization"
    before = sentence[: span.start].split()[-1:] or [""]
    if before[0].lower() in _PLACE_CUES:
        return "place"
    if 2 <= len(words) <= 3 and all(re.fullmatch(r"[A-Z][a-z'’-]+\.?", w) for w in span.text.split()):
        # Two or three capitalised words are a person only when the text treats them as one: "X said", "said X".
        after, before_text = sentence[span.end : span.end + 14], sentence[max(0, span.start - 16) : span.start]
        if _SPEECH_AFTER.match(after) or _SPEECH_BEFORE.search(before_text):
            return "person"
    return "other"


class RuleBasedExtractor(GraphExtractor):
    """Offline entity and dated-fact extraction from capitalisation, context words and the document's own names.

    Usage:
    ```python
    graph = RuleBasedExtractor().extract(document_record, chunk_records)
    [(fact.text, fact.valid_at.iso()) for fact in graph.facts]
    ```
    """

    name = "rules"

    def __init__(self, min_sentence_words: int = 4, resolve_pronouns: bool = True) -> None:
        if min_sentence_words < 1:
            raise ValueError("min_sentence_words must be at least 1")
        self.min_sentence_words = min_sentence_words
        self.resolve_pronouns = resolve_pronouns

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.name,
            "min_sentence_words": self.min_sentence_words,
            "resolve_pronouns": self.resolve_pronouns,
        }

    # -- public -------------------------------------------------------------------------------------------------

    def extract(
        self, document: Any, chunks: list[Any], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> DocumentGraph:
        document_id = str(document.document_id)
        text = getattr(document, "text", "") or "\n".join(
            chunk.text for chunk in sorted(chunks, key=lambda c: c.chunk_index)
        )
        title = getattr(document, "title", "") or ""
        sentences = self._sentences(text, title)
        anchor = getattr(document, "date", None)
        if isinstance(anchor, dt.datetime):
            anchor = anchor.date()
        if anchor is None:
            anchor = self._dateline(text)
        spans_per_sentence = [self._spans(sentence) for _, sentence in sentences]
        entities, span_keys = self._merge(spans_per_sentence, sentences, known_names)
        locate = _ChunkLocator(chunks)

        facts: list[Fact] = []
        previous: FuzzyDate | None = None
        last_person: str | None = None
        last_org: str | None = None
        last_subject: str | None = None
        last_product: str | None = None
        frame: FuzzyDate | None = None
        frame_at = -10
        for index, ((offset, sentence), keys) in enumerate(zip(sentences, span_keys, strict=True)):
            explicit = list(dict.fromkeys(keys))
            linked = list(explicit)
            if self.resolve_pronouns:
                if last_person and last_person not in linked and _PERSON_PRONOUNS.search(sentence):
                    if not any(entities[k].kind() == "person" for k in explicit):
                        linked.append(last_person)
                if last_org and last_org not in linked and _ORG_REFERENCE.search(sentence):
                    linked.append(last_org)
                referent = last_product or last_subject
                if referent and referent not in linked and _PRODUCT_REFERENCE.match(sentence):
                    linked.append(referent)
            for key in explicit:
                kind = entities[key].kind()
                if kind == "person":
                    last_person = key
                elif kind == "organization":
                    last_org = key
                elif kind == "product":
                    last_product = key
            if explicit:
                last_subject = explicit[0]
            if not linked or len(sentence.split()) < self.min_sentence_words:
                continue
            valid, invalid, method, mentions = sentence_validity(sentence, anchor, previous)
            valid, method = self._in_frame(sentence, valid, method, anchor, frame if index - frame_at <= 6 else None)
            for mention in mentions:
                # A day close before the document's date sets the scene the next past-tense sentences happen in.
                if anchor and mention.date.precision == "day" and 0 <= (anchor - mention.date.value).days <= 31:
                    frame, frame_at = mention.date, index
            stated = [m.date for m in mentions if not m.relative]
            if stated:
                previous = stated[-1]
            elif method == "relative" and valid is not None:
                previous = valid
            chunk = locate.find(offset, sentence)
            facts.append(
                Fact(
                    uuid=fact_uuid(document_id, index, sentence),
                    text=sentence,
                    document_id=document_id,
                    sentence_index=index,
                    entity_keys=linked,
                    valid_at=valid,
                    invalid_at=invalid,
                    date_method=method,
                    chunk_id=getattr(chunk, "chunk_id", None) if chunk is not None else None,
                    chunk_index=getattr(chunk, "chunk_index", None) if chunk is not None else None,
                    document_title=title,
                    document_url=getattr(document, "url", None),
                    document_date=anchor,
                    entity_names=[entities[key].best_name() for key in linked],
                )
            )
        used = {key for fact in facts for key in fact.entity_keys}
        mentions = [
            EntityMention(key=key, name=entity.best_name(), kind=entity.kind(), aliases=set(entity.aliases) - {key})
            for key, entity in entities.items()
            if key in used
        ]
        return DocumentGraph(document_id=document_id, entities=mentions, facts=facts)

    # -- steps --------------------------------------------------------------------------------------------------

    def _sentences(self, text: str, title: str) -> list[tuple[int, str]]:
        title_key = normalise_name(title)
        kept: list[tuple[int, str]] = []
        seen: set[str] = set()
        for offset, sentence in split_sentences(text):
            key = " ".join(sentence.lower().split())
            if key in seen or (title_key and len(sentence) <= 2 * len(title) and normalise_name(sentence) == title_key):
                continue
            seen.add(key)
            if len(sentence) <= 40:  # only a short line can be a dateline
                without_dates = sentence
                for mention in reversed(find_dates(sentence, None)):
                    without_dates = without_dates[: mention.start] + without_dates[mention.end :]
                if _DATE_ONLY_RE.match(without_dates):
                    continue
            kept.append((offset, sentence))
        return kept

    @staticmethod
    def _in_frame(
        sentence: str, valid: FuzzyDate | None, method: str, anchor: dt.date | None, frame: FuzzyDate | None
    ) -> tuple[FuzzyDate | None, str]:
        """Undated past-tense news happens on the day the text just named; a bare year or month that is the
        document's own is made as precise as that day (or the document's date)."""
        if anchor is None:
            return valid, method
        if method == "document":
            if frame is not None and _PAST_RE.search(sentence) and not _FUTURE_WORDS.search(sentence):
                return frame, "context"
            return valid, method
        if valid is not None and valid.precision != "day":
            day = frame.value if frame is not None else anchor
            if FuzzyDate(day, "day").agrees_with(valid) and FuzzyDate(anchor, "day").agrees_with(valid):
                return FuzzyDate(day, "day"), method
        return valid, method

    @staticmethod
    def _dateline(text: str) -> dt.date | None:
        for line in text.splitlines()[:4]:
            mentions = find_dates(line, None)
            if len(mentions) == 1 and mentions[0].date.precision == "day":
                rest = line[: mentions[0].start] + line[mentions[0].end :]
                if _DATE_ONLY_RE.match(rest):
                    return mentions[0].date.value
        return None

    @staticmethod
    def _spans(sentence: str) -> list[_Span]:
        spans = []
        for match in _NAME_RE.finditer(sentence):
            parts = _split_at_titles(match)
            for position, part in enumerate(parts):
                span = _trim_span(sentence, part, sentence_start=part.start() <= 1)
                if span is not None:
                    if position < len(parts) - 1 and span.kind_hint is None:
                        span.kind_hint = "organization"  # "Microsoft CEO ...": the employer before a title
                    spans.append(span)
        return spans

    def _merge(
        self,
        spans_per_sentence: list[list[_Span]],
        sentences: list[tuple[int, str]],
        known_names: Callable[[set[str]], set[str]] | None = None,
    ) -> tuple[dict[str, _DocEntity], list[list[str]]]:
        # Words seen capitalised away from a sentence start: the document's own gazetteer of names.
        inner_names: set[str] = set()
        for spans in spans_per_sentence:
            for span in spans:
                if span.start > 1:
                    inner_names.add(normalise_name(span.text))
        # First names and surnames of people the document names in full may open a sentence alone ("Steve said").
        for spans, (_, sentence) in zip(spans_per_sentence, sentences, strict=True):
            for span in spans:
                key = normalise_name(span.text)
                if len(key.split()) >= 2 and _kind_of(span, sentence) == "person":
                    inner_names.update(key.split())
                elif len(key.split()) >= 2:
                    inner_names.add(key.split()[-1])  # a surname alone: "Enders led the company"
        if known_names is not None:
            # Names that only open sentences here: the graph may know them from other documents.
            openers = {
                normalise_name(span.text) for spans in spans_per_sentence for span in spans
                if span.start <= 1 and len(span.text.split()) == 1
            } - inner_names
            if openers:
                inner_names |= known_names(openers)
        entities: dict[str, _DocEntity] = {}
        raw_keys: list[list[tuple[str, _Span]]] = []
        for spans, (_, sentence) in zip(spans_per_sentence, sentences, strict=True):
            row = []
            for span in spans:
                key = normalise_name(span.text)
                if not key or (key in _STOP and not re.search(r"[A-Z]", span.text[1:])):
                    continue
                if span.start <= 1 and len(span.text.split()) == 1 and key not in inner_names and not span.kind_hint:
                    continue  # a capitalised first word, not a name the document uses elsewhere
                entity = entities.setdefault(key, _DocEntity(key))
                entity.names[span.text] += 1
                entity.kinds[_kind_of(span, sentence)] += 1
                row.append((key, span))
            raw_keys.append(row)
        # "Mr Faury" makes "Guillaume Faury" a person: a titled surname names the full name that ends with it.
        titled = {normalise_name(span.text) for spans in spans_per_sentence for span in spans
                  if span.kind_hint == "person" and len(span.text.split()) == 1}
        for key, entity in entities.items():
            if len(key.split()) >= 2 and key.split()[-1] in titled and entity.kind() != "person":
                entity.kinds["person"] += sum(entity.kinds.values())
        # Acronyms in parentheses: "Worldwide Developers Conference (WWDC)".
        redirect: dict[str, str] = {}
        for _, sentence in sentences:
            for match in re.finditer(r"([A-Z][\w&'’.-]*(?:\s+[\w&'’.-]+){1,7})\s*\(([A-Z][A-Za-z&.]{1,9})\)", sentence):
                acronym = normalise_name(match.group(2))
                initials = "".join(w[0] for w in match.group(1).split() if w[0].isupper()).lower()
                if acronym in entities and initials.endswith(acronym):
                    long_key = next(
                        (
                            k
                            for k in entities
                            if initials.endswith("".join(w[0] for w in k.split()))
                            and k != acronym
                            and len(k.split()) == len(acronym)
                        ),
                        None,
                    )
                    if long_key:
                        redirect[acronym] = long_key
        # A person's surname or first name alone is that person when only one person in the document has it.
        persons = [key for key, entity in entities.items() if entity.kind() == "person" and len(key.split()) >= 2]
        # Surnames also name two- or three-word proper names the text gave no title ("Tom Enders" ... "Enders").
        plain = [
            key for key, entity in entities.items()
            if key not in persons and entity.kind() == "other" and 2 <= len(key.split()) <= 3
            and all(re.fullmatch(r"[A-Z][a-z'’-]+", word) for word in entity.best_name().split())
        ]
        for part_index in (-1, 0):
            owners: dict[str, list[str]] = {}
            for key in persons + (plain if part_index == -1 else []):
                owners.setdefault(key.split()[part_index], []).append(key)
            for part, keys in owners.items():
                keys.sort(key=lambda k: -sum(entities[k].names.values()))
                counts = [sum(entities[k].names.values()) for k in keys]
                # An ambiguous first name goes to the document's main person only when they dominate it.
                if len(keys) > 1 and counts[0] < 2 * counts[1]:
                    continue
                if part in entities and part not in persons and part not in plain and part not in redirect:
                    redirect[part] = keys[0]
        for short, long in redirect.items():
            target = entities[long]
            source = entities.pop(short)
            target.names.update({name: 0 for name in source.names})  # keep spellings, not their weight for naming
            target.kinds["person" if target.kind() == "person" else target.kind()] += sum(source.kinds.values())
            target.aliases.add(short)
        for key, entity in entities.items():
            if entity.kind() == "person" and len(key.split()) >= 2:
                entity.aliases.add(key.split()[-1])
        keys_per_sentence = [[redirect.get(key, key) for key, _ in row] for row in raw_keys]
        return entities, keys_per_sentence


class _ChunkLocator:
    """Finds the chunk a sentence came from (chunks overlap; the first that holds it wins)."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = sorted(chunks, key=lambda chunk: chunk.chunk_index)
        self.texts = [" ".join(chunk.text.split()) for chunk in self.chunks]
        self.position = 0

    def find(self, offset: int, sentence: str) -> Any | None:
        if not self.chunks:
            return None
        probe = " ".join(sentence.split())[:60]
        for index in list(range(self.position, len(self.chunks))) + list(range(0, self.position)):
            if probe in self.texts[index]:
                self.position = index
                return self.chunks[index]
        head = probe[:25]
        for index in range(self.position, len(self.chunks)):
            if head in self.texts[index]:
                self.position = index
                return self.chunks[index]
        return self.chunks[self.position]
