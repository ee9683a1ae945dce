"""How a mention takes part in its clause, and whether the clause tells an event, read from spaCy's parse.

A noun phrase's role under its predicate (`role_of`: "nsubj", "poss>dobj"), as kind evidence (`evidence_role`),
and which roles name a participant (`is_core`, `is_subject`, `subject_itself`); a speaker (`speaks`), an "it" that
stands for a clause (`is_expletive`) and quoted words (`quoted_positions`); nouns of an event (`is_event_noun`) and
a name that only modifies one or another thing's noun (`is_premodifier`, `modifies_other_thing`, `of_a_thing`); the
verb of a clause (`clause_verb`) and whether it tells an event that happened: reported in the past (`tells_past`),
supposed (`supposed`), a habit (`habitual`) or a state (`is_state`).
"""

from __future__ import annotations

from typing import Any

from components.graph.kinds import SPEECH_VERBS_WITH_CLAUSE
from components.graph.name_forms import kind_of_noun

# Dependency roles in which a noun phrase takes part in its predicate.
_ARGUMENT_DEPS = {"nsubj", "nsubjpass", "csubj", "dobj", "iobj", "dative", "attr", "agent", "pobj", "oprd", "obj"}
_LINK_DEPS = {"compound", "appos", "conj", "poss", "amod", "nmod", "npadvmod", "flat", "nummod"}


def role_of(token: Any) -> str | None:
    """How the noun phrase headed by `token` takes part in its predicate, or None when it does not: the
    dependency role it (or the phrase it modifies) fills under a verb, prefixed by the links climbed to reach it
    ("nsubj", "poss>dobj", "compound:NOUN>nsubj")."""
    links: list[str] = []
    for _ in range(8):
        prefix = ">".join(links) + ">" if links else ""
        if token.dep_ in _ARGUMENT_DEPS:
            if token.dep_ == "pobj":
                head = token.head  # the preposition
                if _partitive_of(head):
                    links.append("of")  # "the first of the new airliners", "two of the jets": the part's role
                    token = head.head
                    continue
                if head.dep_ in ("prep", "agent", "dative") and head.head.pos_ in ("VERB", "AUX", "NOUN", "PROPN"):
                    return f"{prefix}pobj:{'VERB' if head.head.pos_ in ('VERB', 'AUX') else 'NOUN'}"
                return None
            if token.head.pos_ in ("VERB", "AUX") or token.dep_ in ("nsubj", "nsubjpass"):
                return f"{prefix}{token.dep_}"
            return None
        if token.dep_ in _LINK_DEPS and token.head.i != token.i:
            typed = token.dep_ in ("compound", "amod", "nmod")
            links.append(f"{token.dep_}:{token.head.pos_}" if typed else token.dep_)
            token = token.head
            continue
        # A headline's subject is often parsed as the root ("Nordvik N900 test flight delayed after accident"), and
        # a name right under a verb is its argument whatever the tagger called it ("renamed PostgreSQL" as advmod).
        if token.dep_ == "ROOT":
            return f"{prefix}ROOT"
        if token.head.pos_ in ("VERB", "AUX") and token.dep_ not in ("punct", "cc"):
            return f"{prefix}{token.dep_}:VERB"
        return None
    return None


_PARTS = {"first", "last", "one", "some", "many", "most", "all", "each", "half", "none", "several", "both", "few"}


def evidence_role(token: Any) -> str | None:
    """The role a name plays, as kind evidence: "s:found" (its predicate's subject, also "founded by X"), "p:bear"
    (a passive subject: "X was born"), "o:release" (an object), "i:in" (the object of a preposition), "g:board" (the
    possessor of a noun: "X's board"). A name that premodifies a person's name, directly or through a title, plays
    none of the person's roles: "Salvaro coach Miguel Arenas said" makes Arenas the speaker, Salvaro his club."""
    while token.dep_ in ("conj", "compound", "flat", "appos") and token.head.i != token.i:
        # `token` is the root of a name, so the head of its compound is outside the name.
        if token.dep_ == "compound" and _names_a_person(token.head):
            return None
        token = token.head
    head = token.head
    if token.dep_ == "nsubj" and head.pos_ in ("VERB", "AUX"):
        return f"s:{head.lemma_.lower()}"
    if token.dep_ == "nsubjpass":
        return f"p:{head.lemma_.lower()}"
    if token.dep_ in ("dobj", "obj") and head.pos_ == "VERB":
        return f"o:{head.lemma_.lower()}"
    if token.dep_ == "pobj" and head.dep_ == "agent":
        return f"s:{head.head.lemma_.lower()}"
    if token.dep_ == "pobj":
        return f"i:{head.lower_}"
    if token.dep_ == "poss" and head.pos_ in ("NOUN", "PROPN"):
        return f"g:{head.lemma_.lower()}"
    return None


