from __future__ import annotations

import asyncio
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from components.contracts import StatusKind
from pipelines.catalog import CatalogError, PipelineCatalog, default_pipelines_file, outputs_to_include
from tests.components.ranking.chunks import kb_document
from tests.pipelines.knowledge import REPO_CATALOG

DOCUMENTS = [
    kb_document("sb", "The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50.", 0.7),
    kb_document("wa", "Warsaw, Poland's capital and biggest city, lies on the Vistula River.", 0.2),
]


def answer_catalog() -> dict:
    """The research pipeline's stages after retrieval, fed documents directly: no knowledge base needed."""
    research = yaml.safe_load(REPO_CATALOG.read_text())["pipelines"]["research"]
    after_retrieval = (
        "statuses",
        "ranker",
        "hops",
        "prompt_builder",
        "generator",
        "answer_builder",
        "citation_check",
        "conflicts",
    )
    components = {k: v for k, v in research["pipeline"]["components"].items() if k in after_retrieval}
    # Every short answer leads here, however sure: these tests read the catalog, not the confidence.
    components["generator"]["init_parameters"]["confidence_threshold"] = 0.0
    connections = [
        c
        for c in research["pipeline"]["connections"]
        if c["sender"].split(".")[0] in after_retrieval and c["receiver"].split(".")[0] in after_retrieval
    ]
    return {
        "pipelines": {
            "answer": {
                "description": "Rank, answer and cite given chunks.",
                "inputs": {
                    "question": [
                        "ranker.query",
                        "prompt_builder.query",
                        "hops.query",
                        "generator.query",
                        "conflicts.query",
                    ],
                    "documents": ["ranker.branch_documents"],
                    "top_k": ["ranker.top_k"],
                },
                "outputs": research["outputs"],
                "pipeline": {**research["pipeline"], "components": components, "connections": connections},
            }
        }
    }


def two_slow_sources_catalog(delay_ms: float) -> dict:
    """Two sources that each wait `delay_ms`, joined: whether they overlap shows in the total time."""
    source = {"type": "pipelines.bench_fanout.TimedSource", "init_parameters": {"delay_ms": delay_ms, "chunks": 1}}
    return {
        "pipelines": {
            "fanout": {
                "description": "Two slow sources, joined.",
                "inputs": {"question": ["slow_a.query", "slow_b.query"]},
                "outputs": {"documents": "joiner.documents"},
                "pipeline": {
                    "components": {
                        "slow_a": {**source, "init_parameters": {**source["init_parameters"], "name": "a"}},
                        "slow_b": {**source, "init_parameters": {**source["init_parameters"], "name": "b"}},
                        "joiner": {
                            "type": "haystack.components.joiners.document_joiner.DocumentJoiner",
                            "init_parameters": {"join_mode": "concatenate"},
                        },
                    },
                    "connections": [
                        {"sender": "slow_a.documents", "receiver": "joiner.documents"},
                        {"sender": "slow_b.documents", "receiver": "joiner.documents"},
                    ],
                },
            }
        }
    }


def write(work_dir, data) -> str:
    path = work_dir / "pipelines.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


