"""`CitationChecker`: flags each answer sentence whose cited chunks do not support it."""

from __future__ import annotations

import re
from functools import cache
from string import Formatter
from typing import Any

from haystack import Document, component

from components.contracts import RankedDocuments, documents_of
from components.generation.answer_wording import (
    ABSTENTION_PREFIX,
    NO_EVIDENCE_ANSWER,
    NO_SOURCES_ANSWER,
    PARTIAL_ABSTENTION,
    PARTS_ABSTENTION,
    UNSURE_NOTE,
    UNSURE_PART_LINE,
    UNSURE_PREFIX,
    cite_sentence,
)
from components.generation.cited_answer_builder import CITATION_MARK, cited_numbers
from components.resilience.scheduling import async_twin
from components.serialization import InitParameterSerialization
from components.settings import setting_or
from components.text import bm25
from components.text.analyzer import analyze, terms, words
from components.text.language import sentence_spans_around, stored_sentence_spans, use_language_pipeline
from components.validation import within


@component
class CitationChecker(InitParameterSerialization):
    """Scores how well each answer sentence is supported by the chunks it cites, lexically and cheaply.

    A sentence's support is the share of its content terms (weighted by how rare they are among the listed
    chunks) found in the union of its cited chunks. It is `supported` at `min_support` or above; a sentence that
    cites nothing is never supported. Sentences without content terms (e.g. "No.") are left out. A cited yes/no
    verdict ("yes [1].") claims what the question asks: it is checked as the question's terms against every chunk
    the answer cites (the sentences its verdict was read from follow it), and left out when no question is given.

    An uncited sentence that opens as the product's abstentions do ("The sources do not answer ...", "Not sure of the
    short answer ...") is marked `abstains` and never flagged when it claims nothing: it is one of the lines the
    extractive answer writes (the parts it names in the question's words), or what follows its opening holds no
    content term but the question's and the words those lines name a part with ("this part of the question: who
    founded it"). Anything else in it is a claim ("Not sure of the short answer, but X built Y."), checked as any
    other sentence.

    Usage:
    ```python
    checker = CitationChecker(min_support=0.5)
    checker.run(answer="Paris is the capital of France [1].", documents=numbered)["sentences"]
    # [{"text": "Paris is the capital of France [1].", "citations": [1], "supported": True, "support_score": 1.0}]
    ```
    """

    def __init__(self, min_support: float = 0.5, spacy_model: str | None = None) -> None:
        """
        :param min_support: the support score (0-1) at which a sentence counts as supported.
        :param spacy_model: the spaCy pipeline whose lemmas the terms are read with; None: SPACY_MODEL as it is
            built.
        """
        self.min_support = float(within("min_support", min_support, 0, 1))
        self.spacy_model = setting_or(spacy_model, "spacy_model")

    def warm_up(self) -> None:
        """Load the language pipeline (once per process)."""
        use_language_pipeline(self.spacy_model)

    @component.output_types(sentences=list[dict], unsupported=int)
    def run(self, answer: str, documents: list[Document] | RankedDocuments, query: str = "") -> dict[str, Any]:
        """Check the answer's sentences.

        :param answer: the answer text with [n] citations.
        :param documents: the numbered chunks ([1] is the first), as a list or the ranker's `RankedDocuments`.
        :param query: the question: an abstention may name the part it does not answer in its words (without it,
            only the product's fixed lines that name no part abstain).
        :returns: `sentences`: one dict per sentence (text, citations, supported, support_score, abstains);
            `unsupported`: how many sentences are not supported.
        """
        documents = documents_of(documents)
        # The analyzer's cached analysis: the ranker has just analysed these very chunks.
        chunk_terms = [set(analyze(document.content or "").counts) for document in documents]
        results: list[dict[str, Any]] = []
        carried: list[int] = []
        claims = answer_sentences(answer, documents)
        question_terms = frozenset(terms(query or ""))
        answer_citations = sorted({number for number in cited_numbers(answer) if 1 <= number <= len(documents)})
        for index, sentence in enumerate(claims):
            citations = [number for number in cited_numbers(sentence) if 1 <= number <= len(documents)]
            bare = CITATION_MARK.sub(" ", sentence)
            sentence_terms = terms(bare)
            supporting: list[int] = []  # the chunks a verdict is checked against; else its citations
            if citations and is_verdict(bare):
                if not question_terms:
                    # Without the question a verdict's claim is unknown ("yes" to what?): left out, as "Yes." is.
                    carried = citations
                    continue
                # A verdict claims what the question asks (or its opposite), from the sentences read for each of its
                # subjects, which the answer cites after it: checked as the question's terms in those chunks, not as
                # the word "yes", which no source holds.
                sentence_terms, supporting = sorted(question_terms), answer_citations
            if not sentence_terms:
                carried = citations or carried
                continue
            if not citations and abstains(bare, question_terms):
                results.append(
                    {"text": sentence, "citations": [], "supported": True, "support_score": 1.0, "abstains": True}
                )
                continue
            if not citations and index + 1 < len(claims):
                # "Claim. [1]" splits the marker off into its own sentence; it belongs to the claim before it.
                following = claims[index + 1]
                if not terms(CITATION_MARK.sub(" ", following)):
                    citations = [n for n in cited_numbers(following) if 1 <= n <= len(documents)]
            score = 0.0
            if citations:
                support = set().union(*(chunk_terms[number - 1] for number in supporting or citations))
                weights = _idf_weights(sentence_terms, chunk_terms)
                score = sum(weight for term, weight in weights.items() if term in support) / sum(weights.values())
            results.append(
                {
                    "text": sentence,
                    "citations": citations,
                    "supported": bool(citations) and score >= self.min_support,
                    "support_score": round(score, 3),
                    "abstains": False,
                }
            )
        return {"sentences": results, "unsupported": sum(1 for item in results if not item["supported"])}

    # Term overlaps of a few sentences (the chunks' analyses are the ranker's, cached) cost less than a thread hop.
    run_async = async_twin(run)


