"""The sentences an answer cites after each part's best one.

A multi-hop question is followed through the names its best sentence brings in: each further hop is a sentence of
another chunk about such a name (the bridge), preferably one holding question words no earlier hop held and a span of
the asked kind (`further_hops`; from the chunk about the question's own subject when the best sentence is about a
namesake, `subject_start`). A second subject the question names brings in the sentence that holds the relation the
question asks of it (`relation_sentence`), and the next best sentences follow while they score RELATIVE_CUTOFF of the
best one (`further_sentences`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from components.generation.answer_scoring import AnswerScoring
from components.generation.answer_sentences import Sentence, share_of, terms_of
from components.generation.question_analysis import QuestionAnalysis, QuestionPart
from components.generation.span_rules import ranked_answer_span, relation_terms

# A multi-hop answer follows at most this many sentences (MuSiQue-style questions take 2-4 hops) ...
MAX_HOPS = 3
# ... each later one holding at least this share of the question's weighted terms that no earlier hop held.
MIN_HOP_GAIN = 0.1
# What a hop adds to the question counts this many times the share of the bridge's name it holds.
HOP_GAIN_WEIGHT = 2.0
# A hop takes over the short answer only through a name it holds this much of (by rarity: not "United States").
MIN_BRIDGE_SHARE = 0.5
# The best few sentences about a bridge are read for a span of the asked kind.
HOP_PARSED = 2
# A sentence added for the relation the question asks ("whose godfather", "what medal") gains this much times the
# share of the relation's terms it holds.
RELATION_WEIGHT = 1.0
# Further sentences join the answer only when they score this share of the best one.
RELATIVE_CUTOFF = 0.5
# A further sentence holding a span of the asked kind the answer does not give yet gains the scoring's `further_bonus`
# (of the few best read); one naming none of the question's subjects takes back its off-subject weight (the
# sentences before it named them).
FURTHER_PARSED = 4
# Capitalised word sequences after a sentence's first word: the names a sentence brings in, without a parse.
_NAME = re.compile(r"[A-Z][\w'&-]*(?:\s+(?:of\s+|the\s+|de\s+|von\s+|van\s+)?[A-Z][\w'&-]*)*")


def link_score(sentence: Sentence, hops: list[_Hop], first_score: float) -> float:
    """A chain link's score: its hop's, or the first sentence's own."""
    return next((hop.score for hop in hops if sentence in (hop.sentence, hop.via)), first_score)


@dataclass
class _Hop:
    """A later hop of a multi-hop answer: its sentence, the bridge terms that led to it, and what it adds."""

    sentence: Sentence
    score: float
    bridge: frozenset[str]  # the terms of the earlier hop's name that this sentence holds
    gain: float  # its share of the question's weighted terms that no earlier hop held
    span: str  # a span of the asked kind that names none of the bridges ("" when none, or not read)
    via: Sentence  # the sentence that named the bridge
    about: float  # how much of the bridge's name it holds, weighed by rarity


