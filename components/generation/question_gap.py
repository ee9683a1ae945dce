"""The gap a question leaves in a sentence: which role its wh-word plays for which word, and the phrase of an
answering sentence that plays that role.

"What did Tesla patent in 1891?" leaves the object of "patent" open; in "In 1891 Tesla patented the Tesla coil, a
resonant transformer." the object of "patented" is "the Tesla coil", so that is the short answer, not the nearest
noun phrase. Both sides are read with the product's one language analysis (spaCy's dependency parse): the question's
wh-word (or the noun it determines: "what colour") has a role (subject, object, object of a preposition; a place for
"where") under a word; the sentence's word with the same stem takes the answer in the same role (a passive's subject
standing for an active's object and the other way round, "by"'s object for a subject, a relative "who" for the noun
its clause modifies, a verb's subject for the verb coordinated with it). The answer is the shortest complete phrase
in that role: the noun with its determiners, modifiers, coordinated nouns and "of" phrases, without its relative
clauses, appositions or other prepositional phrases.

General English grammar only: nothing here names a question set's words or entities.

Usage:
```python
gap = question_gap("What did Tesla patent in 1891?")
fill_gap(parse("In 1891 Tesla patented the Tesla coil, a resonant transformer."), gap)
# 'the Tesla coil'
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from components.text.analyzer import terms
from components.text.language import parse_question, parse_syntax

# The wh-words that stand for a phrase of the answering sentence.
WH_PHRASE_WORDS = frozenset({"what", "which", "who", "whom", "where"})
# Verbs too light to align on: "what is ...", "what did X do": the gap is not a role of a content verb.
LIGHT_VERBS = frozenset({"be", "do", "have", "happen", "make", "get"})
# The roles that stand for each other between a question and a sentence.
OBJECT_ROLES = frozenset({"dobj", "attr", "oprd", "dative"})
SUBJECT_ROLES = frozenset({"nsubj", "csubj"})
# The subjects a verb takes, active or passive.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
# The prepositions whose object is a place ("practised at Stanford", "flowed toward the Pacific").
PLACE_PREPOSITIONS = frozenset("in at on from to near into onto inside outside within across toward towards".split())
# Entity labels of a time: "in 1884" answers when, not where.
TIME_LABELS = frozenset({"DATE", "TIME"})
# The nouns of compound prepositions ("in addition to", "in spite of"): their object is not a place.
COMPOUND_PREPOSITION_NOUNS = frozenset("addition regard respect spite terms favour favor lieu case behalf".split())
# Relative pronouns ("who", "which", "that"): a relative clause's filler stands for the noun the clause modifies.
RELATIVE_TAGS = frozenset({"WP", "WDT"})
# Children that are not part of the shortest complete phrase of a noun.
DROPPED_CHILDREN = frozenset("relcl acl appos advcl punct parataxis prep mark dep ccomp xcomp advmod npadvmod".split())
# The longest phrase taken as a short answer, in words.
MAX_WORDS = 12
# A year or a span of years as one token: "1726", "c1180", "1775–1795", "1496–97".
YEARS = re.compile(r"c?(?:1\d{3}|20\d{2})(?:[–-]\d{2}(?:\d{2})?)?")
# "What kind of company ...?": the question asks for a class of the noun after "of", not for one of its names.
KIND_OF = re.compile(r"\b(?:what|which)\s+(?:kind|type|sort|class)s?\s+of\b", re.I)


@dataclass(frozen=True)
class QuestionGap:
    """The role a question's wh-word plays (`role`: "subject", "object", "prep", or "place" for "where"), the stem
    of the word it plays it for (`head`), and the preposition (`preposition`: "between" in "between what", "from" in
    "from where")."""

    role: str
    head: str
    preposition: str = ""


@lru_cache(maxsize=1024)
def question_gap(question: str) -> QuestionGap | None:
    """The gap `question` leaves (None when its wh-word has no role under a content word: "What is X?")."""
    doc = parse_syntax(" ".join((question or "").split()))
    # The first wh-word; a "where" only when no other asks ("In the town where he lived, what did he build?").
    asking = [token for token in doc if token.lower_ in WH_PHRASE_WORDS]
    wh = min(asking, key=lambda token: (token.lower_ == "where", token.i), default=None)
    if wh is None:
        return None
    if wh.lower_ == "where":
        # "Where did the team practise?" leaves the place of "practise" open: its object of "at", "in", "on" ...
        # ("From where ...?" names the preposition).
        head = wh.head.head if wh.dep_ == "pcomp" else wh.head
        if head.dep_ in {"aux", "auxpass"}:
            head = head.head  # "Where was the organ built?" may hang "where" on "was"
        elif head.lemma_.lower() in LIGHT_VERBS and head.dep_ == "ROOT":
            head = _misread_verb(head)
        # "Where did the band perform?" may be read with "the band perform" a noun phrase: its root is the verb.
        verb = head.pos_ == "VERB" or (head.pos_ == "NOUN" and head.dep_ in {"ROOT", "nsubj"})
        if not verb or head.lemma_.lower() in LIGHT_VERBS:
            return None
        stems = terms(head.text)
        preposition = wh.head.lower_ if wh.dep_ == "pcomp" and wh.head.lower_ in PLACE_PREPOSITIONS else ""
        return QuestionGap("place", stems[0], preposition) if stems else None
    gap = wh.head if wh.dep_ == "det" and wh.head.pos_ in {"NOUN", "PROPN"} else wh
    role, head, preposition = gap.dep_, gap.head, ""
    if role == "dobj" and head.lemma_.lower() == "do" and any(child.dep_ == "aux" for child in head.children):
        return _action_gap(head)  # "What did X do?": the "do" after "did" or "to" stands for a verb
    # "What was the harbour built with?": a preposition left without its object is the one the wh-word fills.
    stranded = next((token for token in doc if token.dep_ == "prep" and not list(token.children)), None)
    if role in {"attr", "dobj", "nsubj"} and stranded is not None and stranded.i > gap.i:
        role, gap, head = "pobj", stranded, stranded
    elif role in {"attr", "dobj"} and head.lemma_.lower() == "do":
        # "What did Maria Lindqvist patent?" is sometimes read as "did" + the noun phrase "Maria Lindqvist
        # patent": the last word of that phrase is the verb the wh-word is the object of.
        subject = next((child for child in head.children if child.dep_ == "nsubj"), None)
        if subject is not None and subject.pos_ == "NOUN" and any(child.i < subject.i for child in subject.children):
            head = subject
    if role == "pobj" and head.dep_ == "prep":
        preposition, head = head.lower_, head.head
        role = "prep"
    elif role in OBJECT_ROLES or role == "nsubjpass":
        role = "object"
    elif role in SUBJECT_ROLES:
        role = "subject"
    else:
        return None
    if head.i == gap.i or head.lemma_.lower() in LIGHT_VERBS or head.pos_ not in {"VERB", "NOUN", "ADJ"}:
        return None
    stems = terms(head.text)
    return QuestionGap(role, stems[0], preposition) if stems else None


def term_of(token: Any) -> str:
    """The term of one word ("yards" -> "yard"); empty for a stop word or punctuation."""
    found = terms(token.text)
    return found[0] if found else ""


def counted_noun(question: str) -> str:
    """The term of the noun a "how many"/"how much" question counts ("How many total yards ...?" -> "yard")."""
    if re.search(r"\bhow old\b", question, re.I):
        return "age"  # "How old was she?" counts her age: "39" of "at age 39"
    doc = parse_question(" ".join(question.split()))
    quantities = [token.i for token in doc if token.lower_ in {"many", "much"}]
    # The "many" that "how" asks is the one counted, wherever it stands ("Many changes came ..., which was how many
    # years ago?" counts years); without one, the first.
    asked = [index for index in quantities if index and doc[index - 1].lower_ == "how"] or quantities
    after = asked[0] + 1 if asked else None
    noun = next((token for token in doc[after:] if token.pos_ in {"NOUN", "PROPN"}), None) if after else None
    return term_of(noun) if noun is not None and noun.i <= after + 2 else ""


def counted_nouns(number: Any) -> set[str]:
    """The terms of what the number token `number` (or the head of a number entity) counts: its own unit ("300
    acres"), the noun it modifies ("12 seats"), or the noun of its partitive "of" ("six of the seven lines")."""
    nouns = [number]
    if number.dep_ in {"nummod", "quantmod", "compound", "amod"}:
        nouns.append(number.head)
    nouns += [
        grand for child in number.children if child.lower_ == "of" for grand in child.children if grand.dep_ == "pobj"
    ]
    return {term_of(noun) for noun in nouns} - {""}


def _misread_verb(auxiliary: Any) -> Any:
    """The verb a question's auxiliary stands before when the parse made the verb part of the subject: a participle
    after it ("Where are the gonads located?": "located" modifying "gonads" or a clause of "are") or the subject's
    last noun after a compound ("Where did the band practise?" read as the noun phrase "the band practise"); the
    auxiliary else."""
    subject = next((child for child in auxiliary.children if child.dep_ == "nsubj"), None)
    for token in auxiliary.doc[auxiliary.i + 1 :]:
        if token.pos_ == "VERB" and token.dep_ in {"acl", "ccomp"} and token.head in (subject, auxiliary):
            return token
    if subject is not None and auxiliary.lemma_ == "do" and subject.pos_ == "NOUN":
        return subject if any(child.dep_ == "compound" for child in subject.children) else auxiliary
    return auxiliary


def fill_gap(doc: Any, gap: QuestionGap | None, question_terms: frozenset[str] = frozenset()) -> str:
    """The phrase of the parsed sentence `doc` that fills `gap`: the word with the gap's stem, and its child in the
    gap's role (shortest complete phrase); empty when the sentence has no such word or role."""
    token = fill_gap_token(doc, gap, question_terms)
    return phrase_text(token) if token is not None else action_phrase(doc, gap)


def _action_gap(do: Any) -> QuestionGap | None:
    """The gap of "What did X do ...?": an action, found in a sentence by the verb the question's "do" stands under
    ("want him to do" -> what "wanted" takes as its clause), else by the one it is done to ("do to the pier") or the
    one doing it ("What did Berg do ...?")."""
    if do.dep_ in {"xcomp", "ccomp"} and do.head.pos_ == "VERB" and do.head.lemma_.lower() not in LIGHT_VERBS:
        stems = terms(do.head.text)
        return QuestionGap("action", stems[0], "clause") if stems else None
    for child in do.children:
        if child.dep_ == "prep" and child.lower_ in {"to", "with"}:
            done_to = next((grand for grand in child.children if grand.dep_ == "pobj"), None)
            if done_to is not None and (stems := terms(done_to.text)):
                return QuestionGap("action", stems[0], "object")
    doer = next((child for child in do.children if child.dep_ == "nsubj"), None)
    stems = terms(doer.text) if doer is not None and doer.pos_ in {"NOUN", "PROPN"} else []
    return QuestionGap("action", stems[0], "subject") if stems else None


def action_phrase(doc: Any, gap: QuestionGap | None) -> str:
    """The verb phrase of `doc` that fills an action gap: the verb with its particle and object; empty for any other
    gap (those are filled by a token, `fill_gap_token`)."""
    if gap is None or gap.role != "action":
        return ""
    for word in doc:
        if term_of(word) != gap.head:
            continue
        if gap.preposition == "clause":
            verb = next((child for child in word.children if child.dep_ in {"xcomp", "ccomp"}), None)
        else:
            verb = word.head if word.dep_ == ("dobj" if gap.preposition == "object" else "nsubj") else None
        if verb is None or verb.pos_ != "VERB" or verb.lemma_.lower() in LIGHT_VERBS:
            continue
        kept = {verb.i}
        for child in verb.children:
            if child.dep_ in {"prt", "dobj", "dative"}:
                kept |= phrase_tokens(child)
        if len(kept) <= MAX_WORDS:
            return closed(doc[min(kept) : max(kept) + 1].text)
    return ""


def fill_gap_token(doc: Any, gap: QuestionGap | None, question_terms: frozenset[str] = frozenset()) -> Any:
    """The head token of the phrase that fills `gap` in `doc`, or None. Of several words with the gap's stem, the
    first whose other arguments the question holds ("What do photocytes produce?" in "germ cells that produce eggs,
    and photocytes that produce light": the "produce" of "photocytes"), else the first."""
    if gap is None or gap.role == "action":
        return None
    fillers = []
    for word in doc:
        if term_of(word) != gap.head or word.pos_ not in {"VERB", "NOUN", "ADJ", "AUX"}:
            continue
        found = _role_child(word, gap)
        if found is None and gap.role == "subject":
            found = _shared_subject(word)
        if found is not None and found.tag_ in RELATIVE_TAGS and word.dep_ == "relcl":
            found = word.head  # "performers Beyoncé and Bruno Mars, who headlined ...": the relative's antecedent
        if found is not None and found.pos_ != "PRON":
            others = [child for child in word.children if child.dep_ != "punct" and child.i != found.i]
            others += [word.head] if word.dep_ in {"relcl", "acl"} and word.head.i != found.i else []
            # A verb without a subject of its own shares its governor's ("faults are able to produce ...").
            owner = next(
                (up for up in [word, *word.ancestors] if any(c.dep_ in SUBJECT_DEPS for c in up.children)), word
            )
            others += [child for child in owner.children if child.dep_ in SUBJECT_DEPS and child.i != found.i]
            if any(set(terms(other.text)) & question_terms for other in others):
                return found
            fillers.append(found)
    return fillers[0] if fillers else None


def _shared_subject(word: Any) -> Any:
    """The subject a verb without one of its own shares with the verb it depends on: "Tesla moved to Paris and
    worked for Edison" (a coordinated verb), "Tesla decided to build a laboratory" (the verb of a "to" clause)."""
    if word.pos_ != "VERB" or word.dep_ not in {"conj", "xcomp"} or word.head.pos_ not in {"VERB", "AUX"}:
        return None
    if any(child.dep_ in {"nsubj", "nsubjpass", "csubj", "auxpass"} for child in word.children):
        return None
    # "Westinghouse asked Tesla to build it": a "to" clause after an object is that object's to do.
    roles = ("dobj", "nsubj") if word.dep_ == "xcomp" else ("nsubj",)
    return next((child for role in roles for child in word.head.children if child.dep_ == role), None)


def _role_child(word: Any, gap: QuestionGap) -> Any:
    if gap.role == "place":
        return _place(word, gap.preposition)
    passive = any(child.dep_ in {"auxpass", "nsubjpass"} for child in word.children)
    for child in word.children:
        if gap.role == "prep" and child.dep_ == "prep" and child.lower_ == gap.preposition:
            return next((grandchild for grandchild in child.children if grandchild.dep_ == "pobj"), None)
        if gap.role == "object" and (child.dep_ in OBJECT_ROLES or (passive and child.dep_ == "nsubjpass")):
            return child
        if gap.role == "subject":
            if child.dep_ in SUBJECT_ROLES and not passive:
                return child
            if child.dep_ == "agent":
                return next((grandchild for grandchild in child.children if grandchild.dep_ == "pobj"), None)
    return None


def _place(word: Any, preposition: str) -> Any:
    """The object of `word`'s place preposition (`preposition` when the question names one), one after `word` first;
    not a time ("in 1884"), nor a compound preposition's noun ("in addition to")."""
    places = []
    for child in word.children:
        if child.dep_ != "prep" or child.lower_ not in PLACE_PREPOSITIONS or preposition not in {"", child.lower_}:
            continue
        place = next((grandchild for grandchild in child.children if grandchild.dep_ == "pobj"), None)
        if place is None or place.ent_type_ in TIME_LABELS or place.like_num:
            continue
        if place.lower_ in COMPOUND_PREPOSITION_NOUNS and any(grand.lower_ in {"to", "of"} for grand in place.children):
            continue
        places.append(place)
    after = [place for place in places if place.i > word.i]
    return (after or places or [None])[0]


def phrase_text(token: Any) -> str:
    """The shortest complete phrase headed by `token`: its determiners, modifiers, coordinated nouns and "of"
    phrases, not its clauses, appositions or other prepositional phrases, nor a leading possessive pronoun."""
    kept = phrase_tokens(token)
    start, end = min(kept), max(kept) + 1
    doc = token.doc
    # A possessive pronoun points outside the phrase ("their difficulty"): the answer is the rest.
    while start < end and (doc[start].is_punct or doc[start].dep_ == "cc" or doc[start].tag_ == "PRP$"):
        start += 1
    while end > start and (doc[end - 1].is_punct or doc[end - 1].dep_ == "cc"):
        end -= 1
    # A word is whole: "force-free fields" keeps "force-" though the parse hangs it elsewhere.
    while start > 0 and not doc[start - 1].whitespace_ and (doc[start].text == "-" or doc[start - 1].text == "-"):
        start -= 1
    if end <= start or end - start > MAX_WORDS:
        return ""
    return closed(doc[untitled_start(doc[start:end]) : end].text)


def closed(text: str) -> str:
    """The phrase without an aside or a quotation it opens but does not close ("a commune (gmina" -> "a commune",
    'the "golden anniversary' -> "the golden anniversary"): the phrase ended inside it. A bracket written against the
    word before it ("f(n") is part of a formula and stays."""
    opened = text.rfind(" (")
    if text.count("(") > text.count(")") and opened > 0:
        text = text[:opened].rstrip(" ,;")
    if text.count('"') == 1:
        text = " ".join(text.replace('"', " ").split())
    return text


def untitled_start(span: Any) -> int:
    """Where the name in `span` starts when common nouns before it only give its title or role ("linebacker Von
    Miller", "the skateboarder Tony Hawk" -> "Von Miller", "Tony Hawk"): the name alone names the one asked for.
    The span's own start otherwise (its head is not a name, or nothing but names and determiners precede it)."""
    root = span.root
    if root.pos_ != "PROPN":
        return span.start
    first = root.i
    while first > span.start and span.doc[first - 1].pos_ == "PROPN" and span.doc[first - 1].dep_ == "compound":
        first -= 1
    before = span.doc[first - 1] if first > span.start else None
    # The title is a plain lower-case word ("high-speed", "Teacher" may be part of the name), the name capitalised
    # words ("machine M", "creditor protection" are misread phrases, not names).
    named = all(token.is_title and len(token) > 1 for token in span.doc[first : root.i + 1])
    if named and before is not None and before.is_lower and before.is_alpha and before.pos_ == "NOUN":
        return first if before.dep_ == "compound" and before.head.i >= first else span.start
    return span.start


def phrase_tokens(token: Any) -> set[int]:
    """The token positions of the shortest complete phrase headed by `token`."""
    kept = {token.i}
    for child in token.children:
        if child.dep_ in DROPPED_CHILDREN and not (child.dep_ == "prep" and child.lower_ == "of"):
            continue
        kept |= phrase_tokens(child)
    return kept