# The headlines of a yes/no verdict, as `words` reads them ("yes [1]." -> ["yes"]).
VERDICT_HEADLINES = (["yes"], ["no"])


def is_verdict(sentence: str) -> bool:
    """Whether `sentence` is a yes/no verdict's headline ("yes [1].", "No."): no source holds its words; what it claims
    is the question's (or its opposite)."""
    return words(CITATION_MARK.sub(" ", sentence)) in VERDICT_HEADLINES


# Lines the extractive answer writes as they are: each is a sentence of its own.
_FIXED_LINES = (UNSURE_NOTE, NO_EVIDENCE_ANSWER)
# The extractive answer's abstentions: its lines that name no part, and those that do (their fields hold the parts'
# words), as patterns whose groups are the fields.
_FIXED_ABSTENTIONS = frozenset((NO_SOURCES_ANSWER, NO_EVIDENCE_ANSWER, UNSURE_NOTE))
_PART_LINES = (UNSURE_PART_LINE, PARTIAL_ABSTENTION, PARTS_ABSTENTION)
_PART_PATTERNS = tuple(
    re.compile(
        "".join(
            re.escape(literal) + ("(.+?)" if field is not None else "")
            for literal, field, _, _ in Formatter().parse(line)
        )
    )
    for line in _PART_LINES
)


@cache
def _naming_terms() -> frozenset[str]:
    """The terms those lines name a part with ("this part of the question: ..."): what precedes their first field
    (made once, when a sentence is first checked: stems read the language pipeline's tables)."""
    return frozenset(term for line in _PART_LINES for term in terms(next(iter(Formatter().parse(line)))[0]))


