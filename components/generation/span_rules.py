"""The short answer read out of a sentence's parse by grammar rules.

A part that asks for a name, date, number or place is answered by an entity of its kind that the question does not
already name (`ranked_answer_span`: coordinated names joined, the one nearest the question's words, of the part's
likeliest label, in the role the question's wh-word plays); a "what" / "which" that names what it asks about, or a
"who" / "where" whose sentence holds no entity of its kind, by a noun phrase (`phrase_span`: the phrase in the
wh-word's role, headed by the noun asked about or equated with it, near the question's words and not made of them;
with an embedding model the few best are read back into the question, `_statement_cosines`). A personal pronoun that
does what the part asks gives way to the name it stands for (`pronoun_doers`), and a cited sentence about its chunk's
subject answers with that subject's full name (`subject_answer`). A short answer quotes its words, not the sentence's
reference marks, a possessive marker or closing punctuation (`bare_span`).

The rules' features are weighed by `answer_scoring` (fitted by `research fit scoring`); the fitted span model
(`span_choice`) rereads the chosen sentence and may choose another of its spans.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from haystack import Document
from spacy.tokens import Span

from components.generation.answer_scoring import AnswerScoring
from components.generation.answer_sentences import Sentence, share_of, terms_of
from components.generation.equations import copular_subject, naming_clauses, predicates
from components.generation.question_analysis import LIGHT_NOUNS, PLACE_LABELS, WH_WORDS, YES_NO_STARTS, QuestionPart
from components.generation.question_gap import (
    KIND_OF,
    PLACE_PREPOSITIONS,
    SUBJECT_DEPS,
    WH_PHRASE_WORDS,
    YEARS,
    action_phrase,
    closed,
    counted_noun,
    counted_nouns,
    fill_gap_token,
    phrase_text,
    phrase_tokens,
    question_gap,
    term_of,
    untitled_start,
)
from components.generation.span_choice import RULE_WAYS, pronoun_antecedent, pronoun_doer
from components.text.analyzer import STOP_WORDS, terms
from components.text.language import VALUE_LABELS, chunk_sentences, language_pipeline, parse, parse_syntax

# A title's trailing disambiguation ("Brand (play)") is not part of the name.
DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")
_TIME_UNITS = frozenset(terms("seconds minutes hours days weeks months years decades centuries"))
_PERSONAL = frozenset({"it", "he", "she", "they"})
_PERSONAL_WORD = re.compile(r"\b(?:it|he|she|they)\b", re.I)
_COORDINATION = re.compile(r"^\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|&\s+)$")


def pronoun_doers(
    shorts: dict[int, tuple[str, int, str]],
    picks: list[tuple[QuestionPart, Sentence, str, dict[str, float]]],
    found_how: list[dict[str, Any]],
    question_terms: frozenset[str],
    span_stats: dict[int, tuple[float, float]],
) -> None:
    """A part that asks for the doer of its verb, whose sentence has a personal pronoun do it ("In 1905 it acquired
    Quillby, a start-up founded by Ada Quill" for "Who bought Quillby?"), is answered by the name the pronoun stands
    for, an entity of the asked kind that agrees with the pronoun (`pronoun_antecedent`): the subject of the sentence
    before or, when the span cannot be what the pronoun stands for, first the subject of its own sentence's main
    clause, the pronoun coming later ("Ada Quill taught at Orvel College, where she founded ..."). Without one, a span
    the rules or the span model read inside a clause or phrase that modifies another noun ("founded by Ada Quill"),
    or one that cannot be what the pronoun stands for ("Orvel College" for "she"), is not the doer and is dropped:
    the part is answered by its cited sentence alone. A span that could be the pronoun's own antecedent (a name
    before it, "After Ada Quill left, she founded ...") stays."""
    for position, (text, number, how) in list(shorts.items()):
        if how not in RULE_WAYS or not picks[position][0].labels:
            continue
        part, sentence = picks[position][0], found_how[position]["sentence"]
        doer = pronoun_doer(sentence.text, part.text, question_terms, text)
        if doer is None or doer.span_could_be_it:
            continue
        # A span that cannot be what the pronoun stands for gives way to the subject before the pronoun in its own
        # sentence; one that may be (a name after it, "... he built with Ada Quill") only to the sentence before's.
        within = sentence.text if doer.span_disagrees else ""
        antecedent, label = pronoun_antecedent(
            sentence.before_text, doer.pronoun, part.labels, question_terms, within, doer.at
        )
        if antecedent:
            span_stats.pop(position, None)  # the span model rated another span: its rating does not hold here
            found_how[position]["kind_match"] = 1.0 if label == part.labels[0] else 0.5 if label else 0.0
            shorts[position] = (antecedent, number, "entity")
        elif doer.span_in_modifier or doer.span_disagrees:
            span_stats.pop(position, None)
            shorts.pop(position)


def _doers(doc: Any, anchors: list[int]) -> set[int]:
    """The tokens that do what a verb of the question does in `doc`: the subject of that verb, or of the verb it
    depends on ("The Broncos defeated the Panthers to win ..." -> "Broncos" wins), or the agent of a passive
    ("written by Andrew Kane")."""
    found: set[int] = set()
    for index in anchors:
        verb = doc[index]
        for _ in range(3):  # up through "to win" (xcomp), "and won" (conj), "after winning" (advcl)
            if verb.pos_ not in ("VERB", "AUX"):
                break
            for child in verb.children:
                if child.dep_ in SUBJECT_DEPS and verb.dep_ != "auxpass":
                    found.add(child.i)
                elif child.dep_ == "agent":
                    found.update(grandchild.i for grandchild in child.children if grandchild.dep_ == "pobj")
            if found or verb.dep_ not in ("xcomp", "conj", "advcl"):
                break
            verb = verb.head
    return found


# A phrase that is an argument (subject, object, object of a preposition) of a content word the question holds plays
# a role the question's predicate leaves open (`argument`).
ARGUMENT_ROLES = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "pobj", "oprd", "dative", "appos"})
NAMING_VERBS = frozenset({"call", "name", "know", "term", "refer", "dub", "entitle", "title"})


# The few phrases that cost least by position and form are read back into the question (the phrase in the wh-word's
# place) and compared with the sentence by the embedding model (`statement`); more of them when fitting.
STATEMENT_CANDIDATES = 3
LOGGED_PHRASES = 6


def phrase_span(
    sentence: str,
    part: QuestionPart,
    question_terms: frozenset[str],
    model: Any = None,
    scoring: AnswerScoring | None = None,
) -> str:
    """The noun phrase of `sentence` that a "what"/"which" part asks for; empty when none.

    The candidates are the sentence's entities and noun chunks (spaCy) that bring in words the question does not
    hold. A phrase headed by the noun the part asks about ("which company" -> "a Swedish company") is preferred, or
    the phrase the sentence equates that noun with ("The most common metal ... is nickel" -> "nickel"), then the
    phrase nearest the question's words in the sentence, with fewer of the question's own words. With an
    embedding `model`, the few best are each put in the wh-word's place in the question, and the statement that
    reads most like the sentence gains (`_statement_cosines`: one batch of a handful of short texts). The weights of
    these features are `scoring`'s (the packaged file's when None).
    """
    scoring = scoring or AnswerScoring.load()
    doc = parse(sentence)
    # The phrase in the role the question's wh-word plays ("What did Tesla patent?" -> the object of "patented").
    gap = question_gap(part.text)
    token = fill_gap_token(doc, gap, question_terms) if scoring.on("gap") else None
    filled = phrase_text(token) if token is not None else action_phrase(doc, gap) if scoring.on("gap") else ""
    if token is not None and filled:
        # "the concept of a reduction" for "what concept", "a stream of oxygen gas" for "what gas": when the phrase
        # or its "of" phrase is the noun asked about, the other is only its kind or its measure, and the "of" phrase
        # answers (but "what kind of district" asks for the sort the noun's own words give).
        of = next((grand for child in token.children if child.lower_ == "of" for grand in child.children), None)
        kind_of = KIND_OF.search(part.text)
        asked = {of.lemma_.lower(), *([] if kind_of else [token.lemma_.lower()])} if of is not None else set()
        if part.focus in asked and not repeats_question(phrase_text(of), question_terms):
            filled = phrase_text(of)
        # "One moth, the Dusk Moth, was brought ...": a common noun the sentence names answers with that name.
        elif (
            scoring.on("equated")
            and token.pos_ == "NOUN"
            and not any(doc[i].pos_ == "PROPN" for i in phrase_tokens(token))
        ):
            naming = equated_with(doc, token.lemma_.lower())
            name = next((doc[i] for i, noun in naming.items() if noun == token.i and doc[i].pos_ == "PROPN"), None)
            filled = (phrase_text(name) if name is not None else "") or filled
    if filled and not repeats_question(filled, question_terms):
        return filled
    anchors = _anchors(doc, question_terms)
    words_asked = part.text.lower().split()
    asks_subject = part.kind == "who" and len(words_asked) > 1 and words_asked[1] not in YES_NO_STARTS
    doers = _doers(doc, anchors) if scoring.on("doer") else set()
    asks_subject = asks_subject and scoring.on("doer")
    anchor_set = set(anchors)
    chunks = [chunk for chunk in doc.noun_chunks if chunk.root.pos_ != "PRON"]
    # An ordinal ("first", "50th") ranks something; it is not the thing asked for.
    candidates = [ent for ent in doc.ents if ent.label_ != "ORDINAL"] + chunks
    if _asks_several(part.text):
        # "What are the three sources ...?": a list of coordinated noun phrases is one answer.
        ends = {chunk.root.i: chunk.end for chunk in chunks}
        for chunk in chunks:
            last = [child.i for child in chunk.root.conjuncts if child.i > chunk.root.i and child.i in ends]
            if last:
                candidates.append(doc[chunk.start : ends[max(last)]])
    equated = equated_with(doc, part.focus) if part.focus not in {"", "?"} and scoring.on("equated") else {}
    if not equated and scoring.on("equated"):
        # "What was the total revenue of X?": the phrase the sentence equates that noun with, or gives as what it does.
        subject = copular_subject(part.text)
        equated = equated_with(doc, subject) or _complements(doc, subject) if subject else {}
    # A noun of the asked kind that the sentence equates with another phrase only describes what that phrase names,
    # unless the question names that phrase ("What kind of company is X?" -> "X, a postal company").
    describing = {noun for name, noun in equated.items() if term_of(doc[name]) not in question_terms}
    # A part that asks only for a place ("In which city ...?", "Where ...?") is not answered by a person's name, a date
    # or a number: the kinds exclude each other, whatever the phrase's role in the sentence ("founded by Ada Quill").
    asks_place = bool(part.labels) and set(part.labels) <= set(PLACE_LABELS)
    not_places = VALUE_LABELS | {"PERSON"}
    costs: dict[str, float] = {}
    features_of: dict[str, dict[str, float]] = {}
    shown: dict[str, str] = {}  # a phrase's text as the answer gives it
    for span in candidates:
        words = [token for token in span if not token.is_punct]
        if not words or len(words) > 8 or repeats_question(span.text, question_terms):
            continue
        span_terms = terms(span.text)
        if not span_terms or (asks_place and span.root.ent_type_ in not_places):
            continue
        repeated = sum(term in question_terms for term in span_terms) / len(span_terms)
        distance = min((min(abs(a - span.start), abs(a - (span.end - 1))) for a in anchors), default=span.start)
        root = span.root
        governor = root.head.head if root.dep_ == "pobj" else root.head
        features = {
            "distance": min(distance, 8),
            "repeated": repeated,
            "words": len(words),  # of two phrases for a thing, the fuller
            # An argument of a word the question holds: the role it leaves open.
            "argument": float(
                root.dep_ in ARGUMENT_ROLES and governor.i in anchor_set and governor.pos_ in {"VERB", "NOUN", "ADJ"}
            ),
            "equated": float(
                root.i in equated
                or (part.focus not in {"", "?"} and root.lemma_.lower() == part.focus and root.i not in describing)
            ),
            "proper_name": float(any(token.pos_ == "PROPN" for token in words)),  # a name is more often asked for
            "value": float(span.label_ in VALUE_LABELS),  # a date or number answers "what" less often than a thing
            "doer": float(asks_subject and root.i in doers),  # "Who won ...?": who did what the question asks
            "subject": float(asks_subject and root.i not in doers and root.dep_ in SUBJECT_DEPS),  # the likeliest doer
            # "where": the object of "in", "at", "from" ...
            "place": float(part.kind == "where" and root.dep_ == "pobj" and root.head.lower_ in PLACE_PREPOSITIONS),
        }
        cost = scoring.phrase_cost(features)
        text = span.text.strip(" ,;")
        bare = _unpossessed(span)
        shown[text] = closed(span.doc[max(bare.start, untitled_start(span)) : span.end].text.strip(" ,;"))
        if cost < costs.get(text, math.inf):
            costs[text], features_of[text] = cost, features
    logged = scoring.log is not None
    best = [text for text, _ in sorted(costs.items(), key=lambda item: item[1])]
    read = best[: LOGGED_PHRASES if logged else STATEMENT_CANDIDATES]
    if model is not None and len(read) > 1 and scoring.on("statement"):
        for text, cosine in zip(read, _statement_cosines(sentence, part.text, read, model), strict=True):
            features_of[text]["statement"] = cosine
    if logged and len(read) > 1:
        scoring.log.append({"kind": "phrase_span", "candidates": [(features_of[text], shown[text]) for text in read]})
    ranked = [
        (text, costs[text] + scoring.phrase_cost({"statement": features_of[text].get("statement", 0.0)}))
        for text in best[:STATEMENT_CANDIDATES]
    ]
    return shown[min(ranked, key=lambda item: item[1])[0]] if ranked else ""


def equated_with(doc: Any, focus: str) -> dict[int, int]:
    """The heads of the phrases the sentence equates with a noun of lemma `focus` (the noun the question asks about),
    each mapped to that noun: its apposition ("special guest performers Beyoncé and Bruno Mars"), the name it
    modifies or stands in apposition to ("skateboarder Tony Hawk", "Halvik Works, the oldest shipyard"), or the other
    side of the copula it stands on ("Closely related fields ... are X"): such a phrase names the thing the question's
    noun only describes."""
    found: dict[int, int] = {}
    for token in doc:
        if token.lemma_.lower() != focus:
            continue
        # A noun with "a"/"an" does not stand in close apposition to a name right beside it ("the painter Lena Holm"
        # but not "a painter Lena Holm"): a name after it is the subject of a clause that modifies it ("Corvane, a
        # company Ada Quill had founded"), one before it what the noun describes.
        indefinite = any(child.dep_ == "det" and child.lower_ in {"a", "an"} for child in token.children)
        found.update(
            (child.i, token.i)
            for child in token.children
            if child.dep_ == "appos" and _beside(token, child) and not (indefinite and _close_after(token, child))
        )
        if indefinite and token.dep_ in {"compound", "amod"} and token.head.pos_ == "PROPN":
            if token.head.dep_ == "appos":  # "Corvane, a company Ada Quill ...": the noun describes Corvane
                found[token.head.head.i] = token.i
        elif token.dep_ in {"compound", "amod", "appos"} and _anchor(token).pos_ == "PROPN":
            found[_anchor(token).i] = token.i  # "his rival Conrad", "Halvik Works, the oldest shipyard"
        # "the Legislative Council (the upper house)": the phrase a common noun stands beside, when none beside it.
        elif token.dep_ == "appos" and token.pos_ == "NOUN" and "appos" not in {child.dep_ for child in token.children}:
            found[_anchor(token).i] = token.i
        if token.dep_ in {"nsubj", "attr"} and token.head.lemma_ == "be":
            other = "attr" if token.dep_ == "nsubj" else "nsubj"
            found.update((child.i, token.i) for child in token.head.children if child.dep_ == other)
        # A naming verb equates too: "the teacher is known as a guru", "a technique called X", "which is named X".
        for verb in naming_clauses(token):
            if verb.lemma_ in NAMING_VERBS:
                found.update((name.i, token.i) for name in predicates(verb))
    return found


def _anchor(token: Any) -> Any:
    """What `token` describes: its head, or for an apposition set off by a comma, the name right before that comma
    when the parse hangs the apposition elsewhere ("a round led by Brightwater, the firm of Ada Quill": the firm is
    Brightwater, not the round); a comma-set apposition stands right after what it names."""
    head = token.head
    if token.dep_ != "appos":
        return head
    start = min(t.i for t in token.subtree)
    if start < 2 or token.doc[start - 1].text != ",":
        return head
    name = token.doc[start - 2]
    while name.dep_ in {"compound", "flat"} and name.head.i > name.i and name.head.i < start - 1:
        name = name.head
    if name.pos_ != "PROPN" or name.i == head.i or head.i in {t.i for t in name.subtree}:
        return head
    return name


def _beside(noun: Any, child: Any) -> bool:
    """Whether the apposition `child` stands right after `noun`'s own phrase, only punctuation between them, as an
    apposition does ("the teams in the valley, the Rams and the Owls"); the parse may hang a phrase that comes
    later, after other words, on the noun ("teams include the A (X); B (Y)": B is no apposition of "teams")."""
    own = [t.i for t in noun.subtree if t.i not in {u.i for u in child.subtree}]
    start = min(t.i for t in child.subtree)
    return start < noun.i or all(t.is_punct for t in noun.doc[max(own) + 1 : start])


def _close_after(noun: Any, child: Any) -> bool:
    """Whether `child`'s phrase follows `noun` with no punctuation between them (close apposition: "the painter
    Lena Holm", not "a sluice (a gate)")."""
    start = min(token.i for token in child.subtree)
    return start > noun.i and not any(token.is_punct for token in noun.doc[noun.i + 1 : start])


