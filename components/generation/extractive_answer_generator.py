"""`ExtractiveAnswerGenerator`: an offline, cited answer: the short answer first, then the sentences it rests on."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict
from typing import Any

from haystack import Document, component, logging

from components.embedding import get_embedding_model
from components.generation.answer_confidence import CHOICE, YES_NO, AnswerConfidence, part_features
from components.generation.answer_evidence import TOP_SENTENCES, MeaningCache, evidence_features
from components.generation.answer_scoring import AnswerScoring
from components.generation.answer_sentences import Sentence, candidate_sentences, part_weights, share_of, terms_of
from components.generation.answer_wording import (
    NO_EVIDENCE_ANSWER,
    NO_SOURCES_ANSWER,
    UNSURE_NOTE,
    UNSURE_PART_LINE,
    abstain,
    cite_sentence,
    state_chain,
)
from components.generation.chain_reading import ChainReading, answers_its_clause, is_last_bridge, read_off_hop
from components.generation.comparison import compare, listed_options, yes_no
from components.generation.further_sentences import (
    MIN_BRIDGE_SHARE,
    MIN_HOP_GAIN,
    RELATIVE_CUTOFF,
    brought_in,
    further_hops,
    further_sentences,
    link_score,
    relation_sentence,
    subject_start,
)
from components.generation.graph_kinds import graph_kinds, names_no_doer
from components.generation.life_dates import LIFE_EVENT_TERMS, asked_life_event, life_answer
from components.generation.name_labels import other_label
from components.generation.question_analysis import (
    YES_NO_STARTS,
    QuestionAnalysis,
    QuestionPart,
    analyze_question,
    existential_part,
    question_form,
)
from components.generation.question_gap import fill_gap, question_gap
from components.generation.span_choice import (
    RULE_WAYS,
    SPAN_CHOICES,
    SpanModel,
    choose_span,
    rate_span,
    rated_candidates,
    switch_span,
)
from components.generation.span_rules import (
    alternatives,
    bare_span,
    folded,
    phrase_span,
    pronoun_doers,
    ranked_answer_span,
    repeats_question,
    subject_answer,
)
from components.serialization import InitParameterSerialization
from components.settings import DEFAULT_EMBEDDING_MODEL
from components.text.analyzer import terms
from components.text.language import parse, sentence_spans
from components.validation import within

logger = logging.getLogger(__name__)

_NO_SHORT_ANSWER: dict[str, Any] = {"short_answer": "", "short_answer_confidence": None, "parts": []}

# A sentence's score and a span's cost are weighted sums of named features whose weights are fitted
# (`answer_scoring`: `research fit scoring`); what follows are the reading budgets.
# Sentences parsed for answer spans per part: the best few by terms and meaning (spaCy costs ~5 ms a sentence).
PARSED_PER_PART = 3
# How many of the top chunks a later hop's sentence may come from.
BRIDGE_CHUNKS = 10
# When fitting, this many of a part's best sentences are logged with their features (all of them read for spans).
LOGGED_SENTENCES = 8

# Parts that take a phrase as their short answer when the chosen sentence holds no entity of their kind (a
# "what"/"which" does when it names what it asks for: its `focus`).
PHRASE_KINDS = frozenset({"who", "where"})
_ALTERNATIVE = re.compile(r"\bor\b", re.I)
# A yes/no word where a sentence of the question may open with it, as the first word the yes/no check reads.
_MAY_ASK_YES_NO = re.compile(rf"(?<![A-Za-z])(?:{'|'.join(sorted(YES_NO_STARTS))})(?: |$)", re.I)


@component
class ExtractiveAnswerGenerator(InitParameterSerialization, ChainReading):
    """Answers from the top chunks' own sentences: the short answer (a name, date, number or place) first, then
    the supporting sentence of each part of the question, each citing its chunk as [n].

    Deterministic and offline (no generative model). The question is analysed (`question_analysis`: its type and parts);
    every whole sentence of the top chunks is scored per part by its share of the part's terms, its in-context sentence
    vector's cosine to the question (stored at ingestion; the ranker hands them over in
    `meta["evidence"]["sentences"]`), its chunk's rank, and whether it holds a span of the kind the part asks for
    (entities from spaCy, only for the few best sentences; a name in the role the question's wh-word plays,
    `question_gap`, first); a "what"/"which" that names what it asks about takes the phrase of the chosen sentence in
    the wh-word's role, else the noun phrase it stands for (`phrase_span`: the few best by position and form are put in
    the wh-word's place in the question, and the statement the embedding model finds closest to the sentence wins; the
    model is loaded in `warm_up`, shared with the query embedder); a question whose wh-word aligns with no phrase
    ("why", "how") is answered by its cited sentences, without a short answer. Comparisons
    ("which is older, A or B?") and yes/no questions about named subjects are answered from each subject's sentences
    (`comparison`). A multi-hop question is followed through up to three sentences, each of another chunk about a name
    the previous one brought in (`further_hops`; from the chunk about the question's subject when the best sentence is
    about a namesake), and answered from the last hop when the first one's span was the name that led there; when no
    short answer beyond the question's own names was found, a cited sentence whose subject is a pronoun or a short form
    of its chunk's title answers with the full name the chunk opens with (`subject_answer`). Sentences are taken whole:
    a chunk that starts inside a sentence borrows it from its neighbouring chunk; the same sentence from two overlapping
    chunks is used once, cited to the higher-ranked chunk. When no sentence supports a part, the answer says which part
    the sources do not answer.

    A sentence's score and a span's cost are weighted sums of named features whose weights come from a versioned file
    (`answer_scoring`, fitted by `research fit scoring`); each rule family can be switched off (`rules_off`) to measure
    what it adds.

    Usage:
    ```python
    generator = ExtractiveAnswerGenerator(max_sentences=3)
    out = generator.run(query="Who won Super Bowl 50?", documents=ranked)
    out["short_answer"], out["replies"][0]
    # 'Denver Broncos', 'Denver Broncos [1]. The Denver Broncos defeated the Carolina Panthers 24-10 ... [1].'
    ```
    """

    def __init__(
        self,
        max_sentences: int = 3,
        max_chunks: int = 5,
        min_support: float = 0.25,
        min_cosine: float = 0.45,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        confidence_model: str = "",
        confidence_threshold: float | None = None,
        scoring_model: str = "",
        rules_off: list[str] | None = None,
        span_model: str = "",
        span_choice: str = "switch",
    ) -> None:
        """
        :param max_sentences: the most sentences an answer holds (1-10).
        :param max_chunks: how many of the top chunks sentences are taken from (1-20).
        :param min_support: the share of a part's weighted terms a sentence must hold to support it (0-1)...
        :param min_cosine: ...or the in-context cosine to the question that lets it support the part anyway (0-1).
        :param embedding_model: the sentence embedding model that reads the few best phrases of a "what" back into
            the question (`phrase_span`); empty: the phrases are chosen by their position and form alone.
        :param confidence_model: the fitted confidence model's JSON file (`answer_confidence`); empty: the packaged one.
        :param confidence_threshold: the confidence a part's short answer needs to lead the answer (0-1); None: the
            threshold the model file was chosen with.
        :param scoring_model: the fitted sentence and span weights' JSON file (`answer_scoring`); empty: the packaged
            one.
        :param rules_off: rule families to switch off (`answer_scoring.RULE_FAMILIES`), to measure what each adds.
        :param span_model: the fitted span model's JSON file (`span_choice`); empty: the packaged one.
        :param span_choice: what that model does with the candidate spans of each part's sentence: "switch" (the
            candidate it rates highest replaces the rules' span only when its probability leads the rules' span's by
            the model file's fitted `switch_margin`; the confidence reads the kept span's probability and lead),
            "rate" (the rules' span stays; the confidence reads its probability and its lead over the best other
            candidate), "choose" (the candidate it rates highest always replaces the rules' span) or "off" (no
            model). See docs/answer-confidence.md.
        """
        self.max_sentences = within("max_sentences", max_sentences, 1, 10)
        self.max_chunks = within("max_chunks", max_chunks, 1, 20)
        self.min_support = within("min_support", min_support, 0, 1)
        self.min_cosine = within("min_cosine", min_cosine, 0, 1)
        self.embedding_model = embedding_model
        self.confidence_model = confidence_model
        self.confidence_threshold = (
            None if confidence_threshold is None else within("confidence_threshold", confidence_threshold, 0, 1)
        )
        self._confidence = AnswerConfidence.load(confidence_model or None)
        self.scoring_model = scoring_model
        self.rules_off = sorted(set(rules_off or []))
        self.scoring = AnswerScoring.load(scoring_model or None).without(self.rules_off)
        self.threshold = self._confidence.threshold if confidence_threshold is None else self.confidence_threshold
        self.span_model = span_model
        if span_choice not in SPAN_CHOICES:
            raise ValueError(f"span_choice must be one of {', '.join(SPAN_CHOICES)}, not {span_choice!r}")
        self.span_choice = span_choice
        self._span_model = SpanModel.load(span_model or None) if span_choice != "off" else None
        # When a list: per part whose span the model may choose, what it reads (`research fit spans` collects it).
        self.span_log: list[dict[str, Any]] | None = None
        self._model: Any = None
        self._meaning = MeaningCache()  # the same answer rated again costs no forward pass

    def warm_up(self) -> None:
        """Load the embedding model (shared with the rest of the process: the query embedder loads the same one)."""
        if self._model is None and self.embedding_model:
            self._model = get_embedding_model(self.embedding_model)

    @component.output_types(replies=list[str], short_answer=str, short_answer_confidence=float | None, parts=list[dict])
    def run(
        self, query: str, documents: list[Document], analysis: QuestionAnalysis | dict | None = None
    ) -> dict[str, Any]:
        """Compose the answer.

        A question that names what it asks about through a description ("Who directed the film that was shot in
        ...?") and gets no sure short answer read directly is answered as a chain (`_chain_answer`): each hop asked
        on its own, the answer stating the bridges it crossed with their citations, as sure as its weakest link. A
        sure direct reading of such a question whose span answers the description instead (`read_off_hop`) gives way
        to the chain, or is held back when the chain fails (`_held_back`: no headline and no confidence).

        :param query: the question.
        :param documents: the ranked chunks, numbered [1]..[n] in this order; those a per-hop retrieval appended
            (`meta["hop"]`) are read only by the chain.
        :param analysis: the question's analysis (a `QuestionAnalysis`, or its `to_dict()`); made here when not
            given.
        :returns: see `_compose`.
        """
        # The chunks a per-hop retrieval added for a later link (`HopRetriever`, numbered after the ranked ones) are
        # read by the chain alone: the direct reading is the ranked chunks', as if they were not there.
        # Only that stage's mark counts: a graph fact's chunk carries its walk's distance under the same key.
        ranked = [document for document in documents if not isinstance((document.meta or {}).get("hop"), dict)]
        direct = self._compose(query, ranked, analysis, self.scoring)
        held = direct.pop("_held_reply", None)
        # A question no chunk answered at all has no hop to read either.
        evidence = direct.pop("_evidence", False)
        if direct.pop("_off_options", False):
            # A choice between listed options is answered by one of them: a span naming none ("a large outbreak" for
            # "Which outbreak produced more tornadoes, A or B?") answers something else, whatever its confidence.
            return _held_back(direct, held)
        # One part only: a chain answers the question as one part, and a several-part question's parts stay its own.
        if evidence is False or not self.scoring.on("decompose") or len(direct["parts"]) != 1:
            return direct
        walked = self._walk_hops(query, documents)
        if walked is None:
            return direct
        links, question, unanswered, stopped = walked
        span = direct["parts"][0]["short_answer"]
        if unanswered is not None or not links:
            # The chain stops at its first hop, whose answer is no name to ask further of ("What is the area where
            # the Tarrow wind farm is located?" read as "86" turbines). Another span read off the very sentence that
            # answered that description by its clause, a sentence holding none of what the rest of the question asks
            # of the described thing (`answers_its_clause`), answers the description, not the question ("Ossel and
            # Brandwick counties" for who was governor when the area became a province): it is held back, as below.
            # The hop's own answer again ("May 2015" for "When did the public beta of X come out?") puts the cut in
            # doubt, not the direct reading: it stands. (A later hop that stops leaves the bridges before it in doubt
            # as much as the direct reading: that stands too.)
            if (
                not links
                and stopped is not None
                and evidence is not None
                and span
                and evidence[0] == stopped["sentence"]
                and not is_last_bridge(span, [stopped])
                and answers_its_clause(question, stopped["sentence"])
            ):
                return _held_back(direct, held)
            return direct
        # A direct reading stands when sure, unless its span answers a description of the question rather than the
        # question ("When was the company that acquired X founded?" read off the sentence saying when X was acquired):
        # then, as for a reading not sure, the chain is read, and when it fails such a span is held back (`_held_back`).
        read_off = evidence is not None and bool(span) and read_off_hop(span, evidence[0], links)
        # A sure span that is the last bridge itself may be the answer of a question cut where it should not be ("the
        # name of the river that ..."), so it is not held back; but where the chain reads a further link from a
        # sentence naming that bridge, the direct reading answered the description, and the chain is the answer.
        last_bridge = bool(span) and is_last_bridge(span, links)
        if direct["parts"][0]["sure"] and not read_off and not last_bridge:
            return direct
        chained = self._chained(query, links, self._last_link(question, documents, links))
        if chained is not None:
            return chained
        return _held_back(direct, held) if read_off else direct

    def _compose(
        self,
        query: str,
        documents: list[Document],
        analysis: QuestionAnalysis | dict | None,
        scoring: AnswerScoring,
        skip: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """Compose the answer read directly from the question (no hop by hop reading of its descriptions).

        :param query: the question.
        :param documents: the ranked chunks, numbered [1]..[n] in this order.
        :param analysis: the question's analysis (a `QuestionAnalysis`, or its `to_dict()`); made here when not
            given.
        :param skip: sentences (their text) not to read: a chain's later link passes over an earlier one's (`_link`).
        :returns: `replies`: one answer string whose sentences cite their chunks; `short_answer`: the name, date,
            number or place the question asks for, without citations (empty when it asks for none, none was found or
            none is sure); `short_answer_confidence`: the confidence of the short answer shown, or of the best part's
            when none is shown (None when nothing answers); `parts`: per part of the question, its `question` (as the
            question words it), `short_answer` (shown or not), `short_answer_confidence`, whether it is `sure`
            (shown), the `features` its confidence read and, for a short answer that is a verdict, its kind
            (`verdict`: one of `VERDICT_KINDS`; "" otherwise).
        """
        if not documents:
            return {"replies": [NO_SOURCES_ANSWER], **_NO_SHORT_ANSWER}
        self.warm_up()
        question = QuestionAnalysis.from_dict(analysis) if analysis else analyze_question(query)
        parts = list(question.parts) or [QuestionPart(query, "what", (), tuple(terms(query)))]
        # The second hop of a multi-hop question may sit a little lower in the list than the first.
        pool = candidate_sentences(documents, max(self.max_chunks, BRIDGE_CHUNKS))
        if skip:
            pool = [candidate for candidate in pool if candidate.text not in skip]
        candidates = [candidate for candidate in pool if candidate.rank < self.max_chunks]
        if not candidates:
            return {"replies": [NO_EVIDENCE_ANSWER], **_NO_SHORT_ANSWER}
        document_frequency = Counter(term for candidate in candidates for term in candidate.terms)
        # "A has an OBE. Does B also have one?": the question asked is its last sentence (`_asked_sentence`).
        asked = _asked_sentence(question)
        # Its parse says whether it asks yes or no, or to choose among options joined by "or" (`question_form`).
        # (None unless its first word, "Isn't" split into "Is" and "n't", is a yes/no word.)
        form = question_form(asked)
        if form == "existential":
            # "Are there any regions where ...?" asks for the regions, as "which regions" would (an analysis made
            # before existential questions were told apart typed it yes/no): its instances answer, not "yes"/"no".
            parts = [existential_part(part, asked) if part.kind == "yes_no" else part for part in parts]

        chosen: list[tuple[Sentence, float]] = []
        # Per answered part (its position in `picks`): its short answer, the chunk it cites and how it was found.
        shorts: dict[int, tuple[str, int, str]] = {}
        found_how: list[dict[str, Any]] = []  # per answered part: what its confidence reads of the sentence chosen
        unanswered: list[QuestionPart] = []
        all_scored: list[tuple[float, Sentence, QuestionPart]] = []
        unanchored: set[int] = set()  # the sentences that lost their off-subject weight
        picks: list[tuple[QuestionPart, Sentence, str, dict[str, float]]] = []  # per answered part
        fellows: list[Sentence] = []  # the first answered part's other supporting sentences of its chunk
        # The names the question is about: its names, and its words that name a top chunk's subject (a title).
        top_titles = (str((document.meta or {}).get("source_title") or "") for document in documents[: self.max_chunks])
        titles = frozenset().union(*(terms_of(title) for title in top_titles))
        anchors = (question.anchor_terms | (question.question_terms & titles)) & frozenset(document_frequency)
        for part in parts:
            weights = part_weights(part, parts, document_frequency, len(candidates), anchors)
            scored = []
            base: dict[int, dict[str, float]] = {}  # per candidate: the features read without a parse
            # The question's names decide which sentences may answer and which names a hop follows; among those, a
            # term counts by its IDF alone: all the subject's sentences name it, the answer says what is asked of it.
            ranking = part_weights(part, parts, document_frequency, len(candidates))
            for candidate in candidates:
                share = share_of(weights, candidate)
                if share < self.min_support and not (candidate.stored and candidate.cosine >= self.min_cosine):
                    continue
                if other_label(part.text, candidate.text):
                    continue  # "Series B" where the question asks of the "Series D": another thing
                features = {
                    "share": share_of(ranking, candidate),
                    "cosine": candidate.cosine,
                    "top_rank": 1.0 / (1 + candidate.rank),
                    "off_subject": float(
                        bool(anchors) and not anchors & (candidate.terms | candidate.title_terms | candidate.before)
                    ),
                }
                if features["off_subject"]:
                    unanchored.add(id(candidate))
                base[id(candidate)] = features
                scored.append((scoring.sentence_score(features), candidate))
            if not scored:
                unanswered.append(part)
                continue
            scored.sort(key=lambda item: (-item[0], item[1].rank))
            best_score, best, span = scored[0][0], scored[0][1], ""
            how, kind_match = "phrase", 0.0
            # The few best sentences are read for a span of the asked kind (`kind_found`) or, for a phrase part, for
            # a phrase in its wh-word's role ("What did Tesla patent?" -> "he patented the Tesla coil": `gap_found`).
            phrase_part = not part.wants_span and (part.focus or part.kind in PHRASE_KINDS)
            gap = question_gap(part.text) if phrase_part and scoring.on("gap") else None
            logged = scoring.log is not None and (part.wants_span or gap is not None)
            if part.wants_span or gap is not None:
                read = ("kind_found", "kind_rank") if part.wants_span else ("gap_found",)
                bonus, best_score = scoring.most_gained(read), -math.inf
                group = []
                read_at_most = LOGGED_SENTENCES if logged else PARSED_PER_PART
                for position, (score, candidate) in enumerate(scored[:read_at_most]):
                    if position >= PARSED_PER_PART or (position and best_score >= score + bonus):
                        if not logged:
                            break  # no later sentence can overtake the one chosen
                        compete = False
                    else:
                        compete = True
                    if gap is None:
                        found, preference = ranked_answer_span(candidate.text, part, question.question_terms, scoring)
                        # The part's first label is what it most likely wants ("who": a person before an organisation).
                        gained = {"kind_found": float(bool(found)), "kind_rank": min(preference, 2.0) if found else 0.0}
                    else:  # phrase_span below reads the chosen sentence for its phrase
                        filled, found = fill_gap(parse(candidate.text), gap), ""
                        fits = filled and not repeats_question(filled, question.question_terms)
                        gained = {"gap_found": float(bool(fits))}
                    effective = score + scoring.sentence_score(gained)
                    group.append(({**base[id(candidate)], **gained}, candidate.text))
                    if not compete:
                        continue
                    if effective > best_score:
                        best_score, best, span = effective, candidate, found
                        how = "entity" if found else ("role" if gap is not None and fits else "phrase")
                        kind_match = (1.0 if preference == 0 else 0.5) if found else 0.0
                if logged:
                    scoring.log.append({"kind": "sentence", "candidates": group})
            elif scoring.log is not None:
                group = [(base[id(candidate)], candidate.text) for _, candidate in scored[:LOGGED_SENTENCES]]
                scoring.log.append({"kind": "sentence", "candidates": group})
            life = _life_reading(part, best, scored) if scoring.on("life_dates") else None
            if life is not None:
                # "When did X die?": the end of the life's bracket after X's name in the sentence opening with it.
                # Scored as any sentence holding an entity of the asked kind first (`kind_found`, `kind_rank` 0).
                best_score, best, span = life
                best_score += scoring.sentence_score({"kind_found": 1.0, "kind_rank": 0.0})
                how, kind_match = "entity", 1.0
            if not span and (part.focus or part.kind in PHRASE_KINDS):
                # No entity of the asked kind in the chosen sentence: the phrase the wh-word stands for.
                span = phrase_span(best.text, part, question.question_terms, self._model, scoring)
            chosen.append((best, best_score))
            if span:
                shorts[len(picks)] = (span, best.number, how)
            runner_up = max((score for score, candidate in scored if candidate is not best), default=None)
            found_how.append(
                {
                    "score": best_score,
                    "runner_up": runner_up,
                    "kind_match": kind_match,
                    "sentence": best,
                    "top": [(score, candidate.text) for score, candidate in scored[:TOP_SENTENCES]],
                    "life": life is not None,
                }
            )
            if not picks:
                fellows = [
                    candidate
                    for score, candidate in scored
                    if candidate.number == best.number
                    and candidate is not best
                    and score >= RELATIVE_CUTOFF * best_score
                ]
            picks.append((part, best, span, weights))
            all_scored.extend((score, candidate, part) for score, candidate in scored)

        if not chosen:
            return {"replies": [abstain(parts)], **_NO_SHORT_ANSWER}
        used = {id(sentence) for sentence, _ in chosen}
        # Further sentences are measured against the parts' own best ones, not against the hops (scored otherwise).
        top = max(score for _, score in chosen)
        # "Are A and B both ...?", "Which is older, A or B?": the answer compares what the sources say of each.
        verdict = None
        kind = _verdict_kind(question, form) if scoring.on("verdict") else ""
        if kind == YES_NO:
            verdict = yes_no(asked, pool)
        elif kind == CHOICE:
            verdict = compare(question.question, pool)
        if verdict is None and kind == CHOICE:
            # The options a choice lists, to hold back a span read otherwise that names none of them (see `run`).
            found_how[0]["options"] = listed_options(question.question)
        if verdict is not None:
            found_how[0]["verdict"] = verdict.kind
            # The verdict is the short answer; the sentences read for each subject follow the best one.
            shorts = {0: (verdict.answer, verdict.evidence[0].number, "verdict")}
            # A verdict is as sure as the weakest of the sentences read for its subjects: each is rated as one the
            # verdict rests on, with its own score, cosine and chunk rank.
            best_score: dict[int, float] = {}
            for score, candidate, _ in all_scored:
                best_score[id(candidate)] = max(score, best_score.get(id(candidate), score))
            found_how[0]["sides"] = [(row, best_score.get(id(row), 0.0)) for row in verdict.evidence]
            for sentence in verdict.evidence:
                if id(sentence) not in used:
                    used.add(id(sentence))
                    chosen.append((sentence, chosen[0][1]))
        if verdict is None and len(used) < self.max_sentences:
            # A multi-hop question: follow the first part's sentence through the names it brings in.
            part, first, span, weights = picks[0]
            room = self.max_sentences - len(used)
            # The best sentence is about another subject sharing a word of the question's name, and a sentence of the
            # chunk about that name scored too ("Drew Fuller stared in ..."; "The Drew Pearson Show was ..."): the
            # chain starts there ...
            start = subject_start(first, all_scored, question) if len(picks) == 1 and scoring.on("chain") else None
            if start is not None:
                # ... in place of the sentence about another subject, whose span answered nothing asked of it.
                used.discard(id(first))
                used.add(id(start))
                chosen[0] = (start, chosen[0][1])
                if span:
                    shorts.pop(0, None)
                first, span = start, ""
                fellows = [candidate for _, candidate, _ in all_scored if candidate.number == start.number]
            hops = (
                further_hops(first, part, pool, question.question_terms, weights, used, room, fellows, scoring)
                if scoring.on("chain")
                else []
            )
            for hop in hops:
                if hop.via is not first and all(hop.via is not sentence for sentence, _ in chosen):
                    chosen.append((hop.via, hop.score))
                chosen.append((hop.sentence, hop.score))
            # The first hop's span named the bridge the chain crossed, and a later hop is a sentence of the chunk
            # about that bridge (its title names it) that adds to the question: the short answer is what it says.
            if hops and (not span or terms_of(span) & hops[0].bridge):
                hop_span, number, gain = "", 0, 0.0
                for position, hop in enumerate(hops):
                    gain += hop.gain
                    if span and (
                        gain < MIN_HOP_GAIN or hop.about < MIN_BRIDGE_SHARE or not hop.bridge & hop.sentence.title_terms
                    ):
                        continue
                    found = hop.span
                    if not found and not part.wants_span and (part.focus or part.kind in PHRASE_KINDS):
                        crossed = brought_in(first, *(earlier.sentence for earlier in hops[:position]))
                        asked_terms = question.question_terms | crossed
                        found = phrase_span(hop.sentence.text, part, asked_terms, self._model, scoring)
                    if found:
                        hop_span, number, last = found, hop.sentence.number, position
                if hop_span:
                    shorts[0] = (hop_span, number, "chain")
                    # The links the answer crossed, first to last: each sentence, with the one that named its bridge.
                    links = [first]
                    for hop in hops[: last + 1]:
                        links += [sentence for sentence in (hop.via, hop.sentence) if sentence not in links]
                    found_how[0]["links"] = [(link, link_score(link, hops, found_how[0]["score"])) for link in links]
            if len(used) < self.max_sentences and scoring.on("relation"):
                # A second subject the question names ("... by Aldric and Osmund Varne, he was a count of which
                # town?"): the sentence of the chunk about it that adds most to the question joins the answer.
                other = relation_sentence([sentence for sentence, _ in chosen], pool, question, weights, used)
                if other is not None:
                    used.add(id(other))
                    chosen.append((other, top))
        if len(used) < self.max_sentences:
            spans = {text for text, _, _ in shorts.values()}
            for score, candidate in further_sentences(
                all_scored, used, unanchored, spans, question.question_terms, top, scoring
            ):
                if len(used) >= self.max_sentences:
                    break
                used.add(id(candidate))
                chosen.append((candidate, score))
        ordered = [sentence for sentence, _ in chosen]
        if verdict is None and picks and _asks_a_name(picks[0][0]) and scoring.on("subject"):
            # No short answer beyond the question's own names: a cited sentence about its chunk's subject ("it became
            # the first aircraft to drop ...", "Smithers first appeared in ...") answers with that subject's name.
            asked = frozenset(terms(folded(question.question)))
            kept = [text for text, _, _ in shorts.values() if not repeats_question(folded(text), asked)]
            if not kept:
                found = subject_answer(ordered, documents, question.question, asked, picks[0][3], self.min_support)
                if found is not None:
                    shorts = {0: (*found, "subject")}
        # A part that asks for no short answer ("Why ...?", "Tell me about X") and got one only from the fallbacks
        # above has none: its cited sentences are the answer, rated by no one and not flagged unsure.
        shorts = {
            position: found
            for position, found in shorts.items()
            if found[2] != "subject" or picks[position][0].labels or picks[position][0].focus
        }
        # The fitted span chooser rereads each part's sentence for the span that answers (the rules' one of them).
        span_stats: dict[int, tuple[float, float]] = {}
        if verdict is None:
            cited_ids = {id(sentence) for sentence in ordered}
            self._choose_spans(shorts, picks, found_how, question.question_terms, span_stats, cited_ids)
            pronoun_doers(shorts, picks, found_how, question.question_terms, span_stats)
        # A short answer quotes its words, not the sentence's reference marks or closing punctuation.
        shorts = {position: (bare_span(text), number, how) for position, (text, number, how) in shorts.items()}
        shorts = {position: found for position, found in shorts.items() if found[0]}
        # Each part's short answer with its confidence; only those that reach the threshold lead the answer.
        top_chunks = [
            (document.content or "", str((document.meta or {}).get("source_type") or ""))
            for document in documents[: self.max_chunks]
        ]
        retrieval_scores = [document.score for document in documents[: self.max_chunks]]
        confidences: dict[int, float] = {}
        # A part asking who did something, answered by a name the graph knows as a product, a work or an event (the
        # recogniser's label of one mention aside), is not rated: it shows no headline (`names_no_doer`).
        known = graph_kinds(documents[: self.max_chunks])
        for position, (text, number, how) in shorts.items():
            part, stats = picks[position][0], found_how[position]
            if how != "verdict" and scoring.on("graph_kind") and names_no_doer(text, part.labels, known):
                continue
            # A chain is as sure as its weakest link: each link's sentence is rated as one the span rests on; a verdict
            # as the weakest of its subjects' sentences.
            links = stats.get("links") if how == "chain" else stats.get("sides") if how == "verdict" else None
            rated = []
            for sentence, score in links or [(stats["sentence"], stats["score"])]:
                features = part_features(
                    score=score,
                    runner_up=stats["runner_up"],
                    cosine=sentence.cosine,
                    rank=number - 1 if not links else sentence.rank,
                    kind_match=stats["kind_match"] if how == "entity" else 0.0,
                    alternatives=alternatives(sentence.text, part, question.question_terms) if how == "entity" else 0,
                    sentence=sentence.text if how in {"entity", "role", "phrase", "chain"} else "",
                    found_by=how,
                    span=text,
                    chunks=top_chunks,
                    labels=part.labels,
                    asks_phrase=bool(part.focus) or part.kind in PHRASE_KINDS,
                    parts=len(parts),
                    question_terms=question.question_terms,
                )
                features |= evidence_features(
                    question=question.question,
                    sentence=sentence.text if how in {"entity", "role", "phrase", "chain"} else "",
                    span=text,
                    top=stats["top"],
                    scores=retrieval_scores,
                    question_terms=question.question_terms,
                    model=self._model,
                    cache=self._meaning,
                )
                if position in span_stats:  # absent otherwise: the confidence reads an unread span's as the mean
                    probability, margin = span_stats[position]
                    features |= {"span_probability": probability, "span_margin": margin}
                rated.append((self._confidence.probability(features), features))
            confidences[position], stats["features"] = min(rated, key=lambda item: item[0])
            measured = self._confidence.verdict_probability(stats.get("verdict", "")) if how == "verdict" else None
            if measured is not None:
                # A verdict of a kind whose outcomes were counted on labelled questions is as sure as that count says
                # (`research fit verdicts`): the model above, fitted mostly on single-hop spans, barely sees verdicts.
                confidences[position] = measured
        sure = {position for position, value in confidences.items() if value >= self.threshold}
        shown = [(text, number) for position, (text, number, _) in sorted(shorts.items()) if position in sure]
        lines = []
        if shown:
            lines.append("; ".join(f"{text} [{number}]" for text, number in dict.fromkeys(shown)) + ".")
        first_number: dict[str, int] = {}  # the same sentence from two chunks is cited once, to the first
        for sentence in ordered:
            first_number.setdefault(sentence.text, sentence.number)
        cited = [cite_sentence(text, number) for text, number in first_number.items()]
        links = found_how[0].get("links") if shorts.get(0, ("", 0, ""))[2] == "chain" else None
        if links:
            # A chain states the bridges it crossed first, in order (`state_chain`).
            chain = [cite_sentence(sentence.text, first_number[sentence.text]) for sentence, _ in links]
            cited = [line for line in cited if line not in chain]
            cited.insert(0, state_chain(chain))
        lines.extend(cited)
        unsure = [picks[position][0] for position in sorted(set(shorts) - sure)]
        if unsure and not shown:
            # No headline: the answer opens with its best cited sentence and says so.
            lines.insert(1, UNSURE_NOTE)
        elif unsure:
            lines.extend(UNSURE_PART_LINE.format(part=part.as_asked) for part in unsure)
        if unanswered:
            lines.append(abstain(unanswered, partial=True))
        short_answer = "; ".join(dict.fromkeys(text for text, _ in shown))
        answer_parts = []
        for part in parts:
            position = next((index for index, pick in enumerate(picks) if pick[0] is part), None)
            text = shorts[position][0] if position in shorts else ""
            answer_parts.append(
                {
                    "question": part.as_asked,
                    "short_answer": text,
                    "short_answer_confidence": round(confidences[position], 4) if position in confidences else None,
                    "sure": position in sure,
                    "features": found_how[position].get("features") if position is not None else None,
                    # The kind of verdict the short answer is (`VERDICT_KINDS`), for the verdicts' fit; else "".
                    "verdict": found_how[position].get("verdict", "") if _is_verdict(shorts, position) else "",
                }
            )
        headline = [confidences[position] for position in sure]
        overall = min(headline) if headline else max(confidences.values(), default=None)  # None: no part has one
        # The sentence the first part's short answer was read from (a chain's last link), for `_chain_answer`.
        evidence = None
        if 0 in shorts and shorts[0][2] in {"entity", "role", "phrase", "chain"}:
            links = found_how[0].get("links") if shorts[0][2] == "chain" else None
            sentence = links[-1][0] if links else found_how[0]["sentence"]
            evidence = (sentence.text, first_number.get(sentence.text, sentence.number))
        # The same answer without its headline, for a one-part answer `run` holds back (no headline, the cited
        # sentences as the answer, said to be unsure).
        held = " ".join([*lines[1:2], UNSURE_NOTE, *lines[2:]]) if shown and len(parts) == 1 else None
        return {
            "replies": [" ".join(lines)],
            "short_answer": short_answer,
            "short_answer_confidence": None if overall is None else round(overall, 4),
            "parts": answer_parts,
            "_evidence": evidence,
            "_held_reply": held,
            "_off_options": len(parts) == 1 and 0 in shorts and _names_no_option(shorts[0][0], found_how[0]),
        }

    def _choose_spans(
        self,
        shorts: dict[int, tuple[str, int, str]],
        picks: list[tuple[QuestionPart, Sentence, str, dict[str, float]]],
        found_how: list[dict[str, Any]],
        question_terms: frozenset[str],
        span_stats: dict[int, tuple[float, float]],
        cited: set[int],
    ) -> None:
        """The span model reads each part whose span the rules read from its sentence (or that asks for one and got
        none, when it chooses): rating the rules' span ("rate": `span_stats` receives its probability and its lead
        over the best other candidate), replacing it with the candidate it rates highest ("choose": its probability
        and lead over the runner-up) or replacing it only when that candidate leads it by the fitted margin ("switch":
        the kept span's probability and lead). Spans found otherwise (a chain, a verdict, a chunk's
        subject) are not read; `cited`: the ids of the sentences the answer cites."""
        for position, (part, _, _, _) in enumerate(picks):
            found = shorts.get(position)
            if found is not None and found[2] not in RULE_WAYS:
                continue
            if found is None and not (part.labels or part.focus):
                continue
            sentence = found_how[position]["sentence"]
            if id(sentence) not in cited:
                continue  # the answer no longer cites it (a chain started elsewhere)
            rule_span, rule_way = (found[0], found[2]) if found else ("", "")
            if self.span_log is not None:
                self.span_log.append(
                    {
                        "position": position,
                        "sentence": sentence.text,
                        "part": asdict(part),
                        "question_terms": sorted(question_terms),
                        "rule_span": rule_span,
                        "rule_way": rule_way,
                    }
                )
            if self._span_model is None:
                continue
            if self.span_choice == "rate" and not rule_span:
                continue
            rated = rated_candidates(sentence.text, part, question_terms, rule_span, rule_way, self._span_model)
            if self.span_choice == "rate" or found_how[position].get("life"):
                # A life's date is the bracket's asked end, whichever of its dates the model would pick: only rated.
                span_stats[position] = rate_span(rated)
                continue
            if self.span_choice == "switch":
                choice = switch_span(sentence.text, rule_span, rated, self._span_model.switch_margin)
            else:
                choice = choose_span(sentence.text, rated)
            if choice is None:
                continue
            span_stats[position] = (choice.probability, choice.margin)
            if choice.text == rule_span:
                continue
            how = rule_way or "phrase"
            if how == "entity":
                labels = part.labels
                kind_match = 1.0 if labels and choice.label == labels[0] else 0.5 if choice.label in labels else 0.0
                found_how[position]["kind_match"] = kind_match
                how = "entity" if kind_match else "phrase"
            shorts[position] = (choice.text, sentence.number, how)


_A_YEAR = re.compile(r"\b\d{3,4}\b")


def _life_reading(
    part: QuestionPart, best: Sentence, scored: list[tuple[float, Sentence]]
) -> tuple[float, Sentence, str] | None:
    """For a part asking when a person it names was born or died (`life_dates.asked_life_event`), the best-scored
    sentence opening with that name and its life's bracket, with its score and the asked date
    (`life_dates.life_answer`); None otherwise, or when the sentence chosen (`best`) words a birth or a death with a
    year ("She died of cancer aged 74" gives none)."""
    if asked_life_event(part.text) is None:
        return None
    if terms_of(best.text) & LIFE_EVENT_TERMS and _A_YEAR.search(best.text):
        return None  # a sentence dating the birth or the death in words ("X died in Ghent on 9 May 1702") stands
    for score, candidate in scored:
        date = life_answer(candidate.text, part.text)
        if date:
            return score, candidate, date
    return None


def _asks_a_name(part: QuestionPart) -> bool:
    """Whether the part asks who or what something is (a name or a kind), not when, where or how many."""
    return part.kind in {"who", "what", "which"} and bool(part.focus or part.labels)


def _is_verdict(shorts: dict[int, tuple[str, int, str]], position: int | None) -> bool:
    """Whether the part at `position` has a short answer and it is a verdict."""
    return position in shorts and shorts[position][2] == "verdict"


def _asked_sentence(question: QuestionAnalysis) -> str:
    """The sentence of the question that asks: "A has an OBE. Does B also have one?" asks its last. It is cut only
    when the question is a yes/no one or could hold one (a yes/no word opening a word, before a space or the end): no
    other cut of it changes what the answer reads. Read for its cuts alone, it is parsed without the recogniser."""
    asked = question.question
    if question.kind == "yes_no" or _MAY_ASK_YES_NO.search(asked):
        start, end = (sentence_spans(asked, cache=False) or [(0, len(asked))])[-1]
        asked = asked[start:end]
    return asked


def asks_for_verdict(query: str, analysis: QuestionAnalysis | dict | None = None) -> bool:
    """Whether `run` would answer `query` with a verdict reading (`comparison.compare` or `comparison.yes_no`), read as
    `run` reads it (with the question's `analysis` when given): what `research fit verdicts` replays."""
    # As `run` reads it: an empty or absent analysis is made from the question.
    question = QuestionAnalysis.from_dict(analysis) if analysis else analyze_question(query)
    return bool(_verdict_kind(question, question_form(_asked_sentence(question))))


def _verdict_kind(question: QuestionAnalysis, form: str | None) -> str:
    """Which verdict reading answers the question, by the form of its asking sentence (`question_form`): `CHOICE`
    (`comparison.compare`), `YES_NO` (`comparison.yes_no`, whose verdict may be of the kind `BOTH`), or "" for none.
    The part records the kind the verdict itself says (`Verdict.kind`)."""
    if form == "yes_no":
        return YES_NO
    if (form == "choice" or question.kind in {"which", "who", "what"}) and _ALTERNATIVE.search(question.question):
        return CHOICE
    return ""


def _names_no_option(span: str, how: dict[str, Any]) -> bool:
    """Whether a choice question's span (no verdict was reached) names none of the options it lists: neither holds
    the other's terms. False for a question that is no choice or lists no two options."""
    listed = [set(terms(option)) for option in how.get("options") or []]
    said = set(terms(span))
    if len(listed) < 2 or not said:
        return False
    return not any(said <= option or option <= said for option in listed if option)


def _held_back(direct: dict[str, Any], held: str | None) -> dict[str, Any]:
    """`direct`'s one part held back: its span answers one of the question's descriptions, not the question, so it is
    no candidate answer the confidence rates. The part keeps its span (what was read) but has no confidence, no
    features to rate and is not sure, and a headline it led gives way to `held` (the same answer without it, said to
    be unsure): every output, the evaluation's risk-coverage (which ranks only rated parts) and the confidence fit
    (which reads only parts with features) then say the same thing, whatever the threshold."""
    part = direct["parts"][0]
    part.update(short_answer_confidence=None, sure=False, features=None)
    if held is not None:
        direct["replies"] = [held]
    direct["short_answer"], direct["short_answer_confidence"] = "", None
    return direct