def abstains(sentence: str, question_terms: frozenset[str]) -> bool:
    """Whether the uncited `sentence` (citation marks removed) is an abstention that claims nothing.

    It is one of the extractive answer's fixed abstentions, or one of its lines naming parts whose parts hold only
    the question's terms (`question_terms`, stems as `terms` makes them), or it opens as an abstention and the rest
    holds no content term but the question's and the words the product's lines name a part with.
    """
    text = " ".join(sentence.split())
    if text in _FIXED_ABSTENTIONS:
        return True
    for pattern in _PART_PATTERNS:
        match = pattern.fullmatch(text)
        if match and all(set(terms(field)) <= question_terms for field in match.groups()):
            return True
    opening = next((prefix for prefix in (ABSTENTION_PREFIX, UNSURE_PREFIX) if text.startswith(prefix)), None)
    return opening is not None and set(terms(text[len(opening) :])) <= question_terms | _naming_terms()


# What the text before a sentence ends on: its closing stop, perhaps followed by closing quotes and brackets.
_SENTENCE_ENDS = frozenset(".!?\"')]\u201d\u2019")


def answer_sentences(answer: str, documents: list[Document]) -> list[str]:
    """The sentences of `answer`, each with its whitespace runs made single spaces, as the product's splitter cuts
    them, without parsing what the answer was assembled from.

    An extractive answer is made of its cited chunks' sentences, each written `sentence [n].`: those sentences were
    cut when the chunk was ingested (their spans are stored with it), so the answer's copy of one is a sentence as it
    stands; so are the fixed lines the answer writes. Only the rest (a headline, a chain of hops, a chat model's own
    words) is parsed, once and not kept (`sentence_spans_around`), and the cuts are mended across every boundary as
    the splitter mends them.
    """
    known = _known_sentences(answer, documents)
    found: list[tuple[int, int]] = []
    for line in known:
        start = answer.find(line)
        while start >= 0:
            end = start + len(line)
            # A whole sentence of the answer: at its start or after a space that follows a sentence's end, and at its
            # end or before a space.
            before = answer[:start]
            if (not before or (before[-1].isspace() and (before.rstrip()[-1:] or ".") in _SENTENCE_ENDS)) and (
                end == len(answer) or answer[end].isspace()
            ):
                found.append((start, end))
            start = answer.find(line, start + 1)
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0], -span[1])):
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    cut = sentence_spans_around(answer, spans, cache=False)  # the rest is read once, for its sentences alone
    return [" ".join(answer[start:end].split()) for start, end in cut]


def _known_sentences(answer: str, documents: list[Document]) -> set[str]:
    """The lines an extractive answer would write for the sentences of the chunks `answer` cites (their stored
    spans), and its fixed lines."""
    known = set(_FIXED_LINES)
    for number in cited_numbers(answer):
        if not 1 <= number <= len(documents):
            continue
        document = documents[number - 1]
        content, meta = document.content or "", document.meta or {}
        evidence = meta.get("evidence") if isinstance(meta.get("evidence"), dict) else {}
        # The ranker's rows are `[start, end, cosine]`; a chunk's metadata may carry anything under the key.
        listed = evidence.get("sentences") if isinstance(evidence.get("sentences"), list | tuple) else []
        rows = [(row[0], row[1]) for row in listed if isinstance(row, list | tuple) and len(row) >= 2]
        for start, end in [*rows, *(stored_sentence_spans(content, meta) or [])]:
            if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(content):
                known.add(cite_sentence(" ".join(content[start:end].split()), number))
    return known


def _idf_weights(query_terms: list[str], texts_terms: list[set[str]]) -> dict[str, float]:
    """BM25's IDF of each term over the listed chunks' terms, plus 0.1: a term every chunk holds tells them apart
    little, but is never weightless, since a term missing from the cited chunks is still evidence against a claim."""
    total = len(texts_terms)
    return {term: bm25.idf(total, sum(term in held for held in texts_terms)) + 0.1 for term in set(query_terms)}
