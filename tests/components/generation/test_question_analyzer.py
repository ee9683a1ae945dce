"""`QuestionAnalyzer`: the question read once, handed on as one immutable value."""

from __future__ import annotations

import copy

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.question_analysis import QuestionAnalysis
from components.generation.question_analyzer import QuestionAnalyzer
from tests.components.ranking.chunks import kb_document


def test_the_analysis_is_one_immutable_value_that_copies_as_itself() -> None:
    out = QuestionAnalyzer().run(query="Who founded Harrow Mills and when?")
    analysis = out["analysis"]
    assert isinstance(analysis, QuestionAnalysis)
    assert [part.kind for part in analysis.parts][-1] == "when"
    assert copy.deepcopy(analysis) is analysis  # Haystack's copy of a component's input hands it on as it is
    assert QuestionAnalysis.from_dict(analysis.to_dict()) == analysis  # and its JSON reads back the same
    assert QuestionAnalysis.from_dict(analysis) is analysis
    assert out["guidance"] == analysis.describe()


def test_the_answer_reads_the_analysis_as_it_reads_its_json() -> None:
    question = "Who founded Harrow Mills?"
    documents = [kb_document("h", "Ada Quill founded Harrow Mills in 1881 on the river Wend.")]
    analysis = QuestionAnalyzer().run(query=question)["analysis"]
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    as_value = generator.run(query=question, documents=documents, analysis=analysis)
    assert as_value == generator.run(query=question, documents=documents, analysis=analysis.to_dict())
    assert as_value["short_answer"] == "Ada Quill"
