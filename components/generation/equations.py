"""The names a sentence equates with a noun: "Ada Quill, the chief executive of Corvane", "the chief executive is
Ada Quill", "Ada Quill, known as the queen of maps", "with Ada Quill as chief executive", "chief executive Ada Quill".

A copular question that asks about a noun ("Who is the chief executive of Corvane?") is answered by the name its
sentence says that noun is. `copular_subject` reads that noun from the question (the other side of its "be");
`equated_names` reads, from the sentence's dependency parse (spaCy), the tokens of every proper name the sentence
equates with a noun of that lemma. Only general English grammar is read: apposition, the two sides of a copula, an
object predicate ("named Ada Quill its chief executive"), a predicative "as" ("served as", "appointed X as", "known
as", "X as N") and a noun used as a title before a name. Nothing names a word of a set.

Usage:
```python
noun = copular_subject("Who is the chief executive of Corvane?")  # "executive"
names = equated_names(parse("In 2001 Tom Berg founded Corvane, with Ada Quill as chief executive."), noun)
```
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from components.generation.question_analysis import LIGHT_NOUNS
from components.generation.question_gap import WH_PHRASE_WORDS, term_of
from components.text.language import VALUE_LABELS, parse_syntax

COPULA_SIDES = frozenset({"nsubj", "attr"})
SUBJECTS = frozenset({"nsubj", "nsubjpass"})


@lru_cache(maxsize=2048)
def copular_subject(question: str) -> str:
    """The lemma of the noun a copular question asks about ("Who is the chief executive of X?" -> "executive"): the
    wh-word is one side of "be" and that noun the other; empty for any other question."""
    doc = parse_syntax(" ".join(question.split()))
    wh = next((token for token in doc if token.lower_ in WH_PHRASE_WORDS), None)
    if wh is None or wh.dep_ not in COPULA_SIDES or wh.head.lemma_ != "be":
        return ""
    sides = [child for child in wh.head.children if child.dep_ in COPULA_SIDES and child.i != wh.i]
    noun = next((child for child in sides if child.pos_ in {"NOUN", "PROPN"}), None)
    return noun.lemma_.lower() if noun is not None and noun.lemma_.lower() not in LIGHT_NOUNS else ""


def asked_role(question: str) -> str:
    """The lemma of the role a "who" question asks who holds: the noun of a copular question (`copular_subject`),
    else the noun of an "as" the wh-word's verb takes ("Who heads Corvane as chief executive?", "Who did Corvane
    hire as its coach?" -> "executive", "coach"); empty for any other question."""
    noun = copular_subject(question)
    if noun:
        return noun
    doc = parse_syntax(" ".join(question.split()))
    wh = next((token for token in doc if token.lower_ in WH_PHRASE_WORDS), None)
    if wh is None or wh.head.pos_ not in {"VERB", "AUX"}:
        return ""
    for preposition in wh.head.children:
        if preposition.dep_ == "prep" and preposition.lower_ == "as":
            role = next((child for child in preposition.children if child.dep_ == "pobj"), None)
            if role is not None and role.pos_ in {"NOUN", "PROPN"} and role.lemma_.lower() not in LIGHT_NOUNS:
                return role.lemma_.lower()
    return ""


def _as_object(noun: Any) -> Any:
    """The "as" a noun is the object of ("as chief executive"), or None."""
    head = noun.head
    return head if noun.dep_ == "pobj" and head.lower_ == "as" and head.dep_ == "prep" else None


def _predicated(verb: Any) -> list[Any]:
    """What an object predicate or a predicative "as" of `verb` is said of: its object ("appointed Ada Quill as
    chief executive"), else its subject ("Ada Quill served as ...", "Ada Quill was named ..."), else the noun its
    clause modifies ("Ada Quill, known as ...")."""
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    if objects:
        return objects
    subjects = [child for child in verb.children if child.dep_ in SUBJECTS]
    if subjects:
        return subjects
    return [verb.head] if verb.dep_ in {"acl", "relcl"} else []


def predicates(verb: Any) -> list[Any]:
    """The object predicates of `verb` and the objects of its predicative "as", in the sentence's order."""
    found = []
    for child in verb.children:
        if child.dep_ == "oprd":
            found.append(child)
        elif child.dep_ == "prep" and child.lower_ == "as":
            found += [grandchild for grandchild in child.children if grandchild.dep_ == "pobj"]
    return found


