"""A configuration error that shows only when a pipeline warms up or runs (two components of the process naming
different spaCy pipelines, a spaCy pipeline that is not installed, a research budget the YAML gets wrong) is the
server's problem, not the caller's: a 503 with one sentence from the server, one line and
exit 1 from the command line; never a 422, never a traceback."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import Mock

import pytest
from fastapi import HTTPException

from components.text import language
from pipelines.cli import main
from tests.pipelines.serving.test_wrappers import wrapper


@pytest.fixture()
def two_spacy_models(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The process analyses with one (invented) spaCy pipeline; `warm_other()` is a component asking for another."""
    monkeypatch.setattr(language, "_chosen", ["zorblex_core_sm"])

    def warm_other(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
        language.use_language_pipeline("zorblex_core_lg")

    return warm_other


def _assert_one_sentence(detail: str, *named: str) -> None:
    assert all(name in detail for name in named), detail
    assert "\n" not in detail and "Traceback" not in detail


def _served_503(name: str, call: str, cause: Any, **arguments: Any) -> str:
    """The detail of the error the `name` pipeline's wrapper answers when its catalog's `call` fails with `cause`,
    checked to be a 503 (`run_api_async` for the research pipeline, `run_api` otherwise)."""
    served = wrapper(name)
    getattr(served.catalog, call).side_effect = cause
    with pytest.raises(HTTPException) as raised:
        if name == "research":
            asyncio.run(served.run_api_async(**arguments))
        else:
            served.run_api(**arguments)
    assert raised.value.status_code == 503
    return raised.value.detail


def _documents_503(cause: Any) -> str:
    return _served_503("documents", "run", cause)


def _research_503(cause: Any) -> str:
    return _served_503("research", "research_async", cause, question="Who founded Quellmark?", sources=["kb"])


def test_a_served_pipeline_that_cannot_warm_up_is_a_503_not_the_callers_422(two_spacy_models) -> None:  # noqa: ANN001
    _assert_one_sentence(_documents_503(two_spacy_models), "spacy_model", "zorblex_core_lg")


def test_a_research_question_on_a_misconfigured_server_is_a_503(two_spacy_models) -> None:  # noqa: ANN001
    _assert_one_sentence(_research_503(two_spacy_models), "spacy_model", "zorblex_core_lg")


def test_the_command_line_says_it_in_one_line_and_exits_1(two_spacy_models, monkeypatch, capsys) -> None:  # noqa: ANN001
    import pipelines.cli.status as status

    monkeypatch.setattr(status, "run", two_spacy_models)
    assert main(["status"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("research: This process analyses text with the spaCy pipeline 'zorblex_core_sm'")
    _assert_one_sentence(err, "spacy_model", "zorblex_core_lg")


# --- a spaCy pipeline that is not installed, a research budget the YAML gets wrong --------------------------------


def missing_spacy_model(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
    """A component warming up with a `spacy_model` (or SPACY_MODEL) that names no installed (invented) pipeline."""
    language.language_pipeline("vexmoor_core_sm")


def invalid_budget(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
    """The research pipeline built, on its first question, from a YAML whose budget is no number of seconds."""
    from haystack import Pipeline

    from pipelines.catalog import question_budget_of

    question_budget_of(Pipeline(metadata={"question_budget_s": "whenever"}))


# What each cause's sentence must name: the invented pipeline, or the YAML key.
NAMED = {missing_spacy_model: "vexmoor_core_sm", invalid_budget: "metadata.question_budget_s"}


def test_a_spacy_model_that_is_not_installed_is_not_a_value_error_the_caller_caused() -> None:
    assert not issubclass(language.LanguageModelMissing, ValueError)


@pytest.mark.parametrize("cause", [missing_spacy_model, invalid_budget])
def test_a_served_pipeline_whose_configuration_fails_on_a_request_is_a_503(cause) -> None:  # noqa: ANN001
    _assert_one_sentence(_documents_503(cause), NAMED[cause])


@pytest.mark.parametrize(
    ("cause", "named"),
    [
        (missing_spacy_model, ("vexmoor_core_sm", "SPACY_MODEL", "spacy_model")),  # the setting and the parameter
        (invalid_budget, ("metadata.question_budget_s", "'whenever'")),  # the YAML key and its value
    ],
)
def test_a_research_question_on_a_misconfigured_server_is_a_503_naming_the_cause(cause, named) -> None:  # noqa: ANN001
    _assert_one_sentence(_research_503(cause), *named)


@pytest.mark.parametrize("cause", [missing_spacy_model, invalid_budget])
def test_a_chat_follow_up_rewrite_on_a_misconfigured_server_is_a_503(cause) -> None:  # noqa: ANN001
    """A streamed chat rewrites a follow-up before the question runs: the pipeline is built (and warmed) there."""
    research = wrapper("research")
    research.catalog.follow_up.side_effect = cause

    async def first_chunk() -> None:
        stream = await research.run_chat_completion_async(
            "research", [{"role": "user", "content": "Who leads Quellmark?"}], {"stream": True}
        )
        await anext(stream)

    with pytest.raises(HTTPException) as raised:
        asyncio.run(first_chunk())
    assert raised.value.status_code == 503
    _assert_one_sentence(raised.value.detail, NAMED[cause])


def test_ingesting_on_a_server_without_the_spacy_model_is_a_503() -> None:
    from tests.pipelines.serving.test_wrappers import wrapper_module

    ingestion = wrapper_module("ingestion").PipelineWrapper()
    ingestion.ingestor = Mock()
    ingestion.ingestor.ingest_text.side_effect = missing_spacy_model
    with pytest.raises(HTTPException) as raised:
        ingestion.run_api(text="Quellmark opened a mill in Dunvar.", title="Quellmark")
    assert raised.value.status_code == 503
    _assert_one_sentence(raised.value.detail, "vexmoor_core_sm", "SPACY_MODEL")


def test_the_command_line_says_a_missing_spacy_model_in_one_line_and_exits_1(monkeypatch, capsys) -> None:  # noqa: ANN001
    import pipelines.cli.status as status

    monkeypatch.setattr(status, "run", missing_spacy_model)
    assert main(["status"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("research: The spaCy pipeline 'vexmoor_core_sm' is not installed")
    _assert_one_sentence(err, "SPACY_MODEL")


@pytest.mark.parametrize("cause", [missing_spacy_model, invalid_budget])
def test_the_ask_page_gets_one_sentence_for_a_misconfigured_research_pipeline(cause, monkeypatch) -> None:  # noqa: ANN001
    """The Ask page shows what `research_streaming` returns as its error after "The question could not be
    answered:" (the page's own `st.error`), so that must be the one sentence, not a traceback."""
    from app import services

    failing = Mock()
    failing.research.side_effect = cause
    monkeypatch.setattr(services, "catalog", lambda: failing)
    result, error = services.research_streaming(Mock(), "Who founded Quellmark?")
    assert result is None
    _assert_one_sentence(error, NAMED[cause])