class TestPipelineCatalog:
    def test_repository_catalog_loads_and_validates(self):
        catalog = PipelineCatalog(REPO_CATALOG)
        assert {"research", "documents", "document"} <= set(catalog.names())
        catalog.validate()
        research = catalog.spec("research")
        assert {"question", "sources", "as_of", "filters", "top_k"} <= set(research.inputs)
        assert {"answer", "citations", "chunks", "statuses", "sentences"} <= set(research.outputs)

    def test_a_run_includes_only_the_components_whose_named_outputs_another_component_reads(self):
        research = PipelineCatalog(REPO_CATALOG).spec("research")
        # Every named output of the research pipeline is one nothing else reads: Haystack returns it anyway.
        assert outputs_to_include(research) == set()
        read = dataclasses.replace(research, outputs={**research.outputs, "ranked": "ranker.ranked"})
        assert outputs_to_include(read) == {"ranker"}
        bare = {**research.pipeline, "connections": [{"sender": "prompt_builder", "receiver": "generator.messages"}]}
        prompt = dataclasses.replace(research, outputs={"prompt": "prompt_builder.prompt"}, pipeline=bare)
        assert outputs_to_include(prompt) == {"prompt_builder"}

    def test_a_named_output_another_component_reads_is_returned(self):
        data = answer_catalog()
        data["pipelines"]["answer"]["outputs"]["ranked_chunks"] = "ranker.documents"  # read by the prompt builder
        catalog = PipelineCatalog.loads(yaml.safe_dump(data))
        inputs = {"question": "Who won Super Bowl 50?", "documents": DOCUMENTS}
        sync = catalog.run("answer", inputs)
        concurrent = asyncio.run(catalog.run_async("answer", inputs))
        for outputs in (sync, concurrent):
            assert [d.id for d in outputs["ranked_chunks"]] == [d.id for d in outputs["chunks"]] == ["sb", "wa"]
            assert outputs["answer"] and outputs["statuses"]

    def test_default_file_follows_the_setting(self, work_dir, monkeypatch):
        from components.settings import reload_settings

        path = write(work_dir, answer_catalog())
        monkeypatch.setenv("PIPELINES_FILE", str(path))
        reload_settings()
        try:
            assert default_pipelines_file() == path
        finally:
            monkeypatch.delenv("PIPELINES_FILE")
            reload_settings()
        assert default_pipelines_file().name == "pipelines.yaml"

    def test_default_file_outside_a_checkout_is_the_one_the_package_carries(self, work_dir, monkeypatch):
        """No setting and no ./pipelines.yaml (an installed package run elsewhere): the catalog inside the package
        folder, which the wheel ships as package data, not a file beside site-packages."""
        import pipelines
        from components.settings import get_settings

        monkeypatch.chdir(work_dir)
        found = default_pipelines_file(get_settings().model_copy(update={"pipelines_file": None}))
        assert found.parent == Path(pipelines.__file__).resolve().parent
        assert found.is_file()
        assert "research" in PipelineCatalog(found).names()

    def test_run_sync_and_async_give_the_same_outputs(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        sync = catalog.run("answer", {"question": "Who won Super Bowl 50?", "documents": DOCUMENTS})
        concurrent = asyncio.run(
            catalog.run_async("answer", {"question": "Who won Super Bowl 50?", "documents": DOCUMENTS})
        )
        assert sync["answer"] == (
            "The Denver Broncos [1]. The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50 [1]."
        )  # the short answer first, then the sentence it comes from
        assert 0.0 < sync["short_answer_confidence"] < 1.0 and sync["parts"][0]["sure"] is True
        assert sync["citations"][0]["chunk_id"] == "sb"
        assert [d.id for d in sync["chunks"]] == ["sb", "wa"]
        assert sync["sentences"][0]["supported"] is True
        assert [s.source for s in sync["statuses"]] == ["generator"] and sync["statuses"][
            0
        ].status is StatusKind.SUCCESS
        assert {"ranker", "generator", "citation_check", "total_ms"} <= set(sync["timings"])
        for key in ("answer", "citations", "sentences", "invalid_citations"):
            assert concurrent[key] == sync[key]
        assert [d.id for d in concurrent["chunks"]] == [d.id for d in sync["chunks"]]

    def test_sync_run_runs_independent_branches_concurrently(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(two_slow_sources_catalog(delay_ms=1000)))
        outputs = catalog.run("fanout", {"question": "anything"})
        assert len(outputs["documents"]) == 2
        # One after the other cannot beat 2,000 ms however idle the machine; side by side about 1,000. The sum is the
        # bound, and the second between is room for a loaded machine.
        assert 1000 <= outputs["timings"]["total_ms"] < 2000

    def test_sync_run_inside_a_running_loop_runs_one_component_at_a_time(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(two_slow_sources_catalog(delay_ms=20)))

        async def called_from_a_coroutine() -> dict:
            return catalog.run("fanout", {"question": "anything"})

        outputs = asyncio.run(called_from_a_coroutine())
        assert len(outputs["documents"]) == 2 and {"slow_a", "slow_b"} <= set(outputs["timings"])

    def test_a_loaded_catalog_lets_plain_haystack_load_its_dump(self):
        from haystack import Pipeline

        catalog = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        dumped = yaml.safe_load(catalog.dumps())["pipelines"]["answer"]["pipeline"]
        pipeline = Pipeline.loads(yaml.safe_dump(dumped))
        assert type(pipeline.get_component("ranker")).__name__ == "ResearchRanker"

    def test_get_builds_once_for_every_thread(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        with ThreadPoolExecutor(max_workers=4) as pool:
            pipelines = list(pool.map(lambda _: catalog.get("answer"), range(8)))
        assert all(pipeline is pipelines[0] for pipeline in pipelines)

    def test_named_input_top_k_reaches_the_ranker(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        out = catalog.run("answer", {"question": "Warsaw", "documents": DOCUMENTS, "top_k": 1})
        assert [d.id for d in out["chunks"]] == ["wa"]

    def test_round_trip_dump_and_load_gives_the_same_outputs(self):
        first = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        second = PipelineCatalog.loads(first.dumps())
        assert second.names() == first.names()
        inputs = {"question": "Which river is Warsaw on?", "documents": DOCUMENTS}
        a, b = first.run("answer", inputs), second.run("answer", inputs)
        assert a["answer"] == b["answer"] and a["citations"] == b["citations"] and a["sentences"] == b["sentences"]
        assert [d.meta["ranks"] for d in a["chunks"]] == [d.meta["ranks"] for d in b["chunks"]]

    def test_unknown_pipeline_and_input_are_one_sentence(self):
        catalog = PipelineCatalog.loads(yaml.safe_dump(answer_catalog()))
        with pytest.raises(CatalogError, match="There is no pipeline 'nope' in the catalog; it has: answer."):
            catalog.get("nope")
        with pytest.raises(CatalogError, match="Pipeline 'answer' has no input 'colour'"):
            catalog.run("answer", {"question": "q", "documents": DOCUMENTS, "colour": "red"})

    @pytest.mark.parametrize(
        ("mutate", "message"),
        [
            (lambda d: d.pop("pipelines"), "must hold a top-level mapping 'pipelines:'"),
            (lambda d: d["pipelines"]["answer"].pop("pipeline"), "Pipeline 'answer' has no 'pipeline:' mapping"),
            (
                lambda d: d["pipelines"]["answer"]["pipeline"]["components"]["ranker"].update(
                    type="components.nowhere.Ranker"
                ),
                "Pipeline 'answer' cannot be built",
            ),
            (
                lambda d: d["pipelines"]["answer"]["pipeline"]["components"]["ranker"]["init_parameters"].update(
                    top_k=0
                ),
                "Pipeline 'answer' cannot be built",
            ),
            (
                lambda d: d["pipelines"]["answer"]["pipeline"]["components"]["ranker"].update(type="os.system"),
                "Pipeline 'answer' cannot be built",
            ),
            (
                lambda d: d["pipelines"]["answer"]["pipeline"]["components"]["generator"]["init_parameters"].update(
                    scoring_model="/nowhere/scoring.json"
                ),
                "Pipeline 'answer' cannot be built: Couldn't deserialize component 'generator' of class "
                "'ResearchGenerator' with the following data: (no scoring file at /nowhere/scoring.json)",
            ),
            (
                lambda d: d["pipelines"]["answer"]["inputs"].update(question=["ranker.question"]),
                "input 'question' feeds 'ranker.question', but 'ranker' has no input 'question'",
            ),
            (
                lambda d: d["pipelines"]["answer"]["inputs"].update(extra=["rankr.query"]),
                "input 'extra' feeds unknown component 'rankr'",
            ),
            (
                lambda d: d["pipelines"]["answer"]["inputs"].update(extra=["answer_builder.documents"]),
                "feeds 'answer_builder.documents', which another component already feeds",
            ),
            (
                lambda d: d["pipelines"]["answer"]["inputs"].update(
                    question=["prompt_builder.query", "generator.query"]
                ),
                "Pipeline 'answer' needs 'ranker.query', but no named input feeds it",
            ),
            (
                lambda d: d["pipelines"]["answer"]["outputs"].update(answer="answer_builder.text"),
                "output 'answer' names 'answer_builder.text', but 'answer_builder' has no output 'text'",
            ),
            (
                lambda d: d["pipelines"]["answer"]["outputs"].update(answer="answer_builder"),
                "output 'answer' must be written 'component.socket'",
            ),
        ],
    )
    def test_broken_catalogs_fail_validation_with_one_sentence(self, work_dir, mutate, message):
        data = answer_catalog()
        mutate(data)
        with pytest.raises(CatalogError, match=message.replace("(", r"\(").replace(")", r"\)")) as error:
            PipelineCatalog(write(work_dir, data)).validate()
        assert "\n" not in str(error.value)

    def test_a_chat_model_with_no_prompt_fed_fails_validation_and_the_extractive_one_needs_none(self, work_dir):
        # The generator's `messages` is optional (the extractive answer reads no prompt), so a catalog whose chat
        # model is given no prompt must be said to be wrong when it is built, not answer every question by the
        # fallback with an error status.
        data = answer_catalog()
        answer = data["pipelines"]["answer"]["pipeline"]
        answer["connections"] = [c for c in answer["connections"] if c["receiver"] != "generator.messages"]
        PipelineCatalog(write(work_dir, data)).validate()
        answer["components"]["generator"]["init_parameters"].update(
            generator="openai", model="tarn-model", api_base_url="http://127.0.0.1:9/v1"
        )
        with pytest.raises(CatalogError, match="Pipeline 'answer' needs 'generator.messages'") as error:
            PipelineCatalog(write(work_dir, data)).validate()
        assert "\n" not in str(error.value)

    def test_unreadable_files_are_one_sentence(self, work_dir):
        with pytest.raises(CatalogError, match="does not exist; set PIPELINES_FILE"):
            PipelineCatalog(work_dir / "missing.yaml")
        with pytest.raises(CatalogError, match="is not valid YAML"):
            PipelineCatalog(write(work_dir, "pipelines: [unclosed"))


@pytest.mark.integration
class TestKnowledgeBaseStoresInTheCatalog:
    """The integration's document store is an init parameter of the knowledge-base components, in the YAML."""

    def test_the_dump_names_the_store_with_env_var_secrets_only_and_round_trips(self, monkeypatch, settings):
        secret = "s3cret-pg-password"
        catalog = PipelineCatalog(REPO_CATALOG)
        monkeypatch.setenv("PG_CONN_STR", f"postgresql://kb:{secret}@127.0.0.1:1/kb")  # must never be dumped
        dumped = catalog.dumps()
        assert secret not in dumped
        components = yaml.safe_load(dumped)["pipelines"]["research"]["pipeline"]["components"]
        names = ("kb_dense", "kb_keyword", "ranker")
        stores = [components[name]["init_parameters"]["document_store"] for name in names]
        assert all(store == stores[0] for store in stores)
        store = stores[0]
        assert store["type"].endswith("pgvector.document_store.PgvectorDocumentStore")
        params = store["init_parameters"]
        assert params["connection_string"] == {
            "type": "env_var",
            "env_vars": ["DATABASE_URL", "PG_CONN_STR"],
            "strict": False,
        }
        assert params["table_name"] == settings.kb_collection and params["embedding_dimension"] == 384
        assert params["recreate_table"] is False and params["hnsw_recreate_index_if_exists"] is False
        again = PipelineCatalog.loads(dumped)
        assert again.dumps() == dumped

    def test_a_store_written_in_the_yaml_is_kept_whatever_kb_backend_says(self, monkeypatch):
        from haystack.utils import Secret
        from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

        data = yaml.safe_load(REPO_CATALOG.read_text())
        pinned = PgvectorDocumentStore(
            connection_string=Secret.from_env_var("DATABASE_URL", strict=False),
            table_name="pinned_kb",
            embedding_dimension=384,
            recreate_table=True,  # never serialised as True: reloading must not wipe the table
        )
        from components.serialization import without_wiping_flags

        documents = data["pipelines"]["documents"]
        documents["pipeline"]["components"]["list_documents"]["init_parameters"]["document_store"] = (
            without_wiping_flags(pinned.to_dict())
        )
        data["pipelines"] = {"documents": documents}
        monkeypatch.setenv("KB_BACKEND", "qdrant")
        from components.settings import reload_settings

        reload_settings()
        try:
            catalog = PipelineCatalog.loads(yaml.safe_dump(data))
            dumped = yaml.safe_load(catalog.dumps())["pipelines"]["documents"]["pipeline"]["components"]
            listed = dumped["list_documents"]
            params = listed["init_parameters"]["document_store"]["init_parameters"]
            assert params["table_name"] == "pinned_kb" and params["recreate_table"] is False
        finally:
            monkeypatch.delenv("KB_BACKEND")
            reload_settings()


class TestSourceThreads:
    async def test_the_loop_runs_more_sync_sources_at_once_than_its_default_pool(self):
        # Twelve blocking calls that can only finish when all twelve run at the same time (the default pool here has
        # cpu + 4 threads): a pool too small breaks the barrier instead of hanging the test.
        import asyncio
        import threading

        from pipelines.catalog import SOURCE_THREADS, give_loop_source_threads

        for _ in range(2):  # idempotent
            give_loop_source_threads()
        barrier = threading.Barrier(12, timeout=10)
        waited = await asyncio.gather(*(asyncio.to_thread(barrier.wait) for _ in range(12)))
        assert sorted(waited) == list(range(12)) and SOURCE_THREADS >= 12


def test_the_budget_a_client_reads_is_the_research_pipelines_else_the_setting(tmp_path) -> None:
    from components.settings import get_settings
    from pipelines.catalog_file import research_question_budget_s

    path = tmp_path / "pipelines.yaml"
    path.write_text("pipelines:\n  research:\n    pipeline:\n      metadata:\n        question_budget_s: 75\n")
    assert research_question_budget_s(path) == 75.0
    setting = get_settings().question_budget_s
    for text in ("pipelines:\n  research:\n    pipeline: {}\n", "pipelines: [", "question_budget_s: 9000\n"):
        path.write_text(text)
        assert research_question_budget_s(path) == setting
    assert research_question_budget_s(tmp_path / "missing.yaml") == setting
