"""A document's layout as the graph extractor reads it: its sentences, headings, sections and code.

`read_document` analyses a document line by line (`components.text.language`) into `Sentence`s, leaving out code
blocks, and finds its title and date. The rest reads a sentence's place in the text: a heading (`is_heading`, a
Markdown one that opens a part of the text: `opens_section`), a line in title case whose capitalised words the prose
does not write as names (`title_case`, `prose_capitalised`, `headline_cut`), the section ingestion found each
sentence in (`sentence_sections`, compared by `line_key`), and code identifiers that are never names
(`looks_like_code`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from components.text.language import analyse_text, lexicon_noun, read_in_lower_case


@dataclass
class Sentence:
    """A sentence of a document: where it starts in the document's text, and its spaCy span."""

    offset: int
    span: Any

    @property
    def text(self) -> str:
        return self.span.text.strip()


_FENCE = re.compile(r"^\s*(```|~~~)")


def read_document(document: Any, chunks: list[Any]) -> tuple[str, list[Sentence], str, dt.date | None]:
    """A document's id, its prose sentences once each (a heading repeating the title is one of them; code, fenced or
    indented, out) from its text (its chunks joined in order when it keeps none), its title and its date (a
    date-time's day). The sentences are the shared analysis's."""
    text = getattr(document, "text", "") or "\n".join(c.text for c in sorted(chunks, key=lambda c: c.chunk_index))
    kept: list[Sentence] = []
    seen: set[str] = set()
    in_fence = False
    for offset, doc in analyse_text(text):
        if _FENCE.match(doc.text):
            in_fence = not in_fence
            continue
        if in_fence or doc.text.startswith(("    ", "\t")):
            continue
        for span in doc.sents:
            sentence = Sentence(offset + span.start_char, span)
            key = line_key(sentence.text)
            if key and key not in seen:
                seen.add(key)
                kept.append(sentence)
    anchor = getattr(document, "date", None)
    anchor = anchor.date() if isinstance(anchor, dt.datetime) else anchor
    return str(document.document_id), kept, getattr(document, "title", "") or "", anchor


# Code identifiers and setting names: underscores, dotted names ("CamelCase.method"), calls, paths, file suffixes.
_CODE_NAME = re.compile(r"_|\w\.\w|\(\)|/|=|\.(py|js|ts|rs|md|json|yaml|yml|toml)$")
# An abbreviation with a period after every letter or letter pair, one of them a capital ("U.S.", "S.A.", "S.p.A.",
# "J.R.R.", "Ph.D."), is written prose, not a dotted identifier: it is set aside before `_CODE_NAME` looks.
_INITIALISM = re.compile(r"(?<![\w.])(?=[^\s]*[A-Z])(?:[^\W\d_]{1,2}\.){2,}(?!\w)")


def looks_like_code(span: Any) -> bool:
    text = span.text
    if _CODE_NAME.search(_INITIALISM.sub(" ", text)):
        return True
    doc = span.doc
    before = doc[span.start - 1].text if span.start > 0 else ""
    after = doc[span.end].text if span.end < len(doc) else ""
    if not ("`" in before or "`" in after or "`" in text):
        return False
    # Backticks closed by two apostrophes are quotation marks (``Skylark''), not code. (Read only near a backtick:
    # a Doc's text is joined anew from its tokens on every read.)
    quoted = "``" in doc.text and "''" in doc[span.start :].text
    return not quoted


def first_word(span: Any) -> int:
    """The index of a sentence's first word (after opening quotes, bullets and heading marks)."""
    return next((t.i for t in span if t.is_alpha or t.like_num), span.start)


def is_heading(sentence: Sentence) -> bool:
    """A heading: a Markdown heading, or a short line without a sentence's closing punctuation ("Final Standings")."""
    text = sentence.text
    words = [t for t in sentence.span if t.is_alpha]
    closed = text.endswith((".", "!", "?", ":", ";"))
    return text.startswith("#") or ("\n" not in text and len(words) <= 8 and not closed)


