"""The citation check lets an abstention pass only when it claims nothing: a claim glued to an abstention's opening
is checked (and flagged when uncited) like any other sentence."""

from __future__ import annotations

import pytest

from components.generation import CitationChecker, ExtractiveAnswerGenerator
from components.generation import answer_wording as wording
from components.generation.question_analysis import analyze_question
from tests.components.ranking.chunks import kb_document

BEACON = kb_document(
    "beacon",
    "The Quillon beacon is a signal tower on the cliffs of Marrow Point. It was built in 1902 by Edda Fenwright. "
    "Its lamp can be seen from forty kilometres at sea.",
    0.6,
    title="Quillon beacon",
)
QUESTION = "Who built the Quillon beacon and who keeps it today?"


def checked(answer: str, query: str = QUESTION, documents=(BEACON,)) -> list[tuple[str, bool, bool]]:
    out = CitationChecker().run(answer=answer, documents=list(documents), query=query)
    return [(sentence["text"], sentence["supported"], sentence["abstains"]) for sentence in out["sentences"]]


def generated(query: str, documents=(BEACON,), **kwargs) -> str:
    generator = ExtractiveAnswerGenerator(embedding_model="", **{"confidence_threshold": 0.0, **kwargs})
    return generator.run(query=query, documents=list(documents))["replies"][0]


@pytest.mark.parametrize(
    "sentence",
    [
        f"{wording.UNSURE_PREFIX}, but Zorg Tallow built the Quillon beacon on Mars.",
        f"{wording.UNSURE_PREFIX}; the beacon was built by Zorg Tallow.",
        f"{wording.ABSTENTION_PREFIX} this, but Zorg Tallow keeps the beacon today.",
        f"{wording.ABSTENTION_PREFIX} who keeps it today; it was painted red in 1950.",
        f"{wording.ABSTENTION_PREFIX} this part of the question: who keeps it today, which Zorg Tallow does.",
        # The generator's own forms with a claim in place of the part the question asks.
        wording.UNSURE_PART_LINE.format(part="Zorg Tallow built the beacon on Mars"),
        wording.PARTIAL_ABSTENTION.format(parts="“Zorg Tallow keeps it”"),
        wording.PARTS_ABSTENTION.format(parts="“Zorg Tallow built it”; “who keeps it”"),
    ],
)
def test_a_claim_glued_to_an_abstention_is_flagged(sentence):
    results = checked(sentence)
    assert results and not any(abstains for _, _, abstains in results)
    assert any(not supported for _, supported, _ in results)


@pytest.mark.parametrize(
    "sentence",
    [
        # What the chat prompt asks for: the opening, then the part named in the question's words.
        f"{wording.ABSTENTION_PREFIX} this.",
        f"{wording.ABSTENTION_PREFIX} this: who keeps the Quillon beacon today.",
        f"{wording.ABSTENTION_PREFIX} this part of the question: who keeps it today.",
        f"{wording.ABSTENTION_PREFIX} this question.",
        f"{wording.ABSTENTION_PREFIX} who keeps the beacon today.",
        f"{wording.UNSURE_PREFIX} to who built the beacon.",
    ],
)
def test_an_abstention_naming_the_part_in_the_questions_words_passes(sentence):
    assert checked(sentence) == [(sentence, True, True)]


def test_the_generators_lines_for_every_part_form_pass():
    parts = [part.text for part in analyze_question(QUESTION).parts]
    assert len(parts) == 2
    quoted = "; ".join(f"“{part}”" for part in parts)
    lines = [
        wording.NO_SOURCES_ANSWER,
        wording.NO_EVIDENCE_ANSWER,
        wording.UNSURE_NOTE,
        *(wording.UNSURE_PART_LINE.format(part=part) for part in parts),
        *(wording.PARTIAL_ABSTENTION.format(parts=f"“{part}”") for part in parts),
        wording.PARTIAL_ABSTENTION.format(parts=quoted),
        wording.PARTS_ABSTENTION.format(parts=quoted),
    ]
    for line in lines:
        assert checked(line) == [(line, True, True)], line
    # Without the question, only the lines that name no part abstain.
    assert [abstains for _, _, abstains in checked(" ".join(lines), query="")] == [True] * 3 + [False] * 6


def test_the_generators_answers_pass_the_check_whole():
    # One part answered, one not: the answer names the unanswered part.
    partial = generated("Who built the Quillon beacon and where does Zorg Tallow live?")
    assert wording.PARTIAL_ABSTENTION.format(parts="“where does Zorg Tallow live”") in partial
    # No part answered: the answer names them all.
    neither = generated("How do glaciers form and why do comets glow?")
    assert neither == wording.PARTS_ABSTENTION.format(parts="“How do glaciers form”; “why do comets glow”")
    # A part below the confidence threshold (every part is): the note after the best sentence.
    unsure = generated("Who built the Quillon beacon?", confidence_threshold=1.0)
    assert wording.UNSURE_NOTE in unsure
    for query, reply in [
        ("Who built the Quillon beacon and where does Zorg Tallow live?", partial),
        ("How do glaciers form and why do comets glow?", neither),
        ("Who built the Quillon beacon?", unsure),
    ]:
        out = CitationChecker().run(answer=reply, documents=[BEACON], query=query)
        assert out["unsupported"] == 0, reply
        assert any(sentence["abstains"] for sentence in out["sentences"])


def test_an_abstention_that_cites_is_checked_as_a_claim():
    results = checked(f"{wording.ABSTENTION_PREFIX} this, but Zorg Tallow built the beacon [1].")
    assert [(supported, abstains) for _, supported, abstains in results] == [(False, False)]
