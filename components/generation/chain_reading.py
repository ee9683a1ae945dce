"""A chain question read hop by hop through its descriptions: "Who directed the film that was shot in Brindlemoor
in 1979?" is cut at its innermost description (`question_chain.decompose`), the description asked first as a question
of its own, its short answer (the bridge) put in its place, and so on up to MAX_HOPS links; the last question's short
answer is the answer, stated with the cited sentences of the bridges it crossed and as sure as its weakest link.

`ChainReading` is the answer component's part that reads the chain: each link is the component's own reading of one
question (`_compose`). The functions beside it tell what the component weighs a direct reading of the question
against: whether its span answers one of the question's descriptions rather than the question (`read_off_hop`,
`is_last_bridge`, `answers_its_clause`), whether a link's answer is a name to ask further of (`_a_name`) and whether
a link is read about its bridge (`_names_bridge`, `_mostly_bridge`, `_bridge_sentences`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from haystack import Document

from components.generation.answer_scoring import AnswerScoring
from components.generation.answer_sentences import terms_of
from components.generation.answer_wording import UNSURE_NOTE, cite_sentence, state_chain
from components.generation.further_sentences import MAX_HOPS
from components.generation.question_analysis import analyze_question, question_form
from components.generation.question_chain import CLAUSE_DEPS, decompose
from components.generation.span_rules import DISAMBIGUATION, equated_with
from components.text.analyzer import terms
from components.text.language import VALUE_LABELS, chunk_sentence_spans, parse, parse_syntax

# A sentence opening with a subject pronoun ("He has sold ..."): its claim is said of what the pronoun stands for. A
# possessive ("Its first school opened ...") says it of another thing, that one's.
_PERSONAL_START = re.compile(r"(?:it|he|she|they)\b", re.I)


class ChainReading:
    """The chain reading of the component that composes the offline answer (`ExtractiveAnswerGenerator`), which
    gives it its sentence and span weights (`scoring`), the confidence a short answer needs to be shown
    (`threshold`), the span fit's log while one is collected (`span_log`) and its reading of one question
    (`_compose`)."""

    scoring: AnswerScoring
    threshold: float
    span_log: list[dict[str, Any]] | None
    _compose: Callable[..., dict[str, Any]]

    def _chain_answer(self, query: str, documents: list[Document]) -> dict[str, Any] | None:
        """The question answered hop by hop through its descriptions (`question_chain.decompose`): the innermost
        description asked first as a question of its own, its short answer (the bridge) put in its place, and so on
        up to MAX_HOPS links; the last question's short answer is the answer. Each link is rated by the fitted
        confidence as the single-hop answer it is, and the chain is as sure as its weakest link (the hop that found
        the last bridge read as sure as the last link when that is read from the bridge's own text, `_own_text`).
        None when the question holds no description, a hop finds no new name, or the last link is not a sentence of
        its own that names the bridge it crossed."""
        found = self._hops(query, documents)
        if found is None:
            return None
        links, question = found
        return self._chained(query, links, self._last_link(question, documents, links))

    def _hops(self, query: str, documents: list[Document]) -> tuple[list[dict[str, Any]], str] | None:
        """The links of a chain question's descriptions, innermost first (`_link` each), and the question left with
        the last bridge in its description's place; None when the question holds no description or a hop finds no
        new name."""
        walked = self._walk_hops(query, documents)
        if walked is None or walked[2] is not None:
            return None  # no description, or a hop with no bridge, the hop's own name again or no name to ask more of
        links, question, _, _ = walked
        return (links, question) if links else None

    def unanswered_hop(self, query: str, documents: list[Document]) -> tuple[str, str] | None:
        """The first link of a chain question that `documents` leave unanswered, as the question to retrieve for: the
        later hop's question with the bridge an earlier link found in its description's place ("Where was Ilsa Varga
        born?"), and that bridge. None when the question is no chain (`question_chain.decompose`), its first hop finds
        no bridge in `documents` (nothing to fill in), or every link is answered there, the chain sure. What a
        per-hop retrieval asks (`HopRetriever`); reads the chunks as `run` does and answers nothing."""
        walked = self._walk_hops(query, documents) if self.scoring.on("decompose") else None
        if walked is None or not walked[0]:
            return None
        links, question, unanswered, _ = walked
        if unanswered is not None:
            # A later hop the chunks do not answer is asked with its bridge; a first one has none to ask with.
            return unanswered, links[-1]["span"]
        chained = self._chained(query, links, self._last_link(question, documents, links))
        if chained is not None and chained["parts"][0]["sure"]:
            return None
        return question, links[-1]["span"]

    def _walk_hops(
        self, query: str, documents: list[Document]
    ) -> tuple[list[dict[str, Any]], str, str | None, dict[str, Any] | None] | None:
        """The chain's links read from `documents`, innermost first, the question left with the last bridge in its
        description's place, the first hop they leave unanswered (no bridge, the hop's own name again, or no name
        to ask more of; None when every hop was read) and that hop's own reading when it had one (a span that is no
        name to ask further of, or the hop's own name again; else None). None for a question that is no chain."""
        if question_form(query) in {"yes_no", "choice"}:
            return None
        links: list[dict[str, Any]] = []
        question = query
        while len(links) < MAX_HOPS - 1 and (cut := decompose(question)) is not None:
            link = self._link(cut.hop, documents, links[-1]["span"] if links else "")
            if link is not None:
                link = _described_by_its_noun(cut.hop, link, documents)
            if link is None or terms_of(link["span"]) & _name_terms(cut.hop) or not _a_name(link):
                return links, question, cut.hop, link
            links.append(link)
            question = cut.rest(link["span"])
        return links, question, None, None

    def _chained(self, query: str, links: list[dict[str, Any]], last: dict[str, Any] | None) -> dict[str, Any] | None:
        """The chain's answer from its hops' links and its last link (see `_chain_answer`), or None."""
        if last is None:
            return None
        bridge = terms_of(links[-1]["span"])
        if _mostly_bridge(last["span"], links[-1]["span"]) or not _names_bridge(last, bridge):
            return None  # the answer is the bridge again (`_mostly_bridge`), or its sentence does not name the bridge
        if last["sentence"] in {link["sentence"] for link in links}:
            return None  # one sentence answers the whole question: no chain to state
        # The hop that found the last bridge is as sure as the last link when that link is read from the bridge's own
        # text: a chunk whose title is the bridge, ranked for the whole question before any bridge was known (not
        # one a per-hop retrieval fetched for it). The sources about the bridge were found by the question's own words
        # and say what it asks of the bridge; the hop's sentence had only pointed at it ("A number of films, such as
        # X (1986), Y (2001) ..." for the film shot there in 1986).
        rated = [*links[:-1], last] if _own_text(last, bridge) else [*links, last]
        links = [*links, last]
        weakest = min(rated, key=lambda link: link["confidence"])
        confidence = weakest["confidence"]
        sure = confidence >= self.threshold
        chain = [cite_sentence(link["sentence"], link["number"]) for link in links]
        lines = [f"{last['span']} [{last['number']}]."] if sure else []
        lines.append(state_chain(chain))
        if not sure:
            lines.append(UNSURE_NOTE)
        part = {
            "question": query,
            "short_answer": last["span"],
            "short_answer_confidence": round(confidence, 4),
            "sure": sure,
            "features": weakest["features"],
        }
        return {
            "replies": [" ".join(lines)],
            "short_answer": last["span"] if sure else "",
            "short_answer_confidence": round(confidence, 4),
            "parts": [part],
        }

    def _last_link(
        self, question: str, documents: list[Document], links: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """The chain's last link: `question` (the rest, with the last bridge in place) read about that bridge, past the
        earlier links' sentences that say nothing asked of it (`_bridge_sentences`)."""
        return self._link(question, documents, links[-1]["span"], _bridge_sentences(question, links))

    def _link(
        self, question: str, documents: list[Document], bridge: str = "", read: frozenset[str] = frozenset()
    ) -> dict[str, Any] | None:
        """One hop of a chain: the single-hop answer to `question` (no chain of its own), its short answer, the
        sentence it was read from and that sentence's chunk number, and its fitted confidence; None without one.
        With a `bridge` (the name an earlier hop found), the chunks naming it are read first, in their order: the
        chunks were ranked for the whole question, and the one about the bridge may sit below the few the answer
        reads. Citations keep the chunks' own numbers. The sentences `read` (earlier links' that say what the bridge
        is, not what is asked of it: `_bridge_sentences`) are passed over when another sentence holds a name, date
        or number of the kind asked; a phrase read elsewhere is no better a guess than the earlier sentence's, which
        is read then."""
        ordered = documents
        if bridge:
            named = terms_of(bridge)
            holds = [
                named <= terms_of(f"{(document.meta or {}).get('source_title') or ''} {document.content or ''}")
                for document in documents
            ]
            ordered = [d for d, held in zip(documents, holds, strict=True) if held]
            ordered += [d for d, held in zip(documents, holds, strict=True) if not held]
        # A reading that names the bridge again (`_mostly_bridge`: "Karl Orlo Tamsin" from "Carl Orlo Tamsin, also
        # spelled Karl Orlo Tamsin, was ...") says what the bridge is, not what is asked of it: its sentence is passed
        # over and the chunks read again, until a reading names something else or none is left (each pass skips one
        # sentence more, so the loop ends).
        passed: frozenset[str] = frozenset()
        while True:
            found = None
            if read:
                found = self._read_link(question, documents, ordered, read | passed)
                if found is not None and not (found["features"] or {}).get("found_entity"):
                    found = None
            if found is None:
                found = self._read_link(question, documents, ordered, passed)
            if found is None or not bridge or not _mostly_bridge(found["span"], bridge):
                return found
            if found["sentence"] in passed:
                return found
            passed |= {found["sentence"]}

    def _read_link(
        self, question: str, documents: list[Document], ordered: list[Document], skip: frozenset[str]
    ) -> dict[str, Any] | None:
        """`_link`'s reading of `ordered` (`documents` reordered), the sentences `skip` passed over."""
        # The span fit's log collects the question's own reading only.
        log, self.span_log = self.span_log, None
        try:
            out = self._compose(
                question, ordered, None, self.scoring.without(["chain", "relation", "decompose"]), skip=skip
            )
        finally:
            self.span_log = log
        evidence = out.get("_evidence")
        part = (out.get("parts") or [None])[0]
        if not evidence or not part or not part["short_answer"] or part["short_answer_confidence"] is None:
            return None
        sentence, number = evidence
        chunk = ordered[number - 1]
        number = next(position for position, document in enumerate(documents, 1) if document is chunk)
        return {
            "title": str((chunk.meta or {}).get("source_title") or ""),
            # Ranked for the whole question, not fetched by a per-hop retrieval (`HopRetriever` marks those).
            "ranked": not isinstance((chunk.meta or {}).get("hop"), dict),
            "span": part["short_answer"],
            "confidence": part["short_answer_confidence"],
            "features": part["features"],
            "sentence": sentence,
            "number": number,
        }


def _a_name(link: dict[str, Any]) -> bool:
    """Whether a link's answer is a name a further hop can ask about: a capitalised word (beyond the sentence's
    first, unless the recogniser reads a name there), and not within a date, time, number or amount the recogniser
    labels in its sentence. "a 30-second commercial" or "January 2017" is no bridge: "When did the first edition of
    X come out?" has no description to cross; "Zorvik" in "Zorvik released X in 2019." is one."""
    span, sentence = link["span"], link["sentence"]
    entities = parse(sentence).ents
    words = span.split()
    # Every sentence opens with a capital: there the capital says nothing, but the recogniser's name does.
    if sentence.startswith(span) and not any(
        entity.start == 0 and entity.label_ not in VALUE_LABELS for entity in entities
    ):
        words = words[1:]
    if not any(word[:1].isupper() for word in words):
        return False
    return not any(entity.label_ in VALUE_LABELS and span in entity.text for entity in entities)


def answers_its_clause(question: str, sentence: str) -> bool:
    """Whether `sentence` answers only the innermost description of `question`: a description by a clause of its own
    ("the area where X is located", "the film that was shot in ..."), which names an event the sentence can state,
    while the sentence holds none of the terms the rest of the question asks ("governor", "became", "province" of
    "Who was governor when the area where X is located became a province?"). A description by an "of" phrase or a
    possessive ("the machinery of X", "X's father") names no event of its own: a sentence about the described thing
    may say what is asked of it in other words ("driven by water" for what turned it), so it is never read so."""
    cut = decompose(question)
    if cut is None or not (cut.clause or any(token.dep_ in CLAUSE_DEPS for token in parse_syntax(cut.hop))):
        return False
    rest = frozenset(terms(f"{cut.before} {cut.after}")) - frozenset(terms(cut.hop))
    # A rest asking nothing the description does not ("Who owns the company that owns X?") tells nothing: a sentence
    # stating the description's event may answer the whole question.
    return bool(rest) and not rest & frozenset(terms(sentence))


def _bridge_sentences(question: str, links: list[dict[str, Any]]) -> frozenset[str]:
    """The sentences of a chain's links that its last link may not be read from: those holding none of what the
    question left with the last bridge asks of it (its terms beyond the bridge's name and the asked noun: "born" of
    "In what year was X born?"). Such a sentence said what the bridge is ("following X's resignation" for "the man
    that resigned as ..."), not what is asked of it, and another sentence about the bridge is read in its place. A
    question asking nothing more of the bridge ("In which city was X held?") leaves them all to read: one sentence may
    answer the description and the question together."""
    part = next(iter(analyze_question(question).parts), None)
    if part is None:
        return frozenset()
    asked = frozenset(part.terms) - terms_of(part.focus or "") - terms_of(links[-1]["span"])
    if not asked:
        return frozenset()
    return frozenset(link["sentence"] for link in links if not asked & terms_of(link["sentence"]))


def _names_bridge(last: dict[str, Any], bridge: frozenset[str]) -> bool:
    """Whether a chain's last link is read from a sentence about the bridge: one naming it, or one opening with a
    subject pronoun ("He has sold ...") in a chunk whose title names the whole bridge (a chunk about the bridge,
    whose pronouns stand for it). Not a chunk about something else that names the bridge in passing ("Brand is a
    play by X. It is a verse tragedy ...": "it" is the play, not X), nor a possessive ("Its first school opened in
    1935" says when the school opened, not the bridge)."""
    if bridge & terms_of(last["sentence"]):
        return True
    opens = _PERSONAL_START.match(last["sentence"].lstrip()) is not None
    return opens and bool(bridge) and bridge <= terms_of(DISAMBIGUATION.sub("", last.get("title") or ""))


def _own_text(last: dict[str, Any], bridge: frozenset[str]) -> bool:
    """Whether a chain's last link is read from the bridge's own text: a chunk ranked for the whole question whose
    title (its disambiguation in brackets aside) is the bridge's name, no more and no less."""
    title = terms_of(DISAMBIGUATION.sub("", last.get("title") or ""))
    return bool(bridge) and title == bridge and bool(last.get("ranked"))


def is_last_bridge(span: str, links: list[dict[str, Any]]) -> bool:
    """Whether a span names the last bridge a chain crossed (the answer of its innermost description)."""
    named = terms_of(span)
    return bool(named) and named <= terms_of(links[-1]["span"])


def read_off_hop(span: str, sentence: str, links: list[dict[str, Any]]) -> bool:
    """Whether a direct reading's span answers one of the question's descriptions rather than the question: it is
    the answer of a hop a later hop crossed from, or another span read off the sentence a hop's answer came from
    (the description's own event)."""
    named = terms_of(span)
    if named and any(named <= terms_of(link["span"]) for link in links[:-1]):
        return True  # a bridge a later hop crossed from: the described thing, not what is asked of it
    if is_last_bridge(span, links):
        return False  # the last bridge itself: the cut, not the direct reading, is in doubt (`run` weighs the chain)
    return any(sentence == link["sentence"] for link in links)


def _mostly_bridge(span: str, bridge: str) -> bool:
    """Whether at least half of a span's terms are the bridge's: the bridge again, or another spelling of its name
    ("Karl Orlo Tamsin" for "Carl Orlo Tamsin"), not a name that shares a word with it ("Ivo Orlo Brandt", "the Velmar
    and Kessen peoples" for "North Velmar"), which a chain may well answer (a godfather, the peoples a region is
    named after)."""
    named = terms_of(span)
    return bool(named) and 2 * len(named & terms_of(bridge)) >= len(named)


def _name_terms(question: str) -> frozenset[str]:
    """The terms of the proper nouns a question names (what it looks its answer up by)."""
    return frozenset(term for token in parse_syntax(question) if token.pos_ == "PROPN" for term in terms(token.text))


def _described_by_its_noun(hop: str, link: dict[str, Any], documents: list[Document]) -> dict[str, Any]:
    """A hop asking for a noun ("What is the country where X is found?") answered by a name of its sentence that the
    sources themselves equate with that noun elsewhere ("Zimbara is a country ...", "the country of Zimbara"), when
    the name read is not so described and exactly one other name of the asked kinds in the same sentence is. A city
    and a country are both places to the recogniser; the sources' own sentences say which is which."""
    part = next(iter(analyze_question(hop).parts), None)
    if part is None or part.focus in {"", "?"} or not part.labels:
        return link
    focus = part.focus
    doc = parse(link["sentence"])
    hop_names = _name_terms(hop)
    names = [
        ent.text
        for ent in doc.ents
        if ent.label_ in part.labels and not terms_of(ent.text) & hop_names and terms_of(ent.text)
    ]
    if len(set(names)) < 2:
        return link
    texts = [
        sentence
        for document in documents
        for start, end in chunk_sentence_spans(document.content or "", document.meta)
        if focus in (sentence := (document.content or "")[start:end]).lower()
    ]

    def described(name: str) -> bool:
        for text in texts:
            if name not in text:
                continue
            found = parse(text)
            for index in equated_with(found, focus):
                head = found[index]
                if name in found[head.left_edge.i : head.right_edge.i + 1].text:
                    return True
        return False

    if any(name in link["span"] and described(name) for name in [link["span"], *names]):
        return link
    others = sorted({name for name in names if name not in link["span"] and described(name)})
    return {**link, "span": others[0]} if len(others) == 1 else link