def opens_section(sentence: Sentence) -> bool:
    """A Markdown heading ("## Later years"): it opens another part of the text. (A short line without closing
    punctuation, which `is_heading` also reads as one, is as often a signature or a quotation's end in news.)"""
    return sentence.text.startswith("#")


def title_case(sentence: Sentence) -> bool:
    """A line written in title case ("Vellner Wins Second Term", "Final Standings", a table's rows run into one line:
    "Standings Team Played Won Points Varnholm Rovers 12 9 28"): every word of four letters or more capitalised,
    verbs and common nouns too, and no sentence's closing punctuation; or a line of two words or more all in
    capitals, closed or not (a wire headline). The recogniser reads such a line's capitalised
    words as names. (A Markdown heading is the writer's own heading, its names written as names.)"""
    text = sentence.text
    if text.startswith("#"):
        return False
    words = [t for t in sentence.span if t.is_alpha and len(t) >= 2]
    if len(words) >= 2 and all(t.is_upper for t in words):
        return True  # a line in capitals ("SOCCER - OSTBY HOLD DALBY ."), whatever closes it
    if text.endswith((".", "!", "?")):
        return False
    long = [t for t in sentence.span if t.is_alpha and len(t) >= 4]
    return len(long) >= 1 and all(t.text[0].isupper() for t in long)


def prose_capitalised(sentences: list[Sentence]) -> set[str]:
    """The words the document's prose (not its headings) writes capitalised as names: mid-sentence, or opening a
    sentence where the tagger reads a proper noun ("Quillon said ...")."""
    found = set()
    for sentence in sentences:
        if is_heading(sentence) or title_case(sentence):
            continue
        first = first_word(sentence.span)
        for token in sentence.span:
            if token.is_alpha and token.text[0].isupper() and (token.i > first or token.pos_ == "PROPN"):
                found.add(token.lower_)
    return found


def headline_cut(span: Any, known: set[str]) -> list[Any]:
    """The names a name read in a title-case heading holds: its runs of the words the prose writes as names, without
    the capitalised words around and between them that it never does ("Vellner Wins" is Vellner when the prose
    writes "Vellner" as a name and never "Wins"; "TASKER HITS CENTURY AS RIDGEMONT" is Tasker and Ridgemont;
    "Second Term", "Standings": none left). In a title-case line every word is capitalised, so only the prose tells
    a name's words from the headline's common words. A line of names the prose never writes loses them too; a
    small word inside a run ("of", "for", "and", "the", "&", a hyphen) stays when the words around it are kept."""
    doc = span.doc
    runs: list[Any] = []
    start = None
    for index in range(span.start, span.end + 1):
        token = doc[index] if index < span.end else None
        kept = token is not None and (not token.is_alpha or token.lower_ in known)
        joiner = token is not None and token.lower_ in _INNER_WORDS and start is not None
        if kept or joiner:
            start = index if start is None else start
            continue
        if start is not None:
            end = index
            while end > start and (doc[end - 1].lower_ in _INNER_WORDS or not doc[end - 1].is_alpha):
                end -= 1
            while start < end and not doc[start].is_alpha:
                start += 1
            if end > start:
                runs.append(doc[start:end])
        start = None
    return runs


_INNER_WORDS = {"of", "for", "and", "the", "&", "-", "de", "du", "van", "von"}


def prose_common_nouns(sentences: list[Sentence]) -> set[str]:
    """The words the document's prose writes in lower case as common nouns ("the Norwegian composer")."""
    return {
        token.lower_
        for sentence in sentences
        if not is_heading(sentence) and not title_case(sentence)
        for token in sentence.span
        if token.pos_ == "NOUN" and token.is_alpha and token.is_lower
    }


def opening_noun_cut(span: Any, sentence: Any, nouns: set[str]) -> Any:
    """A person's name the recogniser ran back to its sentence's first word, without that word when the document
    writes it elsewhere as a common noun ("Composer Halvard Strand dies at 88" beside "the Norwegian composer" names
    Halvard Strand) or when it is a description before the name (`described_before`: "Striker Tomas Reinholt put
    Rovana ahead"). Only where a name of two words or more is left, so that a one-word name ("Will Smith"'s "Smith")
    never stands for the whole."""
    cut = len(span) >= 3 and span.start == first_word(sentence) and span[1].is_title
    return span[1:] if cut and (span[0].lower_ in nouns or described_before(span, sentence)) else span