def _complements(doc: Any, noun: str) -> dict[int, int]:
    """The heads of what a noun of lemma `noun` does as a subject ("Total revenue ... amounted to 40 million crowns" ->
    "crowns"): its verb's object or complement, or the object of a preposition of that verb after it; each mapped to
    the noun."""
    found: dict[int, int] = {}
    for token in doc:
        if token.lemma_.lower() != noun or token.dep_ not in SUBJECT_DEPS:
            continue
        for child in token.head.children:
            if child.dep_ in {"dobj", "attr", "oprd", "acomp"}:
                found[child.i] = token.i
            elif child.dep_ == "prep" and child.i > token.i:
                found.update((grandchild.i, token.i) for grandchild in child.children if grandchild.dep_ == "pobj")
    return found


def _asks_several(question: str) -> bool:
    """Whether the question asks for several things: its wh-word determines a plural noun ("what countries") or
    is the complement of a plural "are"/"were" ("What were the names ...?")."""
    doc = parse_syntax(question)
    wh = next((token for token in doc if token.lower_ in WH_PHRASE_WORDS), None)
    if wh is None:
        return False
    if wh.dep_ == "det":
        return wh.head.tag_ in {"NNS", "NNPS"}
    return wh.head.lower_ in {"are", "were"}


def _statement_cosines(sentence: str, question: str, phrases: list[str], model: Any) -> list[float]:
    """Each phrase's cosine between the sentence and the question with the phrase in its wh-word's place ("What
    register ... placed on?" -> "the sex offenders register ... placed on?"): the phrase that plays the asked role
    makes the statement closest to the sentence. All 0 when the question has no wh-word."""
    doc = parse_syntax(question)
    wh = next((token for token in doc if token.lower_ in WH_PHRASE_WORDS), None)
    if wh is None:
        return [0.0] * len(phrases)
    # "What register": the noun the wh-word determines goes with it, and "what kind of company" its "of" phrase.
    end = wh.i + 1
    if wh.dep_ == "det" and wh.head.i > wh.i:
        end = max(phrase_tokens(wh.head)) + 1 if wh.head.lemma_.lower() in LIGHT_NOUNS else wh.head.i + 1
    before, after = doc[: wh.i].text, doc[end:].text
    vectors = model.embed([sentence, *(f"{before} {text} {after}".strip() for text in phrases)])
    return [float(cosine) for cosine in vectors[1:] @ vectors[0]]


