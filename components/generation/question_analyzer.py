"""`QuestionAnalyzer`: the question's type and parts, for the answer and the chat prompt."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import RankedDocuments
from components.generation.question_analysis import QuestionAnalysis, analyze_question
from components.resilience.scheduling import async_twin
from components.serialization import InitParameterSerialization
from components.settings import setting_or
from components.text.language import use_language_pipeline


@component
class QuestionAnalyzer(InitParameterSerialization):
    """Reads the question once (`question_analysis`: its words, and spaCy's tagger only when a "what"/"which" may
    name a noun) for every stage that answers it.

    The extractive answer and the chat prompt both receive its `analysis` (type, parts, each part's expected
    entity labels). In the research pipeline it also receives the ranked chunks, only so that it runs after the
    searches: run beside them, its few milliseconds of parsing held the interpreter while the question was being
    embedded and made the whole question slower (measured on the demo corpus: 49 ms p50 beside, 43 ms after).

    Usage:
    ```python
    QuestionAnalyzer().run(query="Who founded Neo4j and when?")["analysis"].parts[1].kind  # 'when'
    ```
    """

    def __init__(self, spacy_model: str | None = None) -> None:
        """:param spacy_model: the spaCy pipeline that tags the question; None: SPACY_MODEL as it is built."""
        self.spacy_model = setting_or(spacy_model, "spacy_model")

    def warm_up(self) -> None:
        """Load the language pipeline (once per process)."""
        use_language_pipeline(self.spacy_model)

    @component.output_types(analysis=QuestionAnalysis, guidance=str)
    def run(self, query: str, after: list[Document] | RankedDocuments | None = None) -> dict[str, Any]:
        """Analyse the question.

        :param query: the question.
        :param after: anything the analysis should wait for (the ranker's `RankedDocuments` in the research
            pipeline); unused.
        :returns: `analysis`: the `QuestionAnalysis` (question, kind, parts, question terms; immutable, so Haystack
            hands it on as one value; `to_dict()` for its JSON); `guidance`: one line for a chat prompt saying what
            each part asks for.
        """
        analysis = analyze_question(query or "")
        return {"analysis": analysis, "guidance": analysis.describe()}

    # Reading a question's words (a tagger run at most) costs about what a hop to a worker thread and back costs.
    run_async = async_twin(run)