def described_before(span: Any, sentence: Any) -> bool:
    """True when a name's first word is a description set before it, as news writes a role before a name
    ("Striker Tomas Reinholt", "Spinner Omar Haidari"): the language's lexicon knows the word as a common noun and
    not the next one, and the tagger reads the word as a common noun once it is written in lower case. A first name
    that is also a word stays, for the next word is a word too ("Victor Hugo Lopez") or the tagger reads it as a
    name or another part of speech ("Mary Ann Evans", "Rose Marie Smith", "Grant Ellis Morgan")."""
    first, second = span[0], span[1]
    if not (first.is_alpha and lexicon_noun(first.text) and not lexicon_noun(second.text)):
        return False
    return read_in_lower_case(sentence.text, first.idx - sentence.start_char) == "NOUN"


def capitalised_uses(sentences: list[Sentence]) -> Counter:
    """How often the document's prose writes each word capitalised mid-sentence (`(word, "mid")`), and as a name of
    its own, capitalised with no capitalised word beside it (`(word, "alone")`: "Quarro had warned", "Quarro's"; not
    the "Air" of "Air Orsk" nor the "Airlines" of "Orsk Airlines"): what tells a name's own first word from a
    description written before it."""
    counts: Counter = Counter()
    prose = [sentence for sentence in sentences if not is_heading(sentence)]
    lower = {token.text for sentence in prose for token in sentence.span if token.is_alpha and token.is_lower}
    for sentence in prose:
        first = first_word(sentence.span)
        tokens = list(sentence.span)
        for position, token in enumerate(tokens):
            if not (token.is_alpha and token.text[0].isupper()):
                continue
            if token.i > first:
                counts[(token.lower_, "mid")] += 1
            beside = [tokens[p] for p in (position - 1, position + 1) if 0 <= p < len(tokens)]
            # A sentence's first word is capitalised anyway: it is a name when the text never writes it in lower case
            # ("Pelvane, which was founded ..."; not "Air traffic rose" beside "by air").
            named = token.i > first or token.lower_ not in lower
            if named and not any(other.is_alpha and other.text[0].isupper() for other in beside):
                counts[(token.lower_, "alone")] += 1
    return counts


def opening_description_cut(span: Any, sentence: Any, uses: Counter) -> Any:
    """An organisation's or a thing's name the recogniser ran back to its sentence's first word, without that word
    when the text never capitalises it mid-sentence and writes the next word as a name of its own elsewhere:
    "Retailer Quarro Stores filed ..." beside "Quarro had warned ...", "Carmaker Tessaly Motors" beside "Tessaly
    sold ...". A word the text capitalises mid-sentence ("Northern" of "shares of Northern Orsk Mining") stays, and so
    does one whose next word is only ever part of longer names ("Korean Air" beside "Air Orsk")."""
    if len(span) < 2 or span.start != first_word(sentence) or not span[1].is_title:
        return span
    opener, name = span[0].lower_, span[1].lower_
    return span[1:] if uses[(name, "alone")] and not uses[(opener, "mid")] else span


def line_key(text: str) -> str:
    """A line as headings, section titles and repeated lines compare: without Markdown marks, case and spacing."""
    return " ".join(text.lstrip("#> ").lower().split())


def sentence_sections(sentences: list[Sentence], chunks: list[Any]) -> list[Any]:
    """Each sentence's section as ingestion found it: the `section_title` of the chunk whose character offsets hold
    it (None where chunks carry no offsets)."""
    bounds = []
    for chunk in chunks:
        meta = getattr(chunk, "metadata", None) or {}
        start, end = meta.get("char_start"), meta.get("char_end")
        if start is not None and end is not None:
            bounds.append((start, end, meta.get("section_title")))
    return [next((key for start, end, key in bounds if start <= s.offset < end), None) for s in sentences]