def _names_a_person(token: Any) -> bool:
    """True when `token` is a word of a person's name, or a noun the parse gives a person's name in apposition
    ("coach" of "Tarvik coach Emil Strand", parsed as "coach, Emil Strand")."""
    return token.ent_type_ == "PERSON" or any(
        child.dep_ == "appos" and child.ent_type_ == "PERSON" for child in token.children
    )


def subject_itself(token: Any) -> bool:
    """True when the name is the subject itself, one of coordinated subjects ("Vennick and Orrin said") or named in
    an apposition to it ("its chief, Orla Vennick, said"); not a word of a longer subject ("the Quillon plant said",
    "a Quillon spokesman said")."""
    while token.dep_ in ("conj", "appos") and token.head.i != token.i:
        token = token.head
    return token.dep_ == "nsubj"


def speaks(verb: Any) -> bool:
    """True when `verb`, a verb of saying with a name as its subject, says something: not the passive read off a
    reduced clause ("Varna, said to be the oldest city, ...": an infinitive of its own and no object or clause says
    that something is said of the subject), and, for a verb that has another sense with a noun object
    (`SPEECH_VERBS_WITH_CLAUSE`: "added 3,000 jobs", "claimed 30 lives"), only with a clause or a quotation
    ("added that ...", '"...," she added') or as a parenthesis ("sales, Vennick added, rose")."""
    deps = {child.dep_ for child in verb.children}
    clause = bool(deps & {"ccomp", "parataxis"}) or verb.dep_ == "parataxis"
    infinitive = any(
        child.dep_ == "xcomp" and any(c.dep_ == "aux" and c.lower_ == "to" for c in child.children)
        for child in verb.children
    )
    if infinitive and not clause and not deps & {"dobj", "obj", "dative"}:
        return False
    return clause or verb.lemma_.lower() not in SPEECH_VERBS_WITH_CLAUSE


def _partitive_of(preposition: Any) -> bool:
    """True for the "of" after a subject or object naming a part or a number of things ("the first of ... will be
    delivered", "two of ... crashed"): the things take part in the part's event."""
    part = preposition.head
    return (
        preposition.lower_ == "of"
        and preposition.dep_ == "prep"
        and part.i < preposition.i
        and part.dep_ in ("nsubj", "nsubjpass", "dobj")
        and (part.lower_ in _PARTS or part.pos_ == "NUM")
    )


# Nouns naming an event or an action ("the Lumo's use", "an N900 test flight"): a name modifying one of them takes
# part in that event. Nouns made from verbs by a suffix are recognised by it; these are the common ones made
# without a suffix.
_EVENT_NOUNS = set(
    "use flight launch sale order deal test release visit crash purchase bid strike attack delay cut loss win debut "
    "trial suit merger takeover rollout delivery service tour death birth arrest vote ban recall dispute choice "
    "criticism ceremony protest award talk crisis scandal campaign war".split()
)
_EVENT_SUFFIXES = ("tion", "sion", "ment", "ance", "ence", "ure", "al", "ing", "ery")
# Core roles: a pronoun or a definite description refers to an entity taking part only as one of them ("it sold",
# "sued the company"); "its engines", "with them" name something else the sentence is about.
_CORE_ROLES = {"nsubj", "nsubjpass", "csubj", "dobj", "obj", "iobj", "dative", "agent", "attr", "oprd", "ROOT"}


_QUOTES = {'"', "``", "''", "“", "”"}
# Predicates whose "it" stands for a clause after them ("it emerged that", "it seems that"), not for a thing.
_RAISING_VERBS = {"seem", "appear", "emerge", "happen", "matter", "turn", "transpire"}


def is_expletive(it: Any) -> bool:
    """True for an "it" standing for a clause that follows ("it is hoped that the aircraft ...", "it emerged that",
    "it is very common for patients to ..."): the subject of a passive, a copula with an adjective, or a raising
    verb, whose clause complement says what "it" is."""
    verb = it.head
    if it.dep_ not in ("nsubj", "nsubjpass", "expl") or verb.pos_ not in ("VERB", "AUX"):
        return False
    clause = any(child.dep_ in ("ccomp", "xcomp", "csubj") for child in verb.children)
    passive = it.dep_ == "nsubjpass"
    adjective = verb.lemma_ == "be" and any(child.dep_ == "acomp" for child in verb.children)
    return clause and (passive or adjective or verb.lemma_ in _RAISING_VERBS)


def quoted_positions(sentence: Any) -> set[int]:
    """The token positions of a sentence inside quotation marks, including the words before a closing mark that
    ends a quotation opened in an earlier sentence."""
    marks = [token for token in sentence if token.text in _QUOTES]
    inside: set[int] = set()
    opened = bool(marks) and marks[0].text in ("''", "”")
    start = sentence.start
    for mark in marks:
        if opened:
            inside.update(range(start, mark.i))
        opened = not opened
        start = mark.i + 1
    if opened:
        inside.update(range(start, sentence.end))
    return inside