def ranked_answer_span(
    sentence: str, part: QuestionPart, question_terms: frozenset[str], scoring: AnswerScoring | None = None
) -> tuple[str, int]:
    """The span of `sentence` that answers `part` (an entity of one of its labels that the question does not
    already name, coordinated names joined: "Emil Eifrem, Johan Svensson and Peter Neubauer"; empty when none), and
    the position of its label among the part's labels (0: the most wanted).

    Among several, the one that costs least by `scoring`'s entity weights (the packaged file's when None) wins: near
    the question's terms in the sentence, of an earlier label of the part ("who" prefers a person to an
    organisation), in the role the question's wh-word plays.
    """
    if not part.labels:
        return "", 0
    scoring = scoring or AnswerScoring.load()
    doc = parse(sentence)
    labels = part.labels
    counted = counted_noun(part.text) if part.kind in {"how_many", "how_much"} else ""
    if counted in _TIME_UNITS:
        labels += ("DATE", "TIME")  # "How many hours ...?" -> "about three hours", a time to the recogniser
    allowed = [ent for ent in doc.ents if ent.label_ in labels and not repeats_question(ent.text, question_terms)]
    if part.labels[0] == "DATE":
        # A year the recogniser left out ("dated 1496–97", "rebuilt 1775–1795", "around 1712") is a date too.
        taken = {token.i for ent in allowed for token in ent}
        allowed += [
            Span(doc, token.i, token.i + 1, label="DATE")
            for token in doc
            if token.i not in taken and YEARS.fullmatch(token.text) and not repeats_question(token.text, question_terms)
        ]
        allowed.sort(key=lambda ent: ent.start)
    if part.kind == "who":  # "the British rock group Coldplay": a nationality modifying a noun is not who is asked for
        allowed = [ent for ent in allowed if not (ent.label_ == "NORP" and ent.root.dep_ in {"amod", "compound"})]
    named_noun = part.focus not in {"", "?"} and scoring.on("equated")
    if named_noun and any(doc[i].pos_ == "PROPN" for i in equated_with(doc, part.focus)):
        # "What rock group ...?" -> "the British rock group Coldplay": where the sentence names the asked noun, an
        # adjective describing it says what kind of group it is, it does not name it ("What cuisine ...?" over "the
        # Italian cuisine", with no name, is answered by the adjective).
        allowed = [
            ent
            for ent in allowed
            if not (ent.root.pos_ == "ADJ" and ent.root.dep_ == "amod" and ent.root.head.lemma_.lower() == part.focus)
        ]
    gap = fill_gap_token(doc, question_gap(part.text), question_terms) if scoring.on("gap") else None
    filled = phrase_tokens(gap) if gap is not None else set()
    if part.kind == "who" and not filled and scoring.on("equated"):
        # "Who is the primary operator?" -> "Stagecoach is the primary operator": the name equated with its noun.
        subject = copular_subject(part.text)
        filled = set(equated_with(doc, subject)) if subject else set()
    if part.focus not in {"", "?"} and not filled and scoring.on("equated"):
        # "Which firm led the round?" -> "led by Brightwater, the firm of Ada Quill": the name the sentence equates
        # with the asked noun is the one asked for, not a name inside the phrase that describes it.
        equated = [doc[index] for index in equated_with(doc, part.focus)]
        filled = {token.i for token in equated}
        named = [token for token in equated if token.pos_ == "PROPN"]
        if named:
            # ... whatever kind the recogniser gives that name (or none): the asked noun says what it is.
            held = [ent for ent in allowed if ent.root.i in filled]
            if held:
                allowed = held
            elif (found := phrase_text(named[0])) and not repeats_question(found, question_terms):
                return found, 0
    elif (
        part.focus not in {"", "?"}
        and filled
        and scoring.on("equated")
        and not any(ent.root.i in filled for ent in allowed)
    ):
        # "Which firm led the round?" -> "led by Addax, the firm of Ada Quill": the question's verb takes the name
        # the sentence equates with the asked noun; when the recogniser gives that name no kind asked (or none), it
        # still answers, not another name of an asked kind further on ("Ada Quill").
        agreed = [doc[index] for index in equated_with(doc, part.focus) if index in filled]
        named = [token for token in agreed if token.pos_ == "PROPN"]
        if named and (found := phrase_text(named[0])) and not repeats_question(found, question_terms):
            return found, 0
    if part.kind == "where" and filled and not any(ent.root.i in filled for ent in allowed):
        # "Where did they practise?" -> "they practised at Stanford University": the place the question's verb
        # takes, whatever the recogniser calls it, before a place the sentence names elsewhere.
        if (found := phrase_text(gap)) and not repeats_question(found, question_terms):
            return found, 0
    if not allowed:
        return "", 0
    groups: list[list[Any]] = [[allowed[0]]]
    for ent in allowed[1:]:
        previous = groups[-1][-1]
        if _COORDINATION.match(doc.text[previous.end_char : ent.start_char]):
            groups[-1].append(ent)
        else:
            groups.append([ent])
    # "When did she join A and when did she move to B?": the second part's date is the one beside B, not beside A;
    # a part measures nearness to its own words where the sentence holds them, else to the whole question's.
    own = _anchors(doc, (frozenset(part.terms) & question_terms) | _lemma_terms(part.text))
    anchors = own or _anchors(doc, question_terms)

    def label_rank(group: list[Any]) -> int:
        rank = min(labels.index(ent.label_) for ent in group)
        if labels[0] == "DATE" and not any(char.isdigit() for ent in group for char in ent.text):
            rank += 2  # "the regular season", "spring": a date, but rarely the one a "when" asks for
        return rank

    doers = _doers(doc, anchors) if part.kind == "who" and scoring.on("doer") else set()
    if counted and scoring.on("gap"):
        # "How many seats ...?" -> "12 seats": the number that counts the asked noun plays the wh-word's role.
        filled = filled | {ent.root.i for ent in allowed if counted in counted_nouns(ent.root)}
    if part.kind == "when" and own and not question_terms <= frozenset(part.terms) and scoring.on("gap"):
        # "When did she join A and when did she leave it?" -> "joined A in March 2004 and left in May 2011": in a
        # several-part question each part's time is the one its own verb takes, not a time nearer to it in words
        # that belongs to another part's verb.
        filled = filled | {ent.root.i for ent in allowed if _governing_verb(ent.root) in own}

    def features(group: list[Any]) -> dict[str, float]:
        # "Who ..." asks for the doer of the question's verb: a name that does it answers before a name the
        # sentence mentions elsewhere; any part prefers a name in the role its wh-word plays.
        distance = min(
            (min(abs(anchor - ent.start), abs(anchor - (ent.end - 1))) for ent in group for anchor in anchors),
            default=0,
        )
        return {
            "distance": distance,
            "position": 0 if anchors else group[0].start,
            "label_rank": label_rank(group),
            "role": float(any(ent.root.i in (filled or doers) for ent in group)),
        }

    costs = [(scoring.entity_cost(features(group)), position) for position, group in enumerate(groups)]
    best = groups[min(costs)[1]]
    if scoring.log is not None and len(groups) > 1:
        candidates = [(features(group), _entity_text(doc, group, part, counted)) for group in groups]
        scoring.log.append({"kind": "entity_span", "candidates": candidates})
    return _entity_text(doc, best, part, counted), label_rank(best)


