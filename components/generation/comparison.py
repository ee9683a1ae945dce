"""Questions answered by comparing what the sources say about two or more named subjects: "Which band was formed
first, A or B?" (the subject whose value wins), "Are A and B both film directors?" (yes when every subject's own
sentences hold what is asked about it).

The subjects are the question's names joined by "or" / "and" (spaCy's entities, widened to the runs of proper nouns
and capitalised words they touch, and those runs themselves, read from the words rather than the parse's noun
phrases, which a misparse can hang on the common noun after a name: "Are both A and B painters?"). Each subject's
evidence is the candidate sentences that name it, in themselves or in their chunk's title; a subject with none gets
no verdict said of it. A comparison by a value ("older", "first", "larger", "fewer") compares the first date (for
time, read by the dates module) or the largest number (for size) in each subject's evidence, numbers as numbers; any
other comparison picks the subject whose evidence holds more of the question's remaining words ("Which singer is
American, A or B?"). General English only: no rule names a question set's words or entities.

Usage:
```python
verdict = compare("Which band was formed first, Lantern or Harbour?", sentences)
verdict.answer, verdict.evidence  # 'Lantern', [the sentences read for each subject]
```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from components.generation.answer_confidence import BOTH, CHOICE, YES_NO
from components.generation.conflict_finder import AMOUNT_LABELS, AMOUNT_TOLERANCE, amount_key, date_key
from components.generation.life_dates import BIRTH_WORDS
from components.generation.question_analysis import HEAD_NOUN_LABELS, WH_WORDS
from components.graph.dates import resolve_date
from components.text.analyzer import terms, words
from components.text.language import VALUE_LABELS, parse

# Words that compare by time: the earlier value wins, or the later one.
EARLIER = frozenset("older oldest first earlier earliest before elder eldest sooner".split())
LATER = frozenset("younger youngest newer newest later latest last recent after".split())
# Words that compare by size: the larger value wins, or the smaller one.
LARGER = frozenset(
    "larger largest bigger biggest longer longest taller tallest higher highest more most greater greatest heavier "
    "heaviest wider widest deeper deepest".split()
)
SMALLER = frozenset(
    "smaller smallest shorter shortest fewer fewest less least lower lowest lighter lightest narrower".split()
)
# A subject's sentences must hold this share of what is asked about it for a "yes".
YES_SHARE = 0.6
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_DECADES = frozenset(f"{decade}0s" for decade in range(100, 210))
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
# What a question asks when it asks when something ended: a fallback date (see `_values`) is a start's, not an end's.
_END_EVENTS = frozenset(
    terms("die died death close closed end ended fold folded disband disbanded dissolve dissolved retire retired")
    + terms("cease ceased shut demolish demolished abolish abolished defunct")
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NEGATION = re.compile(r"\b(?:not|never|no longer|neither|nor)\b", re.I)
# Words by which a question says it asks of several subjects at once.
_SEVERAL = re.compile(r"\b(?:both|same|either|neither)\b", re.I)
# The dependencies of a question's own verb (the opening auxiliary of "Are A and B ...?").
_VERB_DEPS = frozenset({"ROOT", "aux", "auxpass"})
# An alternative listed after a question's comma is a name or a short noun phrase: a few words, none of these classes.
_MAX_ALTERNATIVE_WORDS = 4
_NO_ALTERNATIVE = frozenset({"ADP", "AUX", "VERB", "SCONJ", "PRON", "CCONJ", "PART"})
# Word classes that are no word of a name by their capital alone.
_FUNCTION_TAGS = frozenset({"ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ"})
_NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})


@dataclass
class Verdict:
    """The short answer of a comparison or yes/no question, and the sentences it rests on (one or more a subject)."""

    answer: str
    evidence: list[Any]
    # How it was read (`answer_confidence.VERDICT_KINDS`): a choice among options, a yes/no asked of several subjects
    # alike, or another yes/no.
    kind: str = YES_NO


def subjects(question: str, joiner: str) -> list[str]:
    """The names `joiner` ("or", "and") coordinates in `question`, in order: "Which is older, A or B?" -> [A, B].

    The recogniser sometimes takes two coordinated names for one ("The Lanterns or Harbour Choir", a title without
    the comma before it). When no two names are coordinated otherwise, such a name is cut at its `joiner`: always at
    an "or" (a choice between names), at an "and" only when the question says it asks of several ("both", "same",
    "either", "neither"), since one name may hold an "and" ("Bosnia and Herzegovina")."""
    doc = parse(question)
    found = _coordinated(doc, joiner, split=False)
    if not found and (joiner == "or" or _SEVERAL.search(question)):
        found = _coordinated(doc, joiner, split=True)
    if joiner == "or":
        # The options an alternative question lists after its comma are whole where the recogniser cut a name short
        # ("Formula 1 97" read as "Formula"): they stand for the names found inside them.
        options = _alternatives(doc)
        if options and (len(found) < 2 or _inside(found, options)):
            found = options
    return found


def listed_options(question: str) -> list[str]:
    """The two options an alternative question lists after its only comma ("Which is older, A or B?"), when they are
    all the names it offers to choose from; [] for any other question, and for a list of three whose first name comes
    before the comma ("a work like the Quran, Torah or Bible"), where what is asked may be none of them."""
    options = _alternatives(parse(question))
    return options if options and subjects(question, "or") == options else []


def _inside(names: list[str], options: list[str]) -> bool:
    """Whether each option holds one of `names` and each name lies in an option, as whole words."""

    def holds(option: str, name: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", option.lower()) is not None

    return all(any(holds(option, name) for name in names) for option in options) and all(
        any(holds(option, name) for option in options) for name in names
    )


def _alternatives(doc: Any) -> list[str]:
    """The two alternatives an alternative question lists after its comma, whatever their case: "Which is older,
    X or Y?" -> [X, Y] (a name written in lower case, "Which was founded first, deepset or Zilliz?", is no proper
    noun to the tagger). Each must be a short run of words with no verb, preposition or clause of its own ("Which
    came first, A or B as open source?" lists no two names), and the question must list no more than two; []
    otherwise."""
    words = [token for token in doc if not token.is_space]
    while words and words[-1].is_punct:
        words.pop()  # the closing "?" (or "?!")
    if not words:
        return []
    joiners = [token.i for token in words if token.lower_ == "or"]
    commas = [token.i for token in words if token.text == ","]
    # One comma, before the one "or", closing the question's own words: a second comma, or a colon that opens a list
    # ("Who is older: A, B or C?"), would make it a list of three or more.
    if len(joiners) != 1 or len(commas) != 1 or commas[0] > joiners[0] or any(t.text == ":" for t in doc[: commas[0]]):
        return []
    sides = (doc[commas[0] + 1 : joiners[0]], doc[joiners[0] + 1 : words[-1].i + 1])
    found = []
    for side in sides:
        kept = [token for token in side if not token.is_space and not token.is_punct]
        kept = kept[1:] if kept and kept[0].lower_ in {"the", "a", "an"} else kept
        # A word is what spaces delimit: the parts of "scikit-learn" are one word, whatever the tagger calls them.
        starts = [token for token in kept if token.i == kept[0].i or doc[token.i - 1].whitespace_]
        if not 0 < len(starts) <= _MAX_ALTERNATIVE_WORDS or any(
            token.pos_ in _NO_ALTERNATIVE and not _in_title(token, kept) for token in starts
        ):
            return []
        text = doc[kept[0].i : kept[-1].i + 1].text
        # A bracket the option opens and the question closes after it is a gloss, not part of the name ("Kestrel
        # (band)"): the closing bracket, a punctuation mark at the end, was left out above.
        found.append(re.sub(r"\s*\([^)]*$", "", text) or text)
    return found


def _in_title(token: Any, side: list[Any]) -> bool:
    """Whether `token` is a word of a title among `side`'s words: capitalised inside the question ("Cool It Carol!"),
    or a lower-case preposition between two capitalised words, its article beside it ("Four Dimensions of Greta",
    "Gone with the Wind")."""
    if token.text[:1].isupper() and not token.is_sent_start:
        return True
    if token.pos_ != "ADP" or token.i in (side[0].i, side[-1].i):
        return False
    after = token.doc[token.i + 1]
    after = token.doc[after.i + 1] if after.pos_ == "DET" and after.i < side[-1].i else after
    return token.doc[token.i - 1].text[:1].isupper() and after.text[:1].isupper()


def _coordinated(doc: Any, joiner: str, split: bool) -> list[str]:
    entities = [_without_verb(ent) for ent in doc.ents if ent.label_ in _NAME_LABELS]
    entities = [span for span in entities if len(span)]
    entities = [side for ent in entities for side in _split_at(ent, joiner)] if split else entities
    names = _with_runs(doc, entities, _name_runs(doc))
    found: list[str] = []
    for token in doc:
        if token.lower_ != joiner:
            continue
        before = [span for span in names if span.end <= token.i and token.i - span.end <= 1]
        after = [span for span in names if span.start > token.i and span.start - token.i <= 2]
        if before and after:
            for span in (*_listed_before(before[-1], names), before[-1], after[0]):
                text = re.sub(r"^(?:the|a|an)\s+", "", span.text.strip(" ,"), flags=re.I)
                if text and text not in found:
                    found.append(text)
    return found


def _is_name_word(token: Any) -> bool:
    """A word of a name: a proper noun, or a capitalised word inside the sentence that the tagger took for a common
    noun or an adjective ("Are both Ferns and Willows bands?"); a capitalised function word ("On", "The") starts a
    title the recogniser alone can bound."""
    if token.pos_ == "PROPN":
        return True
    return (
        token.is_alpha
        and token.text[:1].isupper()
        and not token.is_sent_start
        and token.pos_ not in _FUNCTION_TAGS
        and token.text != "I"
    )


def _name_runs(doc: Any) -> list[Any]:
    """The question's proper-noun phrases, read from the words themselves rather than from noun chunks (a misparse
    can hang a name on the common noun after it: "Tavrin Kelso painters"): each a run of name words, kept whole
    across a preposition (and its article) that the parse attaches to the name word before it ("the Bank of the
    Kestrel")."""
    runs: list[Any] = []
    start = None
    i = 0
    while i < len(doc):
        token = doc[i]
        if _is_name_word(token):
            start = i if start is None else start
            i += 1
            continue
        link = start is not None and token.pos_ == "ADP" and token.head.i == i - 1 and token.is_lower
        after = i + 1 + (i + 1 < len(doc) and doc[i + 1].pos_ == "DET" and doc[i + 1].is_lower)
        if link and after < len(doc) and _is_name_word(doc[after]):
            i = after
            continue
        if start is not None:
            runs.append(doc[start:i])
            start = None
        i += 1
    if start is not None:
        runs.append(doc[start:])
    return runs


def _with_runs(doc: Any, entities: list[Any], runs: list[Any]) -> list[Any]:
    """The names of a question: each entity widened to the proper-noun runs it overlaps ("Tavrin" to "Tavrin
    Kelso"), and the runs no entity overlaps, in order. An entity that holds a joiner ("the Bank of Kestrel and
    Amberline") stays whole."""
    names = []
    for ent in entities:
        touched = [run for run in runs if _overlaps(run, [ent])]
        start = min([ent.start, *(run.start for run in touched)])
        end = max([ent.end, *(run.end for run in touched)])
        names.append(doc[start:end])
    names += [run for run in runs if not _overlaps(run, names)]
    return sorted(names, key=lambda span: span.start)


def _without_verb(span: Any) -> Any:
    """`span` without the question's own verb at its start: the recogniser sometimes takes the opening auxiliary
    into a name ("Are Quillon Press")."""
    start = span.start
    while start < span.end and span.doc[start].pos_ in ("AUX", "VERB") and span.doc[start].dep_ in _VERB_DEPS:
        start += 1
    return span.doc[start : span.end]


def _listed_before(name: Any, names: list[Any]) -> list[Any]:
    """The names a comma-separated list gives before `name`, the parse joining each to it ("A, B and C" -> [A]). A
    word the tagger reads as an adjective is what is asked, not a subject ("Which band is British, A or B?"), and so
    is a name after a possessive or a preposition ("Which raised more in its Series A, B or C?")."""
    listed: list[Any] = []
    current = name
    while True:
        comma = current.start - 1
        if comma < 1 or current.doc[comma].text != ",":
            return listed
        earlier = [span for span in names if span.end == comma]
        if not earlier or not _conjoined(earlier[0], name) or all(t.pos_ == "ADJ" for t in earlier[0]):
            return listed
        opening = earlier[0].start - 1
        if opening >= 0 and (earlier[0].doc[opening].tag_ in {"PRP$", "IN"}):
            return listed
        if opening >= 0 and _predicate_of_wh_clause(earlier[0].doc, opening, earlier[0]):
            return listed
        listed.insert(0, earlier[0])
        current = earlier[0]


def _predicate_of_wh_clause(doc: Any, verb: int, name: Any) -> bool:
    """Whether `name`, right after `verb`, completes the question's own clause rather than opening a list of options:
    `verb` is the verb of the wh-word's clause (the wh-word hangs on it or on its subject), and `name` is not that
    verb's subject ("Which singer is Welsh, A or B?", "Which judoka represented Canada, A or B?": what is asked of the
    options, however the tagger reads it). "When were A, B and C founded?" (the wh-word no subject) and "Which did A,
    B or C release first?" (a "do" that only carries the question) keep A."""
    token = doc[verb]
    if token.pos_ not in ("AUX", "VERB") or token.lemma_ == "do":
        return False
    # The wh-word hangs on the verb, or on its subject ("Which singer"), before it (the parse may call it the object).
    asked = any(
        word.lower_ in WH_WORDS
        and (word.head == token or (word.head.head == token and word.head.dep_ in _SUBJECT_DEPS))
        for word in doc[:verb]
    )
    return asked and not any(word.dep_ in _SUBJECT_DEPS for word in name)


def _conjoined(first: Any, second: Any) -> bool:
    return any(other.i in range(second.start, second.end) for token in first for other in token.conjuncts)


def compare(question: str, sentences: Sequence[Any]) -> Verdict | None:
    """The subject a "which/who ..., A or B?" question picks, from `sentences` (ranked candidates); None when the
    question compares no two named subjects or the sources name only one of them."""
    named = subjects(question, "or")
    if len(named) < 2:
        return None
    evidence = [_evidence_of(name, sentences) for name in named]
    if not all(evidence):
        return None
    order = _order(question, named)
    if order is not None:
        kind, later = order
        found = _values(kind, _attribute_terms(question, named), evidence, named)
        pick = _winner([value for value, _ in found], kind, later)
        if pick is None:
            return None
        # Each subject's sentence is the one its value was read from.
        evidence = [[row] for _, row in found]
    else:
        asked = _asked_terms(question, named)
        if not asked:
            return None
        shares = [max(_share(asked, row) for row in rows) for rows in evidence]
        if max(shares) <= 0 or shares.count(max(shares)) > 1:
            return None
        pick = shares.index(max(shares))
    # The picked subject's sentence first: the short answer cites it.
    return Verdict(named[pick], [evidence[pick][0]] + [rows[0] for i, rows in enumerate(evidence) if i != pick], CHOICE)


def yes_no(question: str, sentences: Sequence[Any]) -> Verdict | None:
    """Yes when every subject of a yes/no question has a sentence holding what is asked about it, else no; "the same
    X" is answered by the values of X's kind each subject's sentence names (`_same`). None when the question names
    no subject the sources hold, or its sources cannot tell (then the sentences alone answer)."""
    relating = _relating(question)
    if relating:
        return _related(question, relating, sentences)
    named = subjects(question, "and") or [ent.text for ent in parse(question).ents if ent.label_ in _NAME_LABELS][:1]
    evidence = [_evidence_of(name, sentences) for name in named]
    if not named or not all(evidence):
        # A subject the sources say nothing of: what is asked of it is unknown, not denied (no verdict; the
        # sentences of the others answer).
        return None
    kind = BOTH if len(named) > 1 else YES_NO
    if re.search(r"\bsame\b", question.lower()) and len(named) > 1:
        verdict = _same(question, named, evidence)
        return None if verdict is None else replace(verdict, kind=kind)
    asked = _asked_terms(question, named)
    best = [max(rows, key=lambda candidate: _share(asked, candidate)) for rows in evidence]
    failing = [row for row in best if _share(asked, row) < YES_SHARE or _NEGATION.search(row.text)]
    # A "no" cites first the sentence of a subject that lacks what is asked: the one the verdict rests on.
    if failing:
        return Verdict("no", failing + [row for row in best if row not in failing], kind)
    return Verdict("yes", best, kind)


def _relating(question: str) -> list[str]:
    """The names of a yes/no question that relates two or more names without coordinating them ("Did A acquire B?",
    "Is A based in B?", "Was A released before B?"), in order; [] for a question about one name, about names it joins
    by "and" ("Are A and B both ...?": each is asked the same of itself) or about "the same" X."""
    if re.search(r"\bsame\b", question, re.I) or subjects(question, "and"):
        return []
    doc = parse(question)
    entities = [_without_verb(ent) for ent in doc.ents if ent.label_ in _NAME_LABELS]
    found: list[str] = []
    for span in _with_runs(doc, [span for span in entities if len(span)], _name_runs(doc)):
        text = re.sub(r"^(?:the|a|an)\s+", "", span.text.strip(" ,?"), flags=re.I)
        if terms(text) and text not in found:
            found.append(text)
    return found if len(found) > 1 else []


def _related(question: str, named: list[str], sentences: Sequence[Any]) -> Verdict | None:
    """The verdict on a relation between names (`_relating`), said only when one sentence says it.

    Ordering ("Was A released before B?", "Is A longer than B?", the second name the object of the comparative word):
    yes when A's value wins in the asked direction, no when B's does, each value read from a sentence of its subject
    that holds the asked attribute's terms (`_values`); None when either has none or the two are equal at the
    precision both have. Any other relation: yes when one sentence holds every name and every asked word (as terms,
    so "acquired" is "acquire"), the names in the question's roles (their order, read backwards for a passive with an
    agent: "B was acquired by A"), no when such a sentence negates the asked word, and None (no verdict, the sentences
    answer) when no sentence says it or they say both: the names' own sentences holding the asked word each apart
    ("A acquired C", "D acquired B") say nothing of A and B."""
    order = _order(question, named)
    if order is not None and len(named) == 2 and _compared_with(question, named[1]):
        kind, later = order
        evidence = [_evidence_of(name, sentences) for name in named]
        found = _values(kind, _attribute_terms(question, named), evidence, named)
        pick = _winner([value for value, _ in found], kind, later)
        return None if pick is None else Verdict("yes" if pick == 0 else "no", [row for _, row in found])
    own = set().union(*(terms(name) for name in named))
    # What is asked, without the question's own auxiliary and its negation ("Isn't", "Can't": "is", "ca", "n't").
    parsed = parse(question)
    kept = " ".join(token.text for token in parsed if token.pos_ not in {"AUX", "PART"} and token.dep_ != "neg")
    asked = set(terms(kept)) - own - set(terms("both also either"))
    if not asked:
        return None
    roles = _roles(parsed, named, asked)
    said: dict[bool, list[Any]] = {}
    first = set(terms(named[0]))
    rest = set().union(*(terms(name) for name in named[1:]))
    for row in sentences:
        # The question's first name may be the pronoun subject of a sentence that follows one naming it ("In 2021 it
        # acquired B", its title or the sentence before holding A).
        carried = not first <= row.terms and first <= row.title_terms
        if not asked | rest <= row.terms or not (first <= row.terms or carried):
            continue
        doc = parse(row.text)
        if roles is not None and _roles(doc, named, asked, named[0] if carried else "") == roles:
            said.setdefault(_negated(doc, asked), []).append(row)
    if len(said) != 1:
        return None
    negated, rows = next(iter(said.items()))
    return Verdict("no" if negated else "yes", rows)


def _compared_with(question: str, name: str) -> bool:
    """Whether `name` is what the question's comparative word compares with ("before B", "than the B")."""
    return bool(re.search(rf"\b(?:before|after|than)\s+(?:the\s+|an?\s+)?{re.escape(name)}\b", question, re.I))


def _roles(doc: Any, named: list[str], asked: set[str], carried: str = "") -> tuple[int, ...] | None:
    """The order in which `doc` names `named` (positions in `named`, first named first), reversed when a word of the
    asked relation has a passive agent ("B was acquired by A" names A's role second); None when a name is not
    written in it. The `carried` name is not written: it stands at the personal pronoun that is the active subject
    of an asked word ("it acquired B"), and without one the roles are unknown (None)."""
    positions = []
    for name in named:
        if name == carried:
            pronoun = next(
                (
                    token
                    for token in doc
                    if token.dep_ == "nsubj" and token.tag_ == "PRP" and set(terms(token.head.text)) & asked
                ),
                None,
            )
            if pronoun is None:
                return None
            positions.append(pronoun.idx)
            continue
        match = re.search(rf"\b{re.escape(name)}\b", doc.text, re.I)
        if match is None:
            return None
        positions.append(match.start())
    order = tuple(sorted(range(len(named)), key=positions.__getitem__))
    passive = any(token.dep_ == "agent" and set(terms(token.head.text)) & asked for token in doc)
    return order[::-1] if passive else order


def _negated(doc: Any, asked: set[str]) -> bool:
    """Whether a negation in `doc` bears on a word of the asked relation or on the verb that word hangs on ("A did
    not acquire B", "A is not based in B")."""
    words_asked = [token for token in doc if set(terms(token.text)) & asked]
    heads = {token.i for token in words_asked} | {token.head.i for token in words_asked}
    return any(token.dep_ == "neg" and token.head.i in heads for token in doc)


def _split_at(span: Any, joiner: str) -> list[Any]:
    """`span` cut at the `joiner` it holds, each side a name of its own ("The Lanterns or Harbour Choir")."""
    cuts = [token.i for token in span[1:-1] if token.lower_ == joiner]
    if not cuts:
        return [span]
    doc, bounds = span.doc, [span.start - 1, *cuts, span.end]
    return [doc[start + 1 : end] for start, end in zip(bounds, bounds[1:], strict=False) if end > start + 1]


def _overlaps(span: Any, others: list[Any]) -> bool:
    return any(span.start < other.end and other.start < span.end for other in others)


def _evidence_of(name: str, sentences: Sequence[Any]) -> list[Any]:
    """The candidates that name `name` in themselves, else in their chunk's title."""
    wanted = set(terms(name))
    if not wanted:
        return []
    own = [row for row in sentences if wanted <= row.terms]
    titled = [row for row in sentences if wanted <= (row.terms | row.title_terms) and row not in own]
    return own + titled


def _asked_terms(question: str, named: list[str]) -> set[str]:
    """The question's terms that are not the subjects' names nor comparison words."""
    skip = set().union(*(terms(name) for name in named))
    skip |= set().union(*(terms(word) for word in EARLIER | LATER | LARGER | SMALLER))
    skip |= set(terms("both also either same"))
    return set(terms(question)) - skip


def _share(asked: set[str], row: Any) -> float:
    if not asked:
        return 0.0
    held = row.terms | row.title_terms
    if any(term in _DECADES for term in asked):
        # A year is in its decade: "founded in 1994" answers "founded in the 1990s".
        held = held | {f"{year[:3]}0s" for year in _YEAR.findall(row.text)}
    return len(asked & held) / len(asked)


def _order(question: str, named: list[str]) -> tuple[str, bool | None] | None:
    """What a comparison by a value compares ("time" or "size") and whether the later or larger value wins, from the
    question's own comparative words, outside the subjects' names (a title may hold "First"); None when the question
    compares by no value. When it holds words of both directions ("first ... latest"), which wins is None."""
    outside = question
    for name in sorted(named, key=len, reverse=True):
        outside = outside.replace(name, " ")
    asked = set(words(outside))
    for kind, earlier, later in (("time", EARLIER, LATER), ("size", SMALLER, LARGER)):
        if asked & (earlier | later):
            return kind, None if asked & earlier and asked & later else bool(asked & later)
    return None


def _attribute_terms(question: str, named: list[str]) -> set[str]:
    """The terms of what a comparison asks each subject's value of ("Which raised more in its first round" -> raise,
    round), without the kind of thing a "which/what X" names (the band of "Which band was formed first"). A capital
    letter that marks what it follows ("Series A", "Phase B") is kept as itself ("=A"): as a word it is a stop word,
    and without it every round is the asked one."""
    doc = parse(question)
    kinds = [
        token.head.text
        for token in doc
        if token.lower_ in {"which", "what"} and token.dep_ == "det" and token.head.pos_ in ("NOUN", "PROPN")
    ]
    letters = {
        f"={token.text}"
        for token in doc
        if len(token.text) == 1 and token.text.isupper() and token.text != "I" and not token.is_sent_start
    }
    return (_asked_terms(question, named) - set(terms(" ".join(kinds)))) | letters


def _holds(row: Any, attribute: set[str]) -> bool:
    """Whether `row` holds every term of `attribute` (its own or its title's), and each marking letter as written."""
    plain = {term for term in attribute if not term.startswith("=")}
    letters = [term[1:] for term in attribute if term.startswith("=")]
    return plain <= row.terms | row.title_terms and all(re.search(rf"\b{letter}\b", row.text) for letter in letters)


def _values(kind: str, attribute: set[str], evidence: list[list[Any]], named: list[str]) -> list[tuple[Any, Any]]:
    """Each subject's value of `kind` and the sentence it was read from ((None, None) when none holds one): from the
    first of its sentences that holds every term of the asked attribute, the value nearest those terms; without an
    attribute ("Which is older, A or B?"), the first year or the largest number of its first sentence that has one.
    A date asked of an event no sentence words as the question does is read from the subject's own text (`_about`)."""
    found: list[tuple[Any, Any]] = []
    for name, rows in zip(named, evidence, strict=True):
        pair: tuple[Any, Any] = (None, None)
        for row in rows:
            if attribute and not _holds(row, attribute):
                continue
            value = _value_near(row.text, kind, attribute) if attribute else _plain_value(row.text, kind)
            if value is not None:
                pair = (value, row)
                break
        if pair[0] is None and attribute and kind == "time" and attribute.isdisjoint(_END_EVENTS):
            # No sentence words the asked event as the question does ("founded" against "began production in 1853",
            # "born" against a life's dates in brackets): the date of the first sentence about the subject that holds
            # one (`_own_date`).
            about = (row for row in rows if _about(row, name))
            pair = next(((value, row) for row in about if (value := _own_date(row.text, attribute)) is not None), pair)
        found.append(pair)
    return found


def _own_date(text: str, attribute: set[str]) -> tuple[int, int | None, int | None] | None:
    """The date a sentence about a subject gives for an event it does not word as asked: its one date, or, for a birth,
    the first of a life's dates ("(6 October 1919 – 26 March 1989)"); None when it holds several dates otherwise (which
    is the asked one cannot be told: "operated from 1853 to 1990") or none."""
    read = (_date_value(ent.text) for ent in parse(text).ents if ent.label_ == "DATE")
    years = [int(year) for year in _YEAR.findall(text)]
    dates = [value for value in read if value is not None] or [(year, None, None) for year in years]
    if not dates:
        return None
    # A range the recogniser reads as one date ("from 1853 to 1990") still names two years.
    several = len(dates) > 1 or len(set(years)) > 1
    return dates[0] if not several or not attribute.isdisjoint(BIRTH_WORDS) else None


def _about(row: Any, name: str) -> bool:
    """Whether `row` is the subject's own text: its chunk is titled by the name, or it opens with the name (after an
    article), as a sentence introducing it does. A sentence that only mentions the name ("X is a novel by Y, first
    published in 1953") dates something else."""
    wanted = set(terms(name))
    opening = re.sub(r"^(?:the|a|an)\s+", "", row.text.lstrip(" \"'"), flags=re.I)
    return wanted <= row.title_terms or re.match(rf"{re.escape(name)}(?!\w)", opening, re.I) is not None


def _plain_value(text: str, kind: str) -> Any:
    """The first date the recogniser finds (as a date key, `_date_value`), else the earliest year, or the largest
    number that is no year in `text`; None without one."""
    if kind == "time":
        dates = [_date_value(ent.text) for ent in parse(text).ents if ent.label_ == "DATE"]
        dates = [value for value in dates if value is not None]
        if dates:
            return dates[0]
        years = [int(year) for year in _YEAR.findall(text)]
        return (min(years), None, None) if years else None
    # _NUMBER matches only digits, commas and a decimal part (a float without the commas); a year is no size.
    values = [(float(match.replace(",", "")), match) for match in _NUMBER.findall(text)]
    numbers = [
        value for value, match in values if not (1000 <= value <= 2099 and value.is_integer() and "," not in match)
    ]
    return max(numbers) if numbers else None


def _value_near(text: str, kind: str, attribute: set[str]) -> Any:
    """The date (`_date_value`) or amount (`amount_key`) the recogniser finds in `text` nearest a word of the asked
    attribute; None when the sentence names none."""
    doc = parse(text)
    anchors = [token.i for token in doc if set(terms(token.text)) & attribute]
    labels = {"DATE"} if kind == "time" else AMOUNT_LABELS
    read = _date_value if kind == "time" else amount_key
    found = [(ent, read(ent.text)) for ent in doc.ents if ent.label_ in labels]
    found = [(ent, value) for ent, value in found if value is not None]
    if not found:
        return None
    if anchors:
        found.sort(key=lambda pair: min(abs(anchor - pair[0].start) for anchor in anchors))
    return found[0][1]


def _date_value(text: str) -> tuple[int, int | None, int | None] | None:
    """A date expression as `(year, month, day)`, month and day None when it does not state them: read by the
    dates module (`dateparser`, at the precision the words state: "14 July 1939", "July 1939", "1939"), else by its
    year and month names (`date_key`) when dateparser reads no date (a range, a duration); None without a year."""
    found = resolve_date(text)
    if found is None:
        return date_key(text)
    value, precision = found.value, found.precision
    return value.year, None if precision == "year" else value.month, value.day if precision == "day" else None


def _winner(values: list[Any], kind: str, later: bool | None) -> int | None:
    """The position of the value that wins (the later or larger when `later`), or None when a value is missing, the
    direction is unclear, or the best value is tied: dates compared at the precision all of them have ("October
    2019" and "1 October 2019" are the same month, no winner), amounts equal within `AMOUNT_TOLERANCE`."""
    if later is None or any(value is None for value in values):
        return None
    if kind == "time":
        depth = min(_precision(value) for value in values)
        values = [tuple(value[:depth]) for value in values]
        best = max(values) if later else min(values)
        tied = [value for value in values if value == best]
    else:
        best = max(values) if later else min(values)
        tied = [value for value in values if abs(value - best) <= AMOUNT_TOLERANCE * max(abs(best), abs(value))]
    return values.index(best) if len(tied) == 1 else None


def _precision(key: tuple[int, int | None, int | None]) -> int:
    """How many of a date key's (year, month, day) are known, from the year on."""
    return 1 if key[1] is None else 2 if key[2] is None else 3


def _same(question: str, named: list[str], evidence: list[list[Any]]) -> Verdict | None:
    """A "the same X" question ("Are A and B in the same state?"): each subject's best sentence read for the values
    of the kind the asked noun names (places for a state or a city, a nationality for a nationality, an organisation
    or a person for a label: `_kind_labels`), not counting the subjects' own names. Yes when the values are the
    same, or both name the same most specific value first and one side's values are all the other's ("Dunmore
    County" and "Dunmore County, Varnland"); no when they share none; None when only some are shared ("Dunmore
    County, Varnland" and "Ashby County, Varnland": the broader value agrees, the narrower ones differ, and which of
    them is a state the words do not say), when a sentence names no value of the kind, or when the asked noun's kind
    is no name (a year, an age) or unknown. When the values have the asked noun as their last word ("Dunmore County"
    for "the same county"), only those count."""
    noun = _same_noun(question)
    labels = _kind_labels(noun)
    if not labels:
        return None
    best = [rows[0] for rows in evidence]
    own = set().union(*(terms(name) for name in named))
    found = [_values_of(row.text, labels, own) for row in best]
    if not all(found):
        return None
    # "Kestrel County" is a county; "the United States" no state (its last word is the noun's plural).
    named_as = [[value for value, last in side if last == noun] for side in found]
    values = named_as if all(named_as) else [[value for value, _ in side] for side in found]
    sides = [set(side) for side in values]
    if all(side == sides[0] for side in sides):
        return Verdict("yes", best)
    if all(side[0] == values[0][0] for side in values) and all(sides[0] <= side or side <= sides[0] for side in sides):
        return Verdict("yes", best)
    if any(not first & second for i, first in enumerate(sides) for second in sides[i + 1 :]):
        return Verdict("no", best)
    return None


def _kind_labels(noun: str) -> frozenset[str]:
    """The entity labels of the values `noun` names, as a "which X" question's (`HEAD_NOUN_LABELS`): a nationality
    only for a noun that asks for one (an organisation or a person for a label, not the "American" of "an American
    label"); none for a value (a year, an age) or a noun not listed."""
    labels = HEAD_NOUN_LABELS.get(noun, ())
    if not labels or labels[0] in VALUE_LABELS:
        return frozenset()
    return frozenset(labels[:1]) | (frozenset(labels[1:]) - VALUE_LABELS - {"NORP"})


def _same_noun(question: str) -> str:
    """The lemma of the noun "same" qualifies in `question` ("in the same state" -> "state"); "" when none."""
    for token in parse(question):
        if token.lower_ == "same" and token.head.pos_ in ("NOUN", "PROPN") and token.head.i > token.i:
            return token.head.lemma_.lower()
    return ""


def _values_of(text: str, labels: frozenset[str], own: set[str]) -> list[tuple[frozenset[str], str]]:
    """The terms and the last word (lower case) of each entity of `labels` in `text`, in order and once each (most
    specific first, as English writes "a town in Kestrel County, Varnland"), without those that only repeat words of
    the subjects' names."""
    values: list[tuple[frozenset[str], str]] = []
    for ent in parse(text).ents:
        value = frozenset(terms(ent.text))
        if ent.label_ in labels and value and not value <= own and value not in {seen for seen, _ in values}:
            values.append((value, ent[-1].lower_))
    return values
