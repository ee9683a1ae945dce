"""Which of a sentence's dates date the event a participant takes part in, read from spaCy's parse.

The dates of the participant's own clause first (`participant_dates`), those of each verb coordinated after its
subject's (`conjoined_dates`), and a period that began with an event the text told and dated before
(`since_event`: "since its release"); `mention_span` gives a date mention's tokens. The dates themselves come from
`components.graph.dates`.
"""

from __future__ import annotations

from typing import Any

from components.graph.clause_reading import clause_verb
from components.graph.dates import DateMention, FuzzyDate, date_clause_verb

# Clauses inside another: reported content ("said that it sold ... last year"), relative clauses ("an agreement
# reached in 1991") and clauses modifying a noun ("Orrell, born in 1955, ...").
_SUBORDINATE_CLAUSES = {"ccomp", "relcl", "acl"}


def participant_dates(sentence: Any, dates: list[DateMention], participant: Any) -> list[DateMention]:
    """The dates that date the event the entity named by `participant` (a token) takes part in.

    A date the parse attaches to the entity's own predicate, or to a clause describing the entity ("Orrell, born in
    1955, ..."), dates it first: "Varno was started in 1976, and launched the store in 2003" dates the store's
    launch by 2003. Without one, the other dates of the sentence, but not those inside a clause that only reports or
    describes something else ("Quillon claims that ... an agreement reached in 1991" is a claim made on the
    document's date), nor the reported content of a parenthetical saying ("the switch, he said, would happen next
    year" is a saying of the document's date)."""
    verb = clause_verb(participant)
    own, other = [], []
    for mention in dates:
        span = mention_span(sentence, mention)
        if span is None:
            other.append(mention)
            continue
        date_verb = date_clause_verb(span)
        if date_verb.i == verb.i or (date_verb.dep_ in ("acl", "relcl") and date_verb.head.i in _phrase(participant)):
            own.append(mention)
            continue
        clause = span.root if date_verb.i == clause_verb(span).i else date_verb
        while clause.dep_ not in _SUBORDINATE_CLAUSES and clause.head.i != clause.i:
            clause = clause.head
        if clause.dep_ in _SUBORDINATE_CLAUSES and participant not in clause.subtree:
            continue
        if verb.dep_ == "parataxis" and verb.head.i == date_verb.i:
            continue
        other.append(mention)
    # A date the parse hangs on a noun of the clause ("fell 2 percent on Wednesday, its biggest drop since October")
    # dates what that noun names; when the predicate has a date of its own, that one dates the event.
    direct = [mention for mention in own if not _under_a_noun(mention_span(sentence, mention), verb)]
    own = direct or own
    # A date in another conjunct of a coordination dates that conjunct's event, not this one.
    return [mention for mention in own or other if not _other_conjunct(participant, mention_span(sentence, mention))]


def _under_a_noun(span: Any, verb: Any) -> bool:
    """True when the walk from the date `span` up to `verb` passes a noun outside the date ("drop" of "its biggest
    drop since October"), not only prepositions ("on Wednesday", "in the spring of 2020")."""
    if span is None:
        return False
    inside = {token.i for token in span}
    token = span.root
    while token.i != verb.i and token.head.i != token.i:
        token = token.head
        if token.i != verb.i and token.i not in inside and token.pos_ in ("NOUN", "PROPN", "PRON"):
            return True
    return False


def _other_conjunct(participant: Any, span: Any) -> bool:
    """True when a coordinator of the word governing both `participant` and the date `span` stands between them,
    both following that word: they belong to different conjuncts ("joined Vexa in 2005 and moved to Orrin in 2013";
    "worked at Vexa and, from 2022, at Orrin", whose second conjunct has lost its verb). A subject before the verb
    is shared by its conjuncts, and a coordination below the governing word ("bought Vexa and Orrin in 2005") shares
    the date."""
    if span is None:
        return False
    date = span.root
    above = {token.i for token in date.ancestors} | {date.i}
    common = next((token for token in [participant, *participant.ancestors] if token.i in above), None)
    if common is None or min(participant.i, span.start) <= common.i:
        return False
    low, high = (participant.i, span.start) if participant.i < span.start else (span.end - 1, participant.i)
    return any(child.dep_ == "cc" and low < child.i < high for child in common.children)


def conjoined_dates(sentence: Any, dates: list[DateMention], participant: Any) -> list[list[DateMention]]:
    """For the subject `participant` of a verb, the dates of each later verb coordinated with it that has no subject
    of its own and a date of its own ("Orrell joined Varno in 2006 and moved to Quillon in 2014": 2014)."""
    while participant.dep_ in ("compound", "flat") and participant.head.i != participant.i:
        participant = participant.head  # "Orrell" of "Tavin Orrell"
    if participant.dep_ not in ("nsubj", "nsubjpass"):
        return []
    verb = participant.head
    spans = [(mention, mention_span(sentence, mention)) for mention in dates]
    found = []
    for other in verb.conjuncts:
        if other.i < verb.i or other.pos_ not in ("VERB", "AUX"):
            continue
        if any(child.dep_ in ("nsubj", "nsubjpass", "expl") for child in other.children):
            continue
        own = [mention for mention, span in spans if span is not None and date_clause_verb(span).i == other.i]
        if own:
            found.append(own)
    return found


def _phrase(token: Any) -> set[int]:
    """The token positions naming one thing with `token`: its appositions and the names it is part of ("Talmont's
    rival Nordvik, which ...": a clause on "rival" describes Nordvik)."""
    positions = {token.i} | {child.i for child in token.children if child.dep_ == "appos"}
    while token.dep_ in ("appos", "compound", "flat") and token.head.i != token.i:
        token = token.head
        positions.add(token.i)
    return positions


def since_event(sentence: Any, happened: dict[str, tuple[FuzzyDate, frozenset[str]]]) -> list[DateMention]:
    """A period that began with an event the text told and dated before ("released the album on May 3, 2011 ...
    Since its release the album has found ..."): "since" and the event's noun, dated by that event (the noun and the
    verb share their lemma). A noun naming what it is the event of ("the start of the war") must name something of
    the told event's clause, else it is another event."""
    for token in sentence:
        if token.lower_ != "since" or token.dep_ != "prep":
            continue
        noun = next((child for child in token.children if child.dep_ == "pobj" and child.pos_ == "NOUN"), None)
        if noun is None or noun.lemma_.lower() not in happened:
            continue
        date, told = happened[noun.lemma_.lower()]
        of = [
            grand
            for child in noun.children
            if child.dep_ == "prep" and child.lower_ == "of"
            for grand in child.children
            if grand.dep_ == "pobj"
        ]
        if any(thing.lemma_.lower() not in told for thing in of):
            continue
        start, end = noun.left_edge.idx, noun.right_edge.idx + len(noun.right_edge)
        offset = sentence.start_char
        return [DateMention(start - offset, end - offset, date, "start", True)]
    return []


def mention_span(sentence: Any, mention: DateMention) -> Any:
    """The tokens of a date mention (its offsets are the sentence's)."""
    return sentence.doc.char_span(
        sentence.start_char + mention.start, sentence.start_char + mention.end, alignment_mode="expand"
    )