def _entity_text(doc: Any, group: list[Any], part: QuestionPart, counted: str) -> str:
    """The short answer a group of coordinated entities gives: without a hedge on its number or the unit the question
    names, with a currency sign the recogniser left out, a bare "how much" number with the noun it counts."""
    best = group
    first = _unhedged(best[0])
    if first.label_ == "MONEY" and first.start and doc[first.start - 1].is_currency:
        first = doc[first.start - 1 : first.end]  # "£40,000": the recogniser may leave the currency sign out
    unit = counted or (next(iter(terms(part.focus)), "") if part.kind == "when" else "")
    found = _without_unit(doc[first.start : best[-1].end], unit)
    # "How much ...?" -> "over 50 letters", "2,000 m": a bare number goes with the noun it counts, a unit unasked.
    noun = doc[found.end] if found.end < len(doc) and best[-1].label_ == "CARDINAL" else None
    if part.kind == "how_much" and noun is not None and found[-1].head == noun and noun.pos_ in {"NOUN", "PROPN"}:
        found = doc[found.start : found.end + 1]
    return found.text.strip(" ,;-–")


# A reference mark written after a word: "[4]", "[12]", "[b]"; whole anywhere, or cut off by the span's end ("[4").
_REFERENCE_MARK = re.compile(r"\[(?:\d{1,3}|[a-z])\]")
_CUT_REFERENCE_MARK = re.compile(r"\[(?:\d{1,3}|[a-z])?$")


