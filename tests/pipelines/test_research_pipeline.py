from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest
from haystack import Document

from components.contracts import StatusKind
from components.contracts.chunk import ChunkDocument
from components.generation.answer_wording import NO_SOURCES_ANSWER
from components.ranking.research_ranker import ResearchRanker
from pipelines.catalog import PipelineCatalog, build_pipeline
from pipelines.research_result import ResearchResult
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.pipelines.knowledge import catalog_yaml_for, fill_collection, fresh_collection_name

pytestmark = pytest.mark.integration

# The knowledge base only: other branches (web, arXiv) would try their hosted services.
KB = ["kb"]


@pytest.fixture(scope="module")
def catalog(settings, database_url, embedding_model) -> PipelineCatalog:
    collection = fresh_collection_name()
    fill_collection(collection, settings, embedding_model)
    return PipelineCatalog.loads(catalog_yaml_for(collection))


def _as_json(document: Document) -> str:
    return json.dumps(document.to_dict(flatten=False), sort_keys=True, default=str)


class TestResearchPipeline:
    def test_answers_with_citations_ranks_statuses_and_timings(self, catalog):
        result = catalog.research("Which river does Warsaw stand on?", sources=KB)
        assert isinstance(result, ResearchResult)
        assert "Vistula River" in result.answer and "[1]" in result.answer
        assert result.citations[0].number == 1 and result.citations[0].chunk_id == "warsaw-0"
        assert result.chunks[0].id == "warsaw-0" and result.chunks[0].source_title == "Warsaw"
        ranks = result.chunks[0].ranks
        assert ranks["ranked"] == 1 and {"kb_dense", "kb_keyword", "fused"} <= set(ranks)
        assert [chunk.ranks["ranked"] for chunk in result.chunks] == list(range(1, len(result.chunks) + 1))
        statuses = {s.source: s.status for s in result.statuses}
        assert [s.source for s in result.statuses] == sorted(statuses)
        assert statuses["generator"] == statuses["kb_dense"] == statuses["kb_keyword"] == StatusKind.SUCCESS
        assert result.sentences and all(sentence.supported for sentence in result.sentences)
        assert {"kb_dense", "kb_keyword", "ranker", "generator", "total_ms"} <= set(result.timings)

    def test_the_stages_after_the_ranker_share_its_chunks_instead_of_each_copying_them(self, catalog, monkeypatch):
        # Haystack deep-copies every component's inputs, a list of chunks chunk by chunk for each component it
        # feeds; the ranked chunks travel as one `RankedDocuments`, which it hands on as it is.
        copied: list[str] = []
        deepcopy = ChunkDocument.__deepcopy__

        def counted(self: ChunkDocument, memo: dict) -> ChunkDocument:
            copied.append(self.id)
            return deepcopy(self, memo)

        monkeypatch.setattr(ChunkDocument, "__deepcopy__", counted)
        result = catalog.research("Which river does Warsaw stand on?", sources=KB, top_k=3)
        assert result.chunks and result.chunks[0].id == "warsaw-0"
        for chunk in result.chunks:
            # Into the joiner (once per branch that found it), the ranker, the prompt builder and the answer's
            # outputs; not again into the answer, the question analysis, the answer builder and the checks after it.
            assert copied.count(chunk.id) <= 5, (chunk.id, copied.count(chunk.id))

    def test_the_stages_that_share_the_ranked_chunks_leave_them_as_the_ranker_made_them(self, catalog, monkeypatch):
        # Haystack no longer copies the ranked chunks for each stage after the ranker: a stage that changed a chunk in
        # place (its score, its meta) would change it for every other stage, and for the next question's stages too.
        made: list[tuple[Document, str]] = []
        run = ResearchRanker.run

        @functools.wraps(run)
        def recorded(self: ResearchRanker, *args: Any, **kwargs: Any) -> dict[str, Any]:
            outputs = run(self, *args, **kwargs)
            made.extend((document, _as_json(document)) for document in outputs["ranked"].documents)
            return outputs

        monkeypatch.setattr(ResearchRanker, "run", recorded)
        for question in ("Which river does Warsaw stand on?", "Who won two Nobel Prizes and when?"):
            catalog.research(question, sources=KB, top_k=4)
            asyncio.run(catalog.research_async(question, sources=KB, top_k=4))
        assert len(made) >= 8
        assert [_as_json(document) for document, _ in made] == [before for _, before in made]

    def test_a_stock_hayhooks_deployment_answers_with_each_chunk_once(self, catalog, monkeypatch):
        # Stock Hayhooks answers with every output of each component the exported file names an output of: a second
        # view of the chunks among them would reach every JSON and MCP client twice.
        from docstring_parser import parse
        from hayhooks.server.pipelines.models import create_response_model_from_callable
        from hayhooks.server.utils.deploy_utils import YAMLPipelineWrapper

        from pipelines.serving.export import export_hayhooks_yaml

        monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", "components,pipelines,ingest,haystack_integrations")
        wrapper = YAMLPipelineWrapper.from_yaml(export_hayhooks_yaml("research", catalog), description="research")
        wrapper.setup()
        question = {"question": "Which river does Warsaw stand on?", "sources": KB, "top_k": 3}
        outputs = asyncio.run(wrapper.run_api_async(**question, as_of=None, filters=None, session_id=None))
        response = create_response_model_from_callable(wrapper.run_api_async, "ResearchRun", parse(""))
        body = response(result=outputs).model_dump_json()
        chunks = outputs["answer_builder"]["documents"]
        assert chunks and chunks[0].id == "warsaw-0"
        for chunk in chunks:
            assert body.count(json.dumps(chunk.content)[1:-1]) == 1, chunk.id

    def test_async_gives_the_same_result(self, catalog):
        sync = catalog.research("Who did the Denver Broncos defeat?", sources=KB, top_k=3)
        concurrent = asyncio.run(catalog.research_async("Who did the Denver Broncos defeat?", sources=KB, top_k=3))
        assert concurrent.answer == sync.answer
        assert [c.id for c in concurrent.chunks] == [c.id for c in sync.chunks]
        assert len(sync.chunks) == 3

    def test_unselected_sources_report_skipped(self, catalog):
        result = catalog.research("Which river does Warsaw stand on?", sources=["graph"])
        assert result.chunks == [] and result.answer == NO_SOURCES_ANSWER
        kb = [s for s in result.statuses if s.source.startswith("kb_")]
        assert len(kb) == 2 and all(s.status is StatusKind.SKIPPED for s in kb)

    def test_as_of_hides_later_documents(self, catalog):
        later = catalog.research("How do HNSW graphs index vectors?", sources=KB, as_of="2022-01-01")
        assert "hnsw-0" not in [chunk.id for chunk in later.chunks]
        now = catalog.research("How do HNSW graphs index vectors?", sources=KB)
        assert now.chunks[0].id == "hnsw-0"

    def test_streaming_callback_receives_the_answer(self, catalog):
        pieces: list[str] = []
        result = catalog.research(
            "Who won two Nobel Prizes?", sources=KB, streaming_callback=lambda chunk: pieces.append(chunk.content)
        )
        assert "".join(pieces) == result.answer and "Nobel Prizes in two different sciences [1]" in result.answer

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"question": "   "}, "The question is empty"),
            ({"question": "x" * 3000}, r"longer than 2,000 characters \(3,000\)"),
            ({"question": "q", "as_of": "31/12/2020"}, "as_of must be a date as YYYY-MM-DD"),
            ({"question": "q", "top_k": 0}, "top_k must be a whole number between 1 and 50"),
            (
                {"question": "q", "sources": ["kb", "tv"]},
                "Unknown source tv; choose from kb, graph, web, arxiv, memory",
            ),
        ],
    )
    def test_bad_input_is_one_sentence(self, catalog, kwargs, message):
        with pytest.raises(ValueError, match=message):
            catalog.research(**kwargs)

    def test_all_asks_every_source(self, catalog):
        result = catalog.research("Where is Warsaw?", sources=["all"])
        skipped = [s.source for s in result.statuses if s.status is StatusKind.SKIPPED and "selected" in s.message]
        assert result.statuses and skipped == []

    def test_bad_filters_become_a_status_not_a_crash(self, catalog):
        result = catalog.research("Warsaw", sources=KB, filters={"colour": "red"})
        assert {s.source: s.status for s in result.statuses}["kb_dense"] is StatusKind.ERROR
        assert "unknown filter colour" in result.status_of("kb_dense").message

    def test_documents_pipeline_lists_and_gets(self, catalog):
        page = catalog.run("documents", {"search": "Warsaw"})
        assert page["total"] == 1 and page["documents"][0]["title"] == "Warsaw"
        one = catalog.run("document", {"document_id": "curie"})
        assert one["document"]["title"] == "Marie Curie" and [c.id for c in one["chunks"]] == ["curie-0"]

    def test_every_pipeline_round_trips_through_yaml(self, catalog):
        reloaded = PipelineCatalog.loads(catalog.dumps())
        assert reloaded.names() == catalog.names()
        for name in catalog.names():
            original, again = build_pipeline(catalog.spec(name)), build_pipeline(reloaded.spec(name))
            assert again.to_dict() == original.to_dict(), name
        before = catalog.research("What does photosynthesis release?", sources=KB)
        after = reloaded.research("What does photosynthesis release?", sources=KB)
        assert after.answer == before.answer and after.citations == before.citations
        assert [c.id for c in after.chunks] == [c.id for c in before.chunks]
        assert [c.ranks for c in after.chunks] == [c.ranks for c in before.chunks]
        assert [(s.source, s.status) for s in after.statuses] == [(s.source, s.status) for s in before.statuses]
        first, second = catalog.run("documents", {"search": "Super"}), reloaded.run("documents", {"search": "Super"})
        assert first["documents"] == second["documents"] and first["total"] == second["total"] == 1
        first, second = (
            catalog.run("document", {"document_id": "hnsw"}),
            reloaded.run("document", {"document_id": "hnsw"}),
        )
        assert first["document"] == second["document"] and first["document"]["title"] == "HNSW indexes"


