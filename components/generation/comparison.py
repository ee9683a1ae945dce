"""Questions answered by comparing what the sources say about two or more named subjects: "Which band was formed
first, A or B?" (the subject whose value wins), "Are A and B both film directors?" (yes when every subject's own
sentences hold what is asked about it).

The subjects are the question's names joined by "or" / "and" (spaCy's entities, widened to the runs of proper nouns
and capitalised words they touch, and those runs themselves, read from the words rather than the parse's noun
phrases, which a misparse can hang on the common noun after a name: "Are both A and B painters?"). Each subject's
evidence is the candidate sentences that name it, in themselves or in their chunk's title. A comparison by a value
("older", "first", "larger", "fewer") compares the first year (for time) or the largest number (for size) in each
subject's evidence; any other comparison picks the subject whose evidence holds more of the question's remaining
words ("Which singer is American, A or B?"). General English only: no rule names a question set's words or entities.

Usage:
```python
verdict = compare("Which band was formed first, Lantern or Harbour?", sentences)
verdict.answer, verdict.evidence  # 'Lantern', [the sentences read for each subject]
```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from components.generation.question_analysis import HEAD_NOUN_LABELS
from components.text.analyzer import terms, words
from components.text.language import VALUE_LABELS, parse

# Words that compare by time: the earlier value wins, or the later one.
EARLIER = frozenset("older oldest first earlier earliest before elder eldest sooner".split())
LATER = frozenset("younger youngest newer newest later latest last recent".split())
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
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NEGATION = re.compile(r"\b(?:not|never|no longer|neither|nor)\b", re.I)
# Words by which a question says it asks of several subjects at once.
_SEVERAL = re.compile(r"\b(?:both|same|either|neither)\b", re.I)
# The dependencies of a question's own verb (the opening auxiliary of "Are A and B ...?").
_VERB_DEPS = frozenset({"ROOT", "aux", "auxpass"})
# Word classes that are no word of a name by their capital alone.
_FUNCTION_TAGS = frozenset({"ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ"})
_NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})


@dataclass
class Verdict:
    """The short answer of a comparison or yes/no question, and the sentences it rests on (one or more a subject)."""

    answer: str
    evidence: list[Any]


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
    return found


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
    word the tagger reads as an adjective is what is asked, not a subject ("Which band is British, A or B?")."""
    listed: list[Any] = []
    current = name
    while True:
        comma = current.start - 1
        if comma < 1 or current.doc[comma].text != ",":
            return listed
        earlier = [span for span in names if span.end == comma]
        if not earlier or not _conjoined(earlier[0], name) or all(t.pos_ == "ADJ" for t in earlier[0]):
            return listed
        listed.insert(0, earlier[0])
        current = earlier[0]


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
    question_words = set(words(question))
    values, later = None, True
    if question_words & (EARLIER | LATER):
        values = [_first_year(rows) for rows in evidence]
        later = bool(question_words & LATER)
    elif question_words & (LARGER | SMALLER):
        values = [_largest_number(rows) for rows in evidence]
        later = bool(question_words & LARGER)
    if values is not None and all(value is not None for value in values):
        pick = values.index(max(values) if later else min(values))
    else:
        asked = _asked_terms(question, named)
        if not asked:
            return None
        shares = [max(_share(asked, row) for row in rows) for rows in evidence]
        if max(shares) <= 0 or shares.count(max(shares)) > 1:
            return None
        pick = shares.index(max(shares))
    # The picked subject's sentence first: the short answer cites it.
    return Verdict(named[pick], [evidence[pick][0]] + [rows[0] for i, rows in enumerate(evidence) if i != pick])


def yes_no(question: str, sentences: Sequence[Any]) -> Verdict | None:
    """Yes when every subject of a yes/no question has a sentence holding what is asked about it, else no; "the same
    X" is answered by the values of X's kind each subject's sentence names (`_same`). None when the question names
    no subject the sources hold, or its sources cannot tell (then the sentences alone answer)."""
    named = subjects(question, "and") or [ent.text for ent in parse(question).ents if ent.label_ in _NAME_LABELS][:1]
    evidence = [_evidence_of(name, sentences) for name in named]
    if not named or not any(evidence):
        return None
    if not all(evidence):
        return Verdict("no", [rows[0] for rows in evidence if rows])
    if re.search(r"\bsame\b", question.lower()) and len(named) > 1:
        return _same(question, named, evidence)
    asked = _asked_terms(question, named)
    best = [max(rows, key=lambda candidate: _share(asked, candidate)) for rows in evidence]
    supported = all(_share(asked, row) >= YES_SHARE and not _NEGATION.search(row.text) for row in best)
    return Verdict("yes" if supported else "no", best)


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
    return len(asked & (row.terms | row.title_terms)) / len(asked)


def _first_year(rows: list[Any]) -> int | None:
    for row in rows:
        years = [int(year) for year in _YEAR.findall(row.text)]
        if years:
            return min(years)
    return None


def _largest_number(rows: list[Any]) -> float | None:
    for row in rows:
        # _NUMBER matches only digits, commas and a decimal part (a float without the commas); a year is no size.
        values = [(float(match.replace(",", "")), match) for match in _NUMBER.findall(row.text)]
        numbers = [
            value for value, match in values if not (1000 <= value <= 2099 and value.is_integer() and "," not in match)
        ]
        if numbers:
            return max(numbers)
    return None


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