# A possessive marker that ends a span ("Ada Quill's"): what it possesses lies outside, so the name ends before it.
_POSSESSIVE_END = re.compile(r"(?<=\w)['’]s$")
# A number with "'s" is a name's possessive only after a word of that name ("Orvel Mark 9's"); after any other word
# it writes a plural ("the 1980's", "late '90's": a decade, not a year).
_NUMBER_WITH_S = re.compile(r"^['’]?\d+['’]s$")


def _possessive_dropped(text: str) -> str:
    """`text` without a possessive marker at its end, a one-word span and a number's plural aside."""
    if " " not in text.strip() or not _POSSESSIVE_END.search(text):
        return text
    *_, before, last = text.split()
    if _NUMBER_WITH_S.match(last) and not (before[:1].isupper() and before.lower() not in STOP_WORDS):
        return text
    return _POSSESSIVE_END.sub("", text)


def bare_span(text: str) -> str:
    """A short answer without reference marks ("in 2015.[4" -> "in 2015"), an aside it opens but does not close
    ("the Quill Institute (QI" -> "the Quill Institute"), a possessive marker at its end ("Ada Quill's" -> "Ada
    Quill") or closing punctuation, a full stop that ends an abbreviation ("Washington, D.C.", "Orbit Ltd.", "John
    F.") aside."""
    text = closed(_CUT_REFERENCE_MARK.sub("", _REFERENCE_MARK.sub("", text)).rstrip(" ,;:"))
    text = _possessive_dropped(text)
    last = text.rsplit(maxsplit=1)[-1] if text.strip() else ""
    initial = len(last) == 2 and last[0].isalpha()  # "John F."
    abbreviation = initial or "." in last[:-1] or last in language_pipeline().Defaults.tokenizer_exceptions
    return text.rstrip(" ,;:") if not text.endswith(".") or abbreviation else text[:-1].rstrip(" ,;:")


