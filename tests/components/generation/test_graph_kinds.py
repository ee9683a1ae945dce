"""A "who" question is not answered by a name the knowledge graph knows as a product, a work or an event: such a
short answer is not rated and shows no headline, whatever the recogniser called that one mention."""

from __future__ import annotations

from haystack import Document

from components.generation import ExtractiveAnswerGenerator
from components.generation.graph_kinds import graph_kinds, names_no_doer
from tests.components.ranking.chunks import kb_document


def _with_facts(document: Document, facts: list[dict]) -> Document:
    document.meta["graph_facts"] = facts
    return document


def test_the_graph_kinds_of_the_chunks_facts_decide_what_answers_who() -> None:
    chunk = _with_facts(
        kb_document("velmora", "Velmora Labs announced Quillbase in May 2014.", 0.7, title="Velmora Labs"),
        [
            {
                "fact": "...",
                "entities": ["Velmora Labs", "Quillbase", "Arlo Venn"],
                "entity_kinds": ["organization", "product", "other"],
            }
        ],
    )
    kinds = graph_kinds([chunk])
    assert kinds == {"velmora": "organization", "quillbase": "product"}  # the graph's keys; "other" says nothing
    assert names_no_doer("Quillbase", ("PERSON", "ORG", "NORP"), kinds)
    # The span is read as the graph keys names: an article, a possessive or case make no other name.
    assert names_no_doer("the QUILLBASE's", ("PERSON", "ORG", "NORP"), kinds)
    assert not names_no_doer("Quillbase", ("PRODUCT",), kinds)  # a question asking for a thing
    assert not names_no_doer("Velmora Labs", ("PERSON", "ORG", "NORP"), kinds)
    # A chunk without facts, or facts from before kinds were carried, say nothing.
    older = _with_facts(kb_document("y", "Text.", 0.5), [{"entities": ["A"]}])
    assert graph_kinds([kb_document("x", "Text.", 0.5), older]) == {}


def _answer(question: str, documents: list[Document], **kwargs) -> dict:
    # Every rated short answer leads (threshold 0): what is read here is whether it is rated at all.
    return ExtractiveAnswerGenerator(confidence_threshold=0.0, **kwargs).run(query=question, documents=documents)


def test_a_who_question_answered_by_a_thing_the_graph_knows_shows_no_headline() -> None:
    text = "In June 2019 Velmora Labs announced Quillbase at its conference in Ostrava."
    plain = kb_document("velmora", text, 0.8, title="Velmora Labs")
    known = _with_facts(
        kb_document("velmora", text, 0.8, title="Velmora Labs"),
        [{"fact": text, "entities": ["Velmora Labs", "Quillbase"], "entity_kinds": ["organization", "product"]}],
    )
    question = "Who presented something at the Velmora Labs conference in Ostrava?"
    before = _answer(question, [plain])
    part = before["parts"][0]
    assert part["short_answer"] == "Quillbase" and part["sure"]  # the recogniser's label of this mention
    after = _answer(question, [known])["parts"][0]
    assert after["short_answer"] == "Quillbase" and not after["sure"] and after["short_answer_confidence"] is None
    assert _answer(question, [known], rules_off=["graph_kind"])["parts"][0]["sure"]