def further_hops(
    first: Sentence,
    part: QuestionPart,
    pool: list[Sentence],
    question_terms: frozenset[str],
    weights: dict[str, float],
    used: set[int],
    room: int,
    companions: list[Sentence],
    scoring: AnswerScoring,
) -> list[_Hop]:
    """The further hops of a multi-hop question, each a sentence of another chunk: from the sentence at hand, a name
    it brings in that the question does not hold (the bridge: "... shot the film Maximum Overdrive") leads to a
    sentence about that name, preferably one holding question words no earlier hop held ("... directed by Stephen
    King") and a span of the asked kind. The first bridge may also be named by a `companion` (a supporting sentence
    of the first one's chunk: "He played for the Philadelphia Eagles"). At most MAX_HOPS sentences in all, and `room`
    further ones; a hop after the second, or to a chunk of the first one's own document, must add MIN_HOP_GAIN of the
    question. The sentences taken are added to `used`."""
    total = sum(weights.values())
    if total <= 0:
        return []
    frequency = Counter(term for sentence in pool for term in sentence.terms | sentence.title_terms)
    # The chunks' titles name things too ("a carrier-borne fighter" leads to the chunk titled "Aircraft carrier").
    headings = {sentence.heading for sentence in pool if sentence.heading}
    hops: list[_Hop] = []
    known = set(question_terms)
    covered = set(first.terms | first.title_terms)
    numbers = {first.number}
    sources = [first, *companions]
    while len(hops) < min(room, MAX_HOPS - 1):
        names = [
            (name - known, source)
            for source in sources
            for name in _names_of(source) + _headings_held(source, headings, frequency, len(pool))
        ]
        names = [(name, source) for name, source in names if name]
        if not names:
            break
        bridge = frozenset().union(*(name for name, _ in names))
        residual = {term: weight for term, weight in weights.items() if term not in covered}
        found = []
        for candidate in pool:
            if candidate.number in numbers or id(candidate) in used:
                continue
            # The name it is most about, each term weighed by its rarity ("American" leads almost anywhere).
            # A name its chunk's title holds first: that is what the chunk is about.
            about, held, via, titled = 0.0, frozenset(), first, False
            for name, source in names:
                share = _rare_share(name, candidate.terms | candidate.title_terms, frequency, len(pool))
                if share and (bool(name & candidate.heading), share) > (titled, about):
                    about, held, via = share, name & (candidate.terms | candidate.title_terms), source
                    titled = bool(name & candidate.heading)
            if not held or _sibling(candidate.heading, first.heading, held):
                continue
            gain = share_of(residual, candidate) * sum(residual.values()) / total if residual else 0.0
            # A later hop, or a sentence of the first one's own document (the same subject, not the bridge's), must
            # add to the question; else the sentences the question itself scores best follow the first one.
            if gain < MIN_HOP_GAIN and (hops or (first.heading and candidate.heading == first.heading)):
                continue
            if via is not sources[0] and (
                len(hops) + 2 > room or gain < MIN_HOP_GAIN or not held & candidate.title_terms
            ):
                continue  # a companion is cited too: only for a chunk about its name that adds to the question
            found.append((HOP_GAIN_WEIGHT * gain + about + candidate.cosine, candidate, held, gain, via, about))
        if not found:
            break
        found.sort(key=lambda item: (-item[0], item[1].rank))
        crossed = frozenset(known | bridge) - question_terms
        read = []
        for score, candidate, held, gain, via, about in found[:HOP_PARSED]:
            # The asked kind in a sentence about the bridge: the answer the chain was looking for.
            span = (
                ranked_answer_span(candidate.text, part, frozenset(known | bridge), scoring)[0]
                if part.wants_span
                else ""
            )
            if span and terms_of(span) & crossed:
                span = ""
            gained = scoring.sentence_score({"kind_found": float(bool(span))})
            read.append(_Hop(candidate, score + gained, held, gain, span, via, about))
        best = max(read, key=lambda hop: hop.score)
        hops.append(best)
        used.add(id(best.sentence))
        known |= bridge
        covered |= best.sentence.terms | best.sentence.title_terms
        numbers.add(best.sentence.number)
        if best.via is not sources[0]:
            room -= 1  # the companion is cited before the hop
            used.add(id(best.via))
            covered |= best.via.terms | best.via.title_terms
        sources = [best.sentence]
    return hops


def subject_start(
    first: Sentence, scored: list[tuple[float, Sentence, QuestionPart]], question: QuestionAnalysis
) -> Sentence | None:
    """The best-scored sentence of a chunk about the question's subject when `first` is about another subject that
    only shares a word of its name ("The Drew Pearson Show was ..." for "Drew Fuller stared in ..."): a chunk whose
    title shares a word with `first`'s title and holds a name of the question that `first` lacks, while the rest of
    `first`'s title is not in the question. None when there is no such chunk among the scored ones."""
    named = [
        item
        for item in scored
        if item[1].heading & first.heading
        and (item[1].heading - first.terms - first.title_terms) & question.anchor_terms
        and not (first.heading - item[1].heading) & question.question_terms
    ]
    return max(named, key=lambda item: (item[0], -item[1].rank))[1] if named else None


def _sibling(heading: frozenset[str], first: frozenset[str], held: frozenset[str]) -> bool:
    """Whether a chunk titled `heading` is about another member of the first hop's family ("Heinkel HD 26" on a
    chain that started at "Heinkel HD 23") that the bridge terms `held` do not name: a hop there only shares words."""
    return bool(heading & first) and heading != first and not held & heading