def alternatives(sentence: str, part: QuestionPart, question_terms: frozenset[str]) -> int:
    """How many entities of the part's labels besides the one chosen the sentence names (its parse is cached)."""
    found = {ent.text for ent in parse(sentence).ents if ent.label_ in part.labels}
    return max(0, len({text for text in found if not repeats_question(text, question_terms)}) - 1)


def _without_unit(span: Any, unit: str) -> Any:
    """The value without the unit the question names ("How many yards ...?" -> "487" of "487 yards", "In what
    century ...?" -> "the 11th"); "What year ...?" asks for the year of a fuller date ("August 1, 1774")."""
    years = [token.i for token in span if YEARS.fullmatch(token.text)] if unit == "year" else []
    if len(years) == 1:
        return span.doc[years[0] : years[0] + 1]
    if not unit or len(span) < 2:
        return span
    if term_of(span[0]) == unit:
        return span[1:]
    if term_of(span[-1]) != unit:
        return span
    end = len(span) - 1
    while end > 1 and span[end - 1].head == span[-1] and span[end - 1].dep_ in {"amod", "compound"}:
        if span[end - 1].like_num:
            break  # "the 12th century" keeps "12th"
        end -= 1  # "square kilometres" goes whole
    return span[:end]


def _unhedged(ent: Any) -> Any:
    """The entity without a leading hedge on its number ("about 1300", "approximately 6 miles" -> "1300", "6 miles"):
    a plain adverb or adjective directly before a number or a range ("only 30–50"), or an estimate ("an estimated
    4,000"); a comparative ("more than 20") stays."""
    start = 1 if len(ent) > 2 and ent[0].tag_ == "DT" and ent[1].tag_ == "VBN" else 0  # "an estimated 4,000"
    number = len(ent) > start + 1 and (ent[start + 1].like_num or ent[start + 1].text[:1].isdigit())
    return ent[start + 1 :] if number and ent[start].tag_ in {"RB", "JJ", "VBN"} else ent


