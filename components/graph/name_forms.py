"""The forms of a name as the graph extractor reads them: where a name ends, its variants and its short forms.

A name the recogniser read is cut where it runs into another (`split_name`, `split_parenthesis`) or is no name
at all (`fragment`, `sequence_label`, `common_noun`, `title_word`, `a_measure`); designations the recogniser leaves
out are read as model names (`model_names`, `variant_after`); a name's short forms are its surnames
(`surnames`, `without_middle`), its acronyms (`acronyms_of`, `shortened`) and its singular (`singular_name`); the
noun at a name's end may tell its kind (`kind_of_noun`, `named_of_another_kind`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from nameparser import HumanName

from components.graph.kinds import KIND_NOUNS, TITLE_WORDS
from components.graph.model import DESIGNATORS, normalise_name

MODEL = re.compile(r"^[A-Z]{0,3}-?\d{2,5}[A-Z]{0,3}s?$")
# A one-digit designation ("Vexa 4", "Vexa 3XS") is a model only right after the name it designates.
_SHORT_MODEL = re.compile(r"^\d[A-Z]{0,3}$")
NOT_MODELS = {"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "ORDINAL"}
OPENING_QUOTES = {"`", "``", '"', "“", "'"}
CLOSING_QUOTES = {"'", "''", '"', "”"}


def _capitalised(token: Any) -> bool:
    """A word written as a name: "Talmont", "Vexa", "SkyHauler"."""
    return token.is_alpha and any(character.isupper() for character in token.text)


def model_names(sentence: Any) -> list[tuple[Any, int, Any]]:
    """Model designations ("N900", "Talmont 606", "909 Skylark", "909s") as product names, with how many of
    their leading words name the maker (an organisation the recogniser tagged), and the maker's token when the
    text names it as an owner ("Talmont's 909")."""
    found: list[tuple[Any, int, Any]] = []
    doc = sentence.doc
    last_end = sentence.start
    for token in sentence:
        if token.i < last_end or token.ent_type_ in NOT_MODELS:
            continue
        if not MODEL.match(token.text):
            after_name = token.i > sentence.start and doc[token.i - 1].pos_ == "PROPN" and doc[token.i - 1].is_alpha
            if not (_SHORT_MODEL.match(token.text) and after_name and token.head.i == token.i - 1):
                continue
        digits = re.sub(r"\D", "", token.text)
        lettered = bool(re.search(r"[A-Z]", token.text))
        if (
            token.is_digit
            and variant_after(token)
            and doc[token.i + 2].is_digit
            and min(len(token), len(doc[token.i + 2])) == 1
        ):
            continue  # "Ostby 3-1", "Ridgemont 345-5", "Ames 5-40": a number hyphened to a one-digit one is a score
        if not lettered and re.fullmatch(r"(19|20)\d\d", digits):
            continue  # a year
        if not lettered and _beside_a_figure(token, sentence):
            continue  # a figure of a row of figures ("Ostby City 12 8 25"): a table's cell, not a designation
        left = token.i
        while left > sentence.start and doc[left - 1].pos_ == "PROPN" and _capitalised(doc[left - 1]):
            left -= 1
        if not lettered and any(doc[i].ent_type_ == "PERSON" for i in (left, token.i + 1) if i < sentence.end):
            continue  # a person's figure, before or after the name ("Tasker 112", "66 Arvid Lund"): no designation
        counted = token.i + 1 < sentence.end and doc[token.i + 1].tag_ in ("NNS", "NNPS")
        if not lettered and left == token.i and counted:
            continue  # a count: "20 Skylarks" (but "22 Talmont 909 Skylarks" names the model)
        if not lettered and left == token.i and token.i + 1 < sentence.end and doc[token.i + 1].ent_type_ == "ORG":
            continue  # a count of the things of a maker the recogniser read: "60 Nordvik jets"
        right = token.i + 1
        while (
            right < sentence.end
            and doc[right].pos_ in ("PROPN", "NOUN")
            and doc[right].is_title
            and doc[right].ent_type_ not in NOT_MODELS
        ):
            right += 1
        # A nickname in quotation marks right after the designation is part of the name: 909 "Skylark".
        opened = right
        while opened < sentence.end and doc[opened].text in OPENING_QUOTES:
            opened += 1
        if (
            right < opened < sentence.end - 1
            and doc[opened].is_title
            and doc[opened].pos_ in ("PROPN", "NOUN")
            and doc[opened + 1].text in CLOSING_QUOTES
        ):
            right = opened + 2
        # "its 900 engine", "Talmont's 909": a number naming a kind of product, or after its maker's name.
        typed = token.dep_ in ("nummod", "compound") and token.head.lemma_.lower() in KIND_NOUNS["product"]
        owner = token.i >= 2 and doc[token.i - 1].tag_ == "POS" and doc[token.i - 2].ent_type_ == "ORG"
        variant = variant_after(token)
        named = left < token.i or right > token.i + 1 or token.head.is_title or typed or owner or variant
        if not (lettered or named):
            continue
        maker = 0
        while left + maker < token.i and doc[left + maker].ent_type_ == "ORG":
            maker += 1
        found.append((doc[left:right], maker, doc[token.i - 2] if owner and left == token.i else None))
        last_end = right + 2 if variant else right
    return found


def _beside_a_figure(token: Any, sentence: Any) -> bool:
    """True when a bare number stands right beside another bare number in its sentence ("Ostby City 12 8 25", "28
    Dalby United" after "9 28"): a row of figures, as a table reads once its lines are run together."""
    doc = token.doc
    return any(sentence.start <= i < sentence.end and doc[i].is_digit for i in (token.i - 1, token.i + 1))


# A result written after a name: a small bare number or a score ("Varnholm 2", "Ostby 3-1").
_RESULT_FIGURE = re.compile(r"\d{1,3}(?:[-–]\d{1,3})?")
_SCORE = re.compile(r"\d{1,2}[-–]\d{1,2}")
_NOT_RESULTS = {"TIME", "MONEY", "PERCENT", "QUANTITY", "ORDINAL"}


def _figures_after(doc: Any, end: int, stop: int) -> list[str]:
    """The small bare numbers that follow one another right after token `end` (up to `stop`), a score the tokenizer
    split at its dash joined again: a result or a table's row after a name ("Varnholm 2", "Ostby 3-1", "Dalby United
    12 8 25"); none when a word follows the name. A figure the recogniser took into the name or read as a date ("12
    8 25") counts; a part of an amount, a share or a measure does not."""
    figures: list[str] = []
    joined = False
    for token in doc[end:stop]:
        if token.text in _SPACED_DASHES and figures and not joined and not token.whitespace_:
            joined = not doc[token.i - 1].whitespace_
            if joined:
                continue
        if not (_RESULT_FIGURE.fullmatch(token.text) and token.ent_type_ not in _NOT_RESULTS):
            break
        if joined:
            figures[-1] += "-" + token.text
        else:
            figures.append(token.text)
        joined = False
    return figures


def result_after(sentence: Any, end: int, others: Iterable[int]) -> bool:
    """True when the name ending before token `end` has a result after it in its sentence: a score ("Ostby 3-1"), a
    row of figures ("Dalby United 12 8 25"), or a figure where another name of the sentence (ending before the
    tokens `others`) has one too ("Varnholm 2 Ostby 1"). What competes and is scored is most often a team."""
    figures = _figures_after(sentence.doc, end, sentence.end)
    if not figures:
        return False
    if len(figures) >= 2 or _SCORE.fullmatch(figures[0]):
        return True
    return any(_figures_after(sentence.doc, other, sentence.end) for other in others if other != end)


INITIAL = re.compile(r"^[A-Z]\.$")


_SPACED_DASHES = {"-", "–", "—"}
_PLACE_PREPOSITIONS = {"in", "at"}


def after_place_preposition(part: Any, span: Any) -> bool:
    """True when `part` of a recognised `span` follows a lower-case "in" or "at" inside it."""
    return part.start > span.start and part.doc[part.start - 1].text in _PLACE_PREPOSITIONS


_NAMED_KINDS_WITHOUT_NUMBERS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC"}
_NUMBER_PAIR = re.compile(r"^\d{1,3}[-–—]\d{1,3}$")


def _score_at_end(span: Any) -> int:
    """How many tokens at the end of `span`, after at least one word, write a pair of numbers joined by a dash ("2-1",
    "3–0", "102 - 98": a score or a range) or an amount ("4 million"); 0 when it does not end in one."""
    if len(span) >= 2 and _NUMBER_PAIR.match(span[-1].text) and span[-2].is_alpha:
        return 1
    pair = len(span) >= 4 and span[-1].is_digit and span[-2].text in _SPACED_DASHES and span[-3].is_digit
    if pair and span[-4].is_alpha and len(span[-1]) <= 3 and len(span[-3]) <= 3:
        return 3
    # An amount: a figure and its number word ("fined Vell Shipping 4 million", "Orsk 2.5 billion").
    amount = len(span) >= 3 and span[-1].like_num and not span[-1].is_digit and span[-2].like_num
    return 2 if amount and span[-2].text[0].isdigit() and span[-3].is_alpha else 0


def split_name(span: Any, label: str) -> list[Any]:
    """The names a recognised span holds: "A and B" of people or places is two names, and so is "Zentra and Zentra
    Pro" (the second repeats the first's first word); a dash set off by spaces ("Port Ulm - Vexcom") and a
    lower-case "in" or "at" ("Harlow University in Ostby") end a name; a name that runs on past an initial ending a
    sentence ("at Google X. Treuille then ...": only a person's name has a middle initial) stops at the initial; a
    comma the parse reads as a list or an apposition ("Ostvara, Dellmoor") ends a name."""
    doc = span.doc
    # No person's name opens with a number: a leaderboard's "138 Raul Ibarra" is a score before a name.
    if label == "PERSON" and len(span) > 1 and re.fullmatch(r"[\d.,]+", span[0].text):
        return split_name(doc[span.start + 1 : span.end], label)
    score = _score_at_end(span)
    # Any name but a product's ends before a score of two small numbers ("Lindby 3-0", which the recogniser read as
    # a law's name); a pair of larger ones only ends a person's, an organisation's or a place's.
    small = score in (1, 3) and re.fullmatch(r"\d{1,2}[-–—]\d{1,2}", "".join(t.text for t in span[-score:])) is not None
    if score and (label in _NAMED_KINDS_WITHOUT_NUMBERS or (small and label != "PRODUCT")):
        # A score, a range or an amount the recogniser ran the name on into ("Varnholm Rovers 2-1 on Saturday",
        # "Ostby 3–0", "Brevik Shipping 4 million"): the name stops before it.
        return split_name(doc[span.start : span.end - score], label)
    for token in span[1:-1]:
        spaced_dash = token.text in _SPACED_DASHES and token.whitespace_ and doc[token.i - 1].whitespace_
        place = token.text in _PLACE_PREPOSITIONS and label != "PERSON" and doc[token.i + 1].is_title
        if spaced_dash or place:
            left, right = doc[span.start : token.i], doc[token.i + 1 : span.end]
            return [*split_name(left, label), *split_name(right, "GPE" if place else label)]
    # A preposition before the name left without its object ("at Nordvik X. Roe then led": the parser made "Roe"
    # the next clause's subject) shows where the sentence ended, whatever the recogniser's label.
    before = doc[span.start - 1] if span.start > 0 else None
    dangling = before is not None and before.pos_ == "ADP" and not any(c.dep_ == "pobj" for c in before.children)
    for token in span[1:-1]:
        if (label != "PERSON" or dangling) and INITIAL.match(token.text):
            return [doc[span.start : token.i + 1]]
    # A comma ends a name where the parse sets the title-case word after it beside a word of the name before it
    # ("Ostvara, Dellmoor": a list or an apposition the recogniser took as one span), unless that word is a company
    # designator or a generational suffix ("Quillon Network, Inc.", "Tavin Orrell, Jr.") or the span is a whole list
    # with its own "and" ("Servicing, Repair and Overhaul" names one thing).
    if not any(token.dep_ == "cc" for token in span):
        for token in span[1:-1]:
            after = doc[token.i + 1]
            beside = after.dep_ in ("conj", "appos") and span.start <= after.head.i < token.i
            suffix = after.lower_.rstrip(".") in DESIGNATORS | GENERATIONAL
            if token.text == "," and after.is_title and beside and not suffix:
                return [_without_article(doc[span.start : token.i]), *split_name(doc[token.i + 1 : span.end], label)]
    for token in span[1:-1]:
        if token.lower_ == "and" and token.dep_ == "cc":
            # The recogniser may take the article with the names ("the Zentra and Zentra Pro"): the first name
            # starts after it.
            left, right = _without_article(doc[span.start : token.i]), doc[token.i + 1 : span.end]
            repeated = len(right) > len(left) and right[0].lower_ == left[0].lower_
            if left[0].is_title and right[0].is_title and (label in ("PERSON", "GPE", "LOC") or repeated):
                return [left, right]
    return [span]


def _without_article(span: Any) -> Any:
    """`span` without a leading article the recogniser took with a name ("the Zentra" -> "Zentra")."""
    return span[1:] if len(span) > 1 and span[0].lower_ in ("the", "a", "an") else span


def _chars_around(span: Any, width: int = 2) -> tuple[str, str]:
    """The `width` characters of the text before and after `span` (fewer at the text's ends), from the tokens next
    to it: a Doc's `text` is joined anew from all its tokens on every read, which cost a third of the extraction
    when read once per name. Every token holds at least one character, so `width` tokens reach far enough."""
    doc = span.doc
    if len(span) == 0:
        text = doc.text
        return text[max(0, span.start_char - width) : span.start_char], text[span.end_char : span.end_char + width]
    before = "".join(token.text_with_ws for token in doc[max(0, span.start - width) : span.start])[-width:]
    last = doc[span.end - 1]
    after = "".join(token.text_with_ws for token in doc[span.end - 1 : span.end + width])[len(last.text) :][:width]
    return before if width else "", after


def fragment(span: Any) -> bool:
    """True when a name is part of a longer written word: "Retry" of "Retry-After", "Character" of "Character.AI",
    "L6" of "MiniLM-L6-v2" (the recogniser cut a token run that the text writes as one)."""
    before, after = _chars_around(span)
    joined_after = len(after) == 2 and (after[0].isalnum() or (after[0] in "-./" and after[1].isalnum()))
    joined_before = len(before) == 2 and (before[1].isalnum() or (before[1] in "-/" and before[0].isalnum()))
    return joined_after or joined_before


_ROMAN = re.compile(r"^(?=[IVXLC]{2,}$)(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$")  # "II" to "XCIX" (one letter: a letter)


def sequence_label(name: str) -> bool:
    """True for a capitalised word followed only by one capital letter or a Roman numeral ("Series B", "Phase II"):
    the form that labels one of a sequence of stages, rounds or versions."""
    words = name.split()
    return (
        len(words) == 2
        and len(words[0]) > 1
        and words[0].isalpha()
        and words[0].istitle()
        and bool(re.fullmatch(r"[A-Z]", words[1]) or _ROMAN.match(words[1]))
    )


def title_word(token: Any) -> bool:
    return token.lower_.rstrip(".") in TITLE_WORDS or token.text == "."


def common_noun(span: Any) -> bool:
    """True for a name written in lower case that the tagger reads as common words ("metadata") or that takes an
    article ("the node"; a lower-case name such as "pgvector" does not: "the pgvector extension")."""
    if any(c.isupper() for c in span.text):
        return False
    article = any(child.dep_ == "det" for child in span.root.children)
    return article or not any(t.pos_ in ("PROPN", "X", "NUM") for t in span)


def singular_name(name: str) -> str:
    """A product name in the singular: "909s" -> "909", "909 Skylarks" -> "909 Skylark"."""
    head, _, last = name.rpartition(" ")
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss") and (last[-2].isdigit() or last[0].isupper()):
        last = last[:-1]
    return f"{head} {last}".strip()


def split_parenthesis(span: Any) -> list[Any]:
    """ "World Health Organization (WHO" -> the name and the acronym, when the recogniser took both as one."""
    for token in span:
        if token.text == "(" and token.i > span.start:
            parts = [span.doc[span.start : token.i]]
            if token.i + 1 < span.end:
                parts.append(span.doc[token.i + 1 : span.end])
            return parts
    return [span]


def kind_of_noun(noun: str) -> str | None:
    noun = noun.lower()
    maker = "organization" if noun.endswith(("maker", "builder", "producer", "provider", "company")) else None
    return next((kind for kind, nouns in KIND_NOUNS.items() if noun in nouns), maker)


def named_of_another_kind(key: str, kind: str) -> bool:
    """True when a longer name ends in a noun naming a kind other than an organisation's or `kind` ("Quarrow Builders
    Summit" is an event, "Quarrow Cloud Platform" a product): its first word alone is not a short form of it."""
    words = key.split()
    head = kind_of_noun(words[-1].strip(".,")) if len(words) >= 2 else None
    return head in ("event", "product", "work", "place") and head != kind


def variant_after(token: Any) -> bool:
    """True when a variant's designation is joined to this model's by a hyphen ("606-200XL", "404-800s"): the
    variant is a version of the model, and its events are the model's."""
    doc = token.doc
    return (
        token.i + 2 < len(doc)
        and doc[token.i + 1].text == "-"
        and not token.whitespace_
        and not doc[token.i + 1].whitespace_
        and re.fullmatch(r"\d{1,4}[A-Z]{0,3}s?", doc[token.i + 2].text) is not None
    )


NAME_AND_ACRONYM = re.compile(r"([A-Z][\w&'’.-]*(?:\s+[\w&'’.-]+){1,8})\s*\(([A-Z][A-Za-z&.]{1,9})\)")


# The small words of a name that its acronym leaves out ("European Aeronautic Defence and Space" -> "EADS").
NOT_INITIALS = {"of", "and", "the", "for", "de", "&"}
# Title words that open an office and never end one ("Vice President", "Chief Technology Officer").
OFFICE_OPENERS = {"vice", "deputy", "assistant", "associate", "acting", "operating", "financial", "technology"}


# Symbols of a unit of measure, a currency or a time zone, as written beside a number ("16 GB", "USD 23", "14:00
# UTC", "GMT +8"): the English abbreviations of the units of storage, of the common units of weight, length and speed,
# of the most traded currencies and of the time zones of the world's standard. A name made of them (and numbers) is a
# measure, not an entity (`spacy-46`).
_UNITS = set(
    "kb mb gb tb pb kbps mbps gbps ghz mhz khz kwh mwh gwh kg mg km cm mm mph kph "
    "usd eur gbp jpy cny rmb chf cad aud inr hkd sgd krw rub "
    "utc gmt bst cet cest est edt pst pdt cst cdt mst mdt ist jst".split()
)
GENERATIONAL = {"jr", "sr"}  # "Jr.", "Sr.": the end of a person's name, never a name of their own


def a_measure(names: Any) -> bool:
    """True when every name written of an entity is a unit's, a currency's or a time zone's symbol, alone or with a
    number and signs ("GB", "USD 23", "USD$23", "GMT +8"), or an amount written with a currency's sign ("US $299",
    "NZ$ 40"): a measure the tagger read as a name."""
    written = [name for name in names if names[name]] or list(names)
    return bool(written) and all(
        _amount(name) or ((words := re.findall(r"[^\W\d_]+", name)) and all(word.lower() in _UNITS for word in words))
        for name in written
    )


def _amount(name: str) -> bool:
    """True when a currency's sign (Unicode's "Sc": $, €, £, ¥ ...) is followed by a number in `name`."""
    return any(unicodedata.category(ch) == "Sc" and re.match(r"\s*\d", name[i + 1 :]) for i, ch in enumerate(name))


def surnames(key: str) -> list[str]:
    """A person's surname with its particles, as `nameparser` reads the name, then without them ("van dijkhof" and
    "dijkhof" of "maarten van dijkhof"), never a generational suffix ("orrell" of "tavin orrell jr"): a text may
    write either."""
    words = key.split()
    while len(words) > 1 and words[-1].rstrip(".") in GENERATIONAL:
        words = words[:-1]
    last = " ".join(HumanName(" ".join(words)).last.split()).lower()
    with_particles = last if last and " ".join(words).endswith(last) else words[-1]
    return list(dict.fromkeys([with_particles, words[-1]]))


def without_middle(key: str) -> str | None:
    """A person's name without its middle names or initials ("petra lindstrand" of "petra k. lindstrand"), or None
    when it has none."""
    name = HumanName(key)
    if not name.middle or not name.first or not name.last:
        return None
    return " ".join(f"{name.first} {name.last} {name.suffix}".split()).lower()


def _initials(key: str) -> str:
    return "".join(word[0] for word in key.split() if word not in NOT_INITIALS)


def acronyms_of(key: str, names: Iterable[str]) -> set[str]:
    """The acronyms a name may be written as: its words' initials ("european aeronautic defence and space" ->
    "eads"), and, read from how the text writes it, with a word in capitals kept whole ("Vellum AI Labs" -> "vail")
    and the parts of a hyphenated word taken as words ("Vellum-NLP" -> "vnlp"). Only from a name of two parts or
    more, and only from the spellings of that name itself (not of a shorter name merged into it)."""
    found = {_initials(key)} if len(key.split()) >= 2 else set()
    for name in (name for name in names if normalise_name(name) == key):
        words = [word for word in re.split(r"[\s-]+", name) if word and word.lower() not in NOT_INITIALS]
        if len(words) >= 2:
            whole = (word if word.isalpha() and word.isupper() and len(word) >= 2 else word[0] for word in words)
            found.add("".join(whole).lower())
    return found - {""}


def shortened(key: str) -> set[str]:
    """A long name with its leading words written as their acronym: "united states air force" -> "us air force",
    "usa force" (news writes both forms; the other documents' "US Air Force" then joins the same entity)."""
    words = key.split()
    return {
        f"{_initials(' '.join(words[:cut]))} {' '.join(words[cut:])}"
        for cut in range(2, len(words))
        if words[cut - 1] not in NOT_INITIALS
    }