class TestResearchPipelineWithChatModel:
    def test_same_pipeline_with_an_openai_compatible_server(self, catalog, chat_server, monkeypatch):  # noqa: F811
        import yaml

        monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
        data = yaml.safe_load(catalog.dumps())
        generator = data["pipelines"]["research"]["pipeline"]["components"]["generator"]["init_parameters"]
        generator.update(generator="openai", api_base_url=chat_server.base_url_v1, model="contract-model")
        chat_catalog = PipelineCatalog.loads(yaml.safe_dump(data))
        chat_server.answer = "Warsaw stands on the Vistula River [1]. It is the largest city of Poland [1]."
        result = chat_catalog.research("Which river does Warsaw stand on?", sources=KB)
        prompt = chat_server.chat_requests()[0]["messages"][-1]["content"]
        assert "[1] Warsaw (kb, 2021-03-01)" in prompt and "Question: Which river does Warsaw stand on?" in prompt
        assert result.answer == chat_server.answer
        assert [c.chunk_id for c in result.citations] == ["warsaw-0"]
        assert [s.supported for s in result.sentences] == [True, True]
        assert result.status_of("generator").status is StatusKind.SUCCESS

        chat_server.fail("500", times=3)
        fallback = chat_catalog.research("Which river does Warsaw stand on?", sources=KB)
        assert fallback.status_of("generator").status is StatusKind.ERROR
        assert "Vistula River" in fallback.answer and fallback.citations[0].chunk_id == "warsaw-0"

    @pytest.fixture
    def chat_catalog(self, catalog, chat_server, monkeypatch):  # noqa: F811
        import yaml

        monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
        data = yaml.safe_load(catalog.dumps())
        generator = data["pipelines"]["research"]["pipeline"]["components"]["generator"]["init_parameters"]
        generator.update(generator="openai", api_base_url=chat_server.base_url_v1, model="contract-model")
        return PipelineCatalog.loads(yaml.safe_dump(data))

    def test_the_question_analysis_feeds_the_prompt_and_the_short_answer_leads(
        self,
        chat_catalog,
        chat_server,  # noqa: F811
    ):
        chat_server.answer = "Vistula River [1].\nWarsaw stands on the Vistula River [1]."
        result = chat_catalog.research("Which river does Warsaw stand on and when was the city founded?", sources=KB)
        messages = chat_server.chat_requests()[0]["messages"]
        assert "start with that short answer alone" in messages[0]["content"]
        assert "What it asks: 'Which river does Warsaw stand on' asks for a place" in messages[-1]["content"]
        assert "'when was the city founded' asks for a date" in messages[-1]["content"]
        assert result.short_answer == "Vistula River"
        assert all(sentence.supported for sentence in result.sentences)

    def test_a_citation_of_a_chunk_that_does_not_exist_is_reported_and_removed(
        self,
        chat_catalog,
        chat_server,  # noqa: F811
    ):
        chat_server.answer = "Warsaw stands on the Vistula River [1][9]. Poland's capital is Warsaw [42]."
        result = chat_catalog.research("Which river does Warsaw stand on?", sources=KB)
        assert sorted(result.invalid_citations) == [9, 42]
        assert "[9]" not in result.answer and "[42]" not in result.answer
        assert [c.number for c in result.citations] == [1]
        checks = {sentence.text: sentence for sentence in result.sentences}
        assert checks["Warsaw stands on the Vistula River [1]."].supported
        uncited = next(sentence for sentence in result.sentences if sentence.text.startswith("Poland's capital"))
        assert not uncited.supported and uncited.citations == []

    def test_an_answer_without_citations_is_flagged_but_an_abstention_is_not(
        self,
        chat_catalog,
        chat_server,  # noqa: F811
    ):
        chat_server.answer = "Warsaw stands on the Vistula River."
        result = chat_catalog.research("Which river does Warsaw stand on?", sources=KB)
        assert result.citations == [] and result.short_answer == ""
        assert [sentence.supported for sentence in result.sentences] == [False]

        chat_server.answer = "The sources do not answer this: how tides form."
        result = chat_catalog.research("How do tides form?", sources=KB)
        assert [(sentence.supported, sentence.abstains) for sentence in result.sentences] == [(True, True)]

    def test_a_claim_after_an_abstentions_opening_is_flagged(self, chat_catalog, chat_server):  # noqa: F811
        # The chat model names the unanswered part in the question's words, then adds a claim of its own.
        chat_server.answer = (
            "The sources do not answer this part of the question: how tides form. "
            "The sources do not answer this, but Zorg Tallow charted the tides of Quillon Bay in 1890."
        )
        result = chat_catalog.research("How do tides form?", sources=KB)
        checked = [(sentence.supported, sentence.abstains) for sentence in result.sentences]
        assert checked == [(True, True), (False, False)]