def _unpossessed(span: Any) -> Any:
    """The phrase without its leading possessive pronouns ("their difficulty", "his or her vocations" -> "difficulty",
    "vocations"): a possessive points outside the phrase and adds nothing to the answer."""
    start = 0
    while start < len(span) - 1 and (span[start].tag_ == "PRP$" or (start and span[start].dep_ == "cc")):
        start += 1
    return span[start:]


def relation_terms(question: str) -> frozenset[str]:
    """The terms of what the question asks of the thing it ends at: the noun its wh-word determines ("what medal",
    "whose godfather") and the word that governs them ("awarded what medal", "developed by what company"), or the
    noun a copula equates with the wh-word ("Who is the spouse of ..."). The last hop of a chain should hold them."""
    doc = parse_syntax(question)
    wh = next((token for token in doc if token.lower_ in WH_WORDS), None)
    if wh is None:
        return frozenset()
    words, asked = [], wh
    if wh.dep_ in {"det", "poss"} and wh.head.pos_ == "NOUN":
        asked = wh.head
        words.append(asked)
    head = asked.head
    while (head.pos_ == "ADP" or head.dep_ in {"aux", "auxpass"}) and head.head.i != head.i:
        head = head.head  # "developed by what company", "where are they found": through to the verb
    if head.lemma_ == "be":
        words += [child for child in head.children if child.dep_ in {"attr", "nsubj", "acomp"} and child.i != asked.i]
    elif head.pos_ in {"VERB", "NOUN"} and head.i != asked.i:
        words.append(head)
    return frozenset(term for word in words if word.pos_ in {"NOUN", "VERB", "ADJ"} for term in terms(word.text))


