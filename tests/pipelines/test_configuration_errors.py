"""A configuration error that shows only when a pipeline warms up (two components of the process naming different
spaCy pipelines) is the server's problem, not the caller's: a 503 with one sentence from the server, one line and
exit 1 from the command line; never a 422, never a traceback."""

from __future__ import annotations

import asyncio

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


def _assert_one_sentence_naming_the_parameter(detail: str) -> None:
    assert "spacy_model" in detail and "zorblex_core_lg" in detail
    assert "\n" not in detail and "Traceback" not in detail


def test_a_served_pipeline_that_cannot_warm_up_is_a_503_not_the_callers_422(two_spacy_models) -> None:  # noqa: ANN001
    documents = wrapper("documents")
    documents.catalog.run.side_effect = two_spacy_models
    with pytest.raises(HTTPException) as raised:
        documents.run_api()
    assert raised.value.status_code == 503
    _assert_one_sentence_naming_the_parameter(raised.value.detail)


def test_a_research_question_on_a_misconfigured_server_is_a_503(two_spacy_models) -> None:  # noqa: ANN001
    research = wrapper("research")
    research.catalog.research_async.side_effect = two_spacy_models
    with pytest.raises(HTTPException) as raised:
        asyncio.run(research.run_api_async(question="Who founded Quellmark?", sources=["kb"]))
    assert raised.value.status_code == 503
    _assert_one_sentence_naming_the_parameter(raised.value.detail)


def test_the_command_line_says_it_in_one_line_and_exits_1(two_spacy_models, monkeypatch, capsys) -> None:  # noqa: ANN001
    import pipelines.cli.status as status

    monkeypatch.setattr(status, "run", two_spacy_models)
    assert main(["status"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("research: This process analyses text with the spaCy pipeline 'zorblex_core_sm'")
    _assert_one_sentence_naming_the_parameter(err)