def is_core(role: str, person: bool = False) -> bool:
    """True for a role (see `role_of`) in which a reference names a participant: a core role, not a possessive, but
    a person's possessive ("his father", "her second album": a person's relations and works are facts about them;
    "its engines" is about the engines)."""
    links = role.split(">")
    return (person or not links[0].startswith("poss")) and links[-1].split(":")[0] in _CORE_ROLES


def is_subject(role: str | None) -> bool:
    """True for a role (see `role_of`; a reference's too: "ref:nsubj") that ends as its predicate's subject."""
    return (role or "").split(">")[-1].removeprefix("ref:") in ("nsubj", "nsubjpass")


def is_event_noun(token: Any) -> bool:
    lemma = token.lemma_.lower()
    return lemma in _EVENT_NOUNS or (len(lemma) > 5 and lemma.endswith(_EVENT_SUFFIXES))


def modifies_other_thing(token: Any, kind: str) -> bool:
    """True when a name only modifies a common noun naming something else: "Nordvik employees", "the Lumo family",
    "the Vexa 4 antenna" (the entity is not a participant of the sentence's event). Not when that noun is what the
    name is ("Lumo players", "the N900 superjumbo": a noun of its own kind, or a product it names), a title of
    someone acting for it ("Nordvik chief executive Ivo Ranta"), a noun of an event ("Lumo use", "N900 test flight":
    a headline's participant; in prose `is_premodifier` leaves it out), or a name itself."""
    head = token
    while head.dep_ in ("compound", "nmod", "amod") and head.head.i > head.i:
        head = head.head
        if head.pos_ != "NOUN":
            return False  # part of a longer name, a title before a person's name, or no noun at all
        if kind_of_noun(head.lemma_) in (kind, "person", "product") or is_event_noun(head):
            return False
    return head.i != token.i


def is_premodifier(token: Any) -> bool:
    """True when a name takes part only as the premodifier of a noun of an event in running prose ("Lumo
    development slowed", "the NV900 test flight was delayed"): the clause's argument is the event the noun names,
    which `modifies_other_thing` lets the name take part in; what the clause tells (a delay, a slowdown) is said of
    that event, not of the name's entity. Not a class noun of events, which the name names ("the F8 developer
    conference", "the Vellum Summit conference": the name is that event's), not a noun of another kind (which
    `modifies_other_thing` decides), nor a word of a longer name or a title before one."""
    if token.dep_ != "compound":
        return False
    head = token
    while head.dep_ == "compound" and head.head.i > head.i:
        head = head.head
        if head.pos_ != "NOUN":
            return False
    return (
        head.i != token.i
        and is_event_noun(head)
        and kind_of_noun(head.lemma_) != "event"
        and not _says_it_happened(head)
    )


# Verbs that say only that an event happened, or which phase of it did ("the launch took place", "the acquisition
# was completed", "the tour began"): said of a noun of an event, they tell the event itself, not something done to it.
_OCCURRENCE_VERBS = {"happen", "occur", "begin", "start", "commence", "end", "finish", "complete", "conclude", "hold"}
# Other arguments of such a verb make the clause tell more than the event ("the launch began to slip").
_OTHER_ARGUMENTS = {"dobj", "obj", "iobj", "dative", "attr", "oprd", "agent", "ccomp", "xcomp", "acomp"}


def _says_it_happened(noun: Any) -> bool:
    """True when a noun of an event is the subject of a verb that only says the event happened or which phase of it
    did ("The Vellmark launch took place in Oslo", "the Lumo acquisition was completed in March"): the clause's event
    is then the noun's own, which the name premodifying the noun takes part in. Not a verb saying something else of
    the event ("was delayed", "slowed"), nor one with another argument."""
    verb = noun.head
    if noun.dep_ not in ("nsubj", "nsubjpass") or verb.pos_ not in ("VERB", "AUX") or verb.i == noun.i:
        return False
    others = [child for child in verb.children if child.dep_ in _OTHER_ARGUMENTS]
    if verb.lemma_.lower() == "take":  # "take place": the light verb's object is part of the predicate
        return [child.lower_ for child in others] == ["place"]
    return verb.lemma_.lower() in _OCCURRENCE_VERBS and not others