def subject_answer(
    cited: list[Sentence],
    documents: list[Document],
    question: str,
    asked: frozenset[str],
    weights: dict[str, float],
    min_support: float,
) -> tuple[str, int] | None:
    """The name a cited sentence's subject stands for, when the sentence holds what the question asks (its relation,
    or a supporting share of its terms) and its subject is a pronoun or a short form of its chunk's title, and the
    chunk opens its document: the opening sentence's noun phrase holding the title ("Orvelle J. Dunmark Jr."), or
    for a "what kind of ..." question the phrase that opening sentence equates it with ("The Kestrel Lark is a Talmont
    T-9 cargo glider"). Returns (the name, its citation number); None when no sentence qualifies."""
    relation = relation_terms(question)
    for sentence in cited:
        document = documents[sentence.number - 1]
        meta = document.meta or {}
        title = terms_of(DISAMBIGUATION.sub("", str(meta.get("source_title") or "")))
        opening = next(iter(chunk_sentences(document.content or "", meta)), "")
        if int(meta.get("chunk_index") or 0) or not opening or not title or title <= asked:
            continue
        if sentence.text == opening or not (relation & sentence.terms or share_of(weights, sentence) >= min_support):
            continue
        if not (title & sentence.terms or _PERSONAL_WORD.search(sentence.text)):
            continue  # no word that could stand for the chunk's subject: not worth a parse
        subject = next(
            (token for token in parse(sentence.text) if token.dep_ in SUBJECT_DEPS and token.head.dep_ == "ROOT"), None
        )
        if subject is None:
            continue
        named = " ".join(token.text for token in subject.subtree if token.dep_ == "compound" or token is subject)
        if subject.lower_ not in _PERSONAL and not frozenset() < terms_of(named) <= title:
            continue
        doc = parse(opening)
        entity = next((chunk for chunk in doc.noun_chunks if title <= terms_of(chunk.text)), None)
        if entity is None:
            continue
        found = entity.text
        if KIND_OF.search(question):
            attributes = (chunk for chunk in doc.noun_chunks if chunk.root.dep_ == "attr")
            found = next((chunk.text for chunk in attributes if chunk.root.head == entity.root.head), found)
        if not repeats_question(folded(found), asked):
            return found, sentence.number
    return None


def folded(text: str) -> str:
    """The text without accents ("Akinoshū" -> "Akinoshu"): a question is often typed without them."""
    return "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))


def _anchors(doc: Any, question_terms: frozenset[str]) -> list[int]:
    """The positions of the words of `doc`, stop words aside, whose stem or whose lemma's stem the question holds
    ("left" is found by "leave", "joined" by "join")."""
    return [
        token.i
        for token in doc
        if not token.is_stop
        and not question_terms.isdisjoint(terms(token.lower_)[:1] + terms(token.lemma_.lower())[:1])
    ]


def _governing_verb(token: Any) -> int | None:
    """The position of the verb a phrase headed by `token` is an adjunct or argument of ("left ... in May 2011" ->
    "left"), through prepositions and nouns; None when no verb governs it."""
    for up in token.ancestors:
        if up.pos_ in {"VERB", "AUX"}:
            return up.i
    return None


def _lemma_terms(text: str) -> frozenset[str]:
    """The stems of the lemmas of the words of `text`, stop words aside ("when did she leave it?" -> {"leav"}; "who
    left it?" -> {"leav"}): the written form of a verb or a plural need not be the sentence's."""
    return frozenset(stem for token in parse_syntax(text) if not token.is_stop for stem in terms(token.lemma_)[:1])


def repeats_question(text: str, question_terms: frozenset[str]) -> bool:
    """A span whose every content term is in the question names what was asked about, not the answer."""
    return frozenset() < terms_of(text) <= question_terms