def relation_sentence(
    chosen: list[Sentence],
    pool: list[Sentence],
    question: QuestionAnalysis,
    weights: dict[str, float],
    used: set[int],
) -> Sentence | None:
    """When no chosen sentence holds the relation the question asks for, the sentence that adds MIN_HOP_GAIN of the
    question's weighted terms and most of the relation, from a chunk titled with another name of the question ("... by
    Aldric and Osmund Varne, he was a count of which town?") or, holding some of the relation, from a chosen
    sentence's chunk; None when there is none."""
    total = sum(weights.values())
    if total <= 0:
        return None
    covered = frozenset().union(*(sentence.terms | sentence.title_terms for sentence in chosen))
    residual = {term: weight for term, weight in weights.items() if term not in covered}
    gains = {
        id(candidate): gain
        for candidate in pool
        if id(candidate) not in used
        and (gain := share_of(residual, candidate) * sum(residual.values()) / total if residual else 0.0)
        >= MIN_HOP_GAIN
    }
    if not gains:
        return None  # nothing could join, whatever the relation: the question's parse is spared
    relation = relation_terms(question.question) - question.anchor_terms
    if not relation or any(relation <= sentence.terms for sentence in chosen):
        return None
    numbers = {sentence.number for sentence in chosen}
    headings = {sentence.heading for sentence in chosen}
    best, best_score = None, 0.0
    for candidate in pool:
        asked = len(relation & candidate.terms) / len(relation)
        heading = candidate.heading
        # A chunk about another name of the question may answer in its own words; a chosen chunk must hold the relation.
        named = heading and heading not in headings and heading <= question.question_terms
        if id(candidate) not in gains or not (named or (asked and candidate.number in numbers)):
            continue
        score = HOP_GAIN_WEIGHT * gains[id(candidate)] + RELATION_WEIGHT * asked + candidate.cosine
        if score > best_score:
            best, best_score = candidate, score
    return best


def further_sentences(
    scored: list[tuple[float, Sentence, QuestionPart]],
    used: set[int],
    unanchored: set[int],
    spans: set[str],
    question_terms: frozenset[str],
    top: float,
    scoring: AnswerScoring,
) -> list[tuple[float, Sentence]]:
    """The sentences that may follow the chosen ones, best first, each scoring RELATIVE_CUTOFF of the best once
    scored again: its off-subject weight taken back, and the scoring's `further_bonus` for a span of the asked kind
    the answer does not give yet (the first sentence's span may be the wrong one: the next one offers another)."""
    ranked: dict[int, tuple[float, Sentence]] = {}
    read: list[tuple[Sentence, QuestionPart]] = []
    for score, candidate, part in sorted(scored, key=lambda item: (-item[0], item[1].rank)):
        if id(candidate) in used or id(candidate) in ranked:
            continue
        taken_back = -scoring.weight("sentence", "off_subject") if id(candidate) in unanchored else 0.0
        ranked[id(candidate)] = (score + taken_back, candidate)
        if part.wants_span and len(read) < FURTHER_PARSED:
            read.append((candidate, part))
    bonus = scoring.further_bonus if scoring.on("further_kind") else 0.0
    for candidate, part in read if bonus else []:
        found, _ = ranked_answer_span(candidate.text, part, question_terms, scoring)
        if found and found not in spans:
            ranked[id(candidate)] = (ranked[id(candidate)][0] + bonus, candidate)
    kept = [item for item in ranked.values() if item[0] >= RELATIVE_CUTOFF * top]
    return sorted(kept, key=lambda item: (-item[0], item[1].rank))


def _names_of(sentence: Sentence) -> list[frozenset[str]]:
    """The terms of each name the sentence brings in (capitalised word runs after its first word)."""
    return [terms_of(name) for name in _NAME.findall(sentence.text.split(" ", 1)[-1]) if terms_of(name)]


def _headings_held(
    sentence: Sentence, headings: set[frozenset[str]], frequency: dict[str, int], total: int
) -> list[frozenset[str]]:
    """The titles of other chunks whose (rarity-weighed) terms the sentence mostly holds: names it brings in
    without capitals. The words a title shares with the sentence's own chunk's title do not count: "Heinkel HD 26" is
    not named by a sentence about the Heinkel HD 23."""
    return [
        heading
        for heading in headings
        if heading != sentence.heading
        and _rare_share(heading - sentence.heading, sentence.terms, frequency, total) >= MIN_BRIDGE_SHARE
    ]


def _rare_share(name: frozenset[str], held: frozenset[str], frequency: dict[str, int], total: int) -> float:
    """The share of `name`'s terms in `held`, each weighed by its inverse frequency among `total` sentences; a name
    of one common word is worth less than a name of one word no other sentence holds."""
    weights = {term: math.log(1.0 + total / (1 + frequency.get(term, 0))) for term in name}
    whole = max(sum(weights.values()), math.log(1.0 + total))
    return sum(weight for term, weight in weights.items() if term in held) / whole


def brought_in(*sentences: Sentence) -> frozenset[str]:
    """The terms of the names the sentences bring in (capitalised word runs after each one's first word)."""
    return frozenset().union(*(name for sentence in sentences for name in _names_of(sentence)))