def of_a_thing(token: Any, role: str) -> bool:
    """True when a name only completes a noun naming a thing, not an event ("a letter from Nordvik", "staff of
    Nordvik"): the thing takes part, not the name. The object of an event noun ("sales of the N900") takes part, and
    so does a place (the caller's choice: "a plant in Alabama" is where the event happens)."""
    links = role.split(">")
    if links[-1] != "pobj:NOUN" or not all(link.startswith(("compound", "flat")) for link in links[:-1]):
        return False
    while token.dep_ in ("compound", "flat") and token.head.i != token.i:
        token = token.head  # "Nordvik" of "Nordvik SE"
    noun = token.head.head
    return noun.pos_ == "NOUN" and not is_event_noun(noun) and kind_of_noun(noun.lemma_) is None


def clause_verb(tokens: Any) -> Any:
    """The verb whose clause holds `tokens` (a span, or one token): its first verb ancestor, else the root."""
    if tokens is None:
        return None
    token = getattr(tokens, "root", tokens)
    while token.pos_ not in ("VERB", "AUX") and token.head.i != token.i:
        token = token.head
    return token


SAYING = {"say", "claim", "state", "report", "tell", "announce", "confirm", "insist"}


def tells_past(verb: Any) -> bool:
    """True when the predicate `verb` (with its auxiliaries) is told in the past and not as a future or a
    possibility: "unveiled", "was praised", "had said"; not "uses", "will be reduced", "would stop"."""
    if verb is None:
        return False
    verbs = [verb, *(child for child in verb.children if child.dep_ in ("aux", "auxpass"))]
    if any(token.tag_ == "MD" or token.lower_ in ("will", "shall", "'ll") for token in verbs):
        return False
    # The finite verb carries the tense ("is priced" is present); a participle alone is a headline's past ("First
    # N900 delivered"), and a present perfect ("has unveiled") reports a completed event as news does.
    finite = [token for token in verbs if "Fin" in token.morph.get("VerbForm")]
    if verb.tag_ == "VBN" and any(token.lemma_ == "have" for token in finite):
        return True
    return any("Past" in token.morph.get("Tense") for token in finite or verbs if token.pos_ in ("VERB", "AUX"))


def _conditional(clause: Any) -> bool:
    return any(child.dep_ == "mark" and child.lower_ in ("if", "unless") for child in clause.children)


def supposed(token: Any) -> bool:
    """True when `token` takes part in a supposed event: a clause opened by "if" or "unless" ("if the bid succeeds,
    ...") states a condition, not something that happened."""
    verb = clause_verb(token)
    if any(child.dep_ == "advcl" and _conditional(child) for child in verb.children):
        return True  # the consequence of a condition: "if the bid succeeds, the jets may become redundant"
    while verb.head.i != verb.i:
        if verb.dep_ == "advcl" and _conditional(verb):
            return True
        verb = clause_verb(verb.head)
    return False


def habitual(token: Any) -> bool:
    """True when `token` takes part through a main verb in the simple present, with no auxiliary and not a saying
    ("the store sells music", "Vexa makes lenses"): a habit or a description, not a happening, when nothing dates
    it."""
    verb = clause_verb(token)
    # A word of the name itself that the tagger read as a verb ("Cloud Drives") is not its predicate: that is above.
    while verb is not None and (verb.i == token.i or verb.ent_type_) and verb.head.i != verb.i:
        verb = clause_verb(verb.head)
    return (
        verb.pos_ == "VERB"
        and verb.tag_ in ("VBZ", "VBP")
        and verb.lemma_.lower() not in SAYING
        and not any(child.dep_ in ("aux", "auxpass") for child in verb.children)
        and not _conjunct_happened(verb)
    )


def _conjunct_happened(verb: Any) -> bool:
    """True when a later verb coordinated with `verb`, sharing its subject (none of its own), is told as having
    happened: in the past or the present perfect (`tells_past`: "the store sells films and has begun to sell games",
    "Vexa makes lenses and opened a plant"; not "is selling games"). The subject then takes part in that conjunct's
    event, not only in a habit."""
    for other in verb.conjuncts:
        if other.i < verb.i or other.pos_ not in ("VERB", "AUX"):
            continue
        if any(child.dep_ in ("nsubj", "nsubjpass", "expl") for child in other.children):
            continue
        if tells_past(other):
            return True
    return False


def is_state(subject: Any) -> bool:
    """True when `subject` is the subject of a copula describing it ("It is Talmont's most popular airliner", "the
    company is in talks with China", "Nordvik is two years behind schedule"): a state, not an event, when nothing
    dates it. Not when what it is names an event ("the store was a violation of the agreement")."""
    while subject.dep_ in ("compound", "flat") and subject.head.i != subject.i:
        subject = subject.head  # "Nordvik" of "Nordvik SE"
    verb = subject.head
    if subject.dep_ != "nsubj" or verb.lemma_ != "be" or any(c.dep_ in ("aux", "auxpass") for c in verb.children):
        return False
    described = [child for child in verb.children if child.dep_ in ("attr", "acomp", "prep")]
    return bool(described) and not any(is_event_noun(child) for child in described)