def naming_clauses(noun: Any) -> list[Any]:
    """The verbs of the clauses that may name the token `noun`: the passive it is the subject of ("the chief
    executive is known as Ada Quill") and the clauses that modify it ("a firm called Corvane")."""
    verbs = [noun.head] if noun.dep_ == "nsubjpass" else []
    return [*verbs, *(child for child in noun.children if child.dep_ in {"acl", "relcl"})]


def _equated_tokens(noun: Any) -> list[Any]:
    """The heads of the phrases the sentence equates with the token `noun`."""
    found = [child for child in noun.children if child.dep_ == "appos"]
    head = noun.head
    if noun.dep_ == "appos" or (noun.dep_ == "compound" and head.pos_ == "PROPN"):
        found.append(head)  # "Ada Quill, the chief executive", "chief executive Ada Quill"
    if noun.dep_ in COPULA_SIDES and head.lemma_ == "be":
        found += [child for child in head.children if child.dep_ in COPULA_SIDES and child.i != noun.i]
    as_ = _as_object(noun)
    if as_ is not None:
        holder = as_.head
        # "with Ada Quill as chief executive": the name the "as" hangs on; "served as", "appointed X as": the verb's.
        found += [holder] if holder.pos_ in {"NOUN", "PROPN"} else _predicated(holder) if holder.pos_ == "VERB" else []
    if noun.dep_ == "oprd":
        found += _predicated(head)  # "named Ada Quill its chief executive", "Ada Quill was named chief executive"
    # "the chief executive is known as Ada Quill", "a firm called Corvane": what a clause on the noun names it.
    for verb in naming_clauses(noun):
        found += predicates(verb)
    return [token for token in found if token.i != noun.i]


def _name_tokens(token: Any) -> set[int]:
    """The tokens of the proper name `token` heads or stands in (the name's head and its compound and flat proper
    nouns: "Ada" of "Ada Quill" gives both), or none when it is no proper name: a proper noun, or a word the
    recogniser gives a name's label (not a date's or a number's)."""
    if not _named(token):
        return set()
    while token.dep_ in {"compound", "flat"} and _named(token.head) and token.head.i != token.i:
        token = token.head
    return {token.i} | {child.i for child in token.children if child.dep_ in {"compound", "flat"} and _named(child)}


def _named(token: Any) -> bool:
    """Whether the word is (part of) a proper name."""
    return token.pos_ == "PROPN" or (bool(token.ent_type_) and token.ent_type_ not in VALUE_LABELS)


def equated_names(doc: Any, noun: str, held: frozenset[str] = frozenset()) -> set[int]:
    """The tokens of every proper name the parsed sentence `doc` equates with a noun of lemma `noun` (none when
    `noun` is empty), but for names whose terms are all in `held` (the question's terms: a name the question holds
    is what it asks about, not its answer)."""
    if not noun:
        return set()
    names: set[int] = set()
    for token in doc:
        if token.lemma_.lower() != noun or token.pos_ not in {"NOUN", "PROPN"}:
            continue
        for other in _equated_tokens(token):
            tokens = _name_tokens(other)
            if tokens and not all(term_of(doc[i]) in held for i in tokens) and not _own_phrase(token, tokens):
                names |= tokens
    return names


def _own_phrase(noun: Any, name: set[int]) -> bool:
    """Whether the name is part of the noun's own phrase, not a name said to be it: a name right before the noun
    with only the noun's modifiers between ("the <league> Most Valuable Player"), or the one of the two that stands
    in brackets right after the other ("Most Valuable Player (MVP)": a short form)."""
    doc, first, last = noun.doc, min(name), max(name)
    if last < noun.i:
        if noun.i == last + 2 and doc[last + 1].text == "(":  # "Most Valuable Player (MVP)", the noun the short form
            return True
        return all(doc[i].head.i == noun.i and doc[i].dep_ in {"compound", "amod"} for i in range(last + 1, noun.i))
    return first >= 2 and doc[first - 1].text == "(" and doc[first - 2].i == noun.i
