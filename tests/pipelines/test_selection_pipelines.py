from __future__ import annotations

import asyncio
import random
import uuid

import pytest
from haystack import Document
from haystack.components.joiners import DocumentJoiner

from components.contracts import StatusKind
from components.ranking.joiner import LoopDocumentJoiner
from pipelines.catalog import PipelineCatalog
from pipelines.selection_pipelines import SelectionCache, idle, idle_stages, unread_senders, without_branches
from tests.pipelines.knowledge import catalog_yaml_for, fill_collection, fresh_collection_name

JOINER = "components.ranking.joiner.LoopDocumentJoiner"
COLLECTOR = "pipelines.status_collector.SourceStatusCollector"


def _definition(joiner: dict | None = None) -> tuple[dict, dict]:
    """Two branches (north, south) into a joiner and a status collector; south also feeds a stage only it feeds."""
    components = {
        "north": {"type": "tests.North", "init_parameters": {}},
        "south": {"type": "tests.South", "init_parameters": {}},
        "south_only": {"type": "tests.Stage", "init_parameters": {}},
        "joiner": joiner or {"type": JOINER, "init_parameters": {"join_mode": "reciprocal_rank_fusion"}},
        "statuses": {"type": COLLECTOR, "init_parameters": {"sort": True}},
        "ranker": {"type": "tests.Ranker", "init_parameters": {}},
    }
    connections = [
        {"sender": "north.documents", "receiver": "joiner.documents"},
        {"sender": "south.documents", "receiver": "joiner.documents"},
        {"sender": "north.status", "receiver": "statuses.statuses"},
        {"sender": "south.status", "receiver": "statuses.statuses"},
        {"sender": "south.documents", "receiver": "south_only.documents"},
        {"sender": "south_only.documents", "receiver": "ranker.extra"},
        {"sender": "joiner.documents", "receiver": "ranker.documents"},
    ]
    inputs = {"question": ["north.query", "south.query", "ranker.query"], "sources": ["north.sources", "south.sources"]}
    return inputs, {"components": components, "connections": connections}


class TestWithoutBranches:
    def test_drops_the_branch_what_only_it_feeds_and_their_connections_and_counts_its_list(self):
        inputs, pipeline = _definition()
        pruned = without_branches(inputs, pipeline, frozenset({"south"}))
        assert pruned is not None
        assert set(pruned.pipeline["components"]) == {"north", "joiner", "statuses", "ranker"}
        assert all("south" not in c["sender"] and "south" not in c["receiver"] for c in pruned.pipeline["connections"])
        assert len(pruned.pipeline["connections"]) == 3
        assert pruned.inputs == {"question": ["north.query", "ranker.query"], "sources": ["north.sources"]}
        assert pruned.pipeline["components"]["joiner"]["init_parameters"]["absent_lists"] == 1
        assert pruned.statuses == {"statuses": (("south", "status"),)}
        # The definition it was made from is unchanged.
        assert (
            "south" in pipeline["components"]
            and "absent_lists" not in pipeline["components"]["joiner"]["init_parameters"]
        )

    @pytest.mark.parametrize(
        "joiner",
        [
            {"type": JOINER, "init_parameters": {"join_mode": "reciprocal_rank_fusion", "weights": [2, 1]}},
            {"type": "haystack.components.joiners.document_joiner.DocumentJoiner", "init_parameters": {}},
        ],
    )
    def test_a_joiner_that_cannot_count_the_missing_list_keeps_the_whole_pipeline(self, joiner):
        inputs, pipeline = _definition(joiner)
        assert without_branches(inputs, pipeline, frozenset({"south"})) is None

    def test_statuses_another_component_reads_keep_the_whole_pipeline(self):
        inputs, pipeline = _definition()
        pipeline["connections"].append({"sender": "statuses.statuses", "receiver": "ranker.statuses"})
        assert without_branches(inputs, pipeline, frozenset({"south"})) is None

    def test_a_status_of_a_stage_only_the_removed_branch_feeds_keeps_the_whole_pipeline(self):
        inputs, pipeline = _definition()
        pipeline["connections"].append({"sender": "south_only.status", "receiver": "statuses.statuses"})
        assert without_branches(inputs, pipeline, frozenset({"south"})) is None


class _Built:
    """A built pipeline as `unread_senders` reads it: its components by name."""

    def __init__(self, **components) -> None:
        self.components = components

    def walk(self):
        return iter(self.components.items())


class _Reader:
    def __init__(self, unread: frozenset[str]) -> None:
        self.unread = unread

    def unread_inputs(self) -> frozenset[str]:
        return self.unread


class TestUnreadSenders:
    def _prompted(self) -> tuple[dict, dict]:
        connections = [
            {"sender": "ranker.documents", "receiver": "prompt.documents"},
            {"sender": "prompt.prompt", "receiver": "writer.messages"},
            {"sender": "ranker.ranked", "receiver": "writer.documents"},
        ]
        return {"answer": "writer.replies"}, {"components": {}, "connections": connections}

    def test_what_feeds_only_an_input_its_receiver_never_reads_is_left_out(self):
        outputs, pipeline = self._prompted()
        built = _Built(ranker=object(), prompt=object(), writer=_Reader(frozenset({"messages"})))
        inputs = {"question": ["ranker.query", "prompt.query", "writer.query"]}
        assert unread_senders(inputs, outputs, pipeline, built) == frozenset({"prompt"})
        pruned = without_branches(inputs, pipeline, unread_senders(inputs, outputs, pipeline, built))
        assert pruned is not None and "prompt" not in pruned.pipeline["components"]
        assert pruned.inputs["question"] == ["ranker.query", "writer.query"]
        assert {"sender": "ranker.ranked", "receiver": "writer.documents"} in pruned.pipeline["connections"]

    def test_a_reader_of_the_input_a_named_output_or_another_receiver_keeps_the_sender(self):
        outputs, pipeline = self._prompted()
        inputs = {"question": ["ranker.query", "prompt.query", "writer.query"]}
        assert unread_senders(inputs, outputs, pipeline, _Built(writer=_Reader(frozenset()))) == frozenset()
        assert unread_senders(inputs, outputs, pipeline, _Built(writer=object())) == frozenset()
        unread = _Built(writer=_Reader(frozenset({"messages"})))
        assert unread_senders(inputs, {**outputs, "prompt": "prompt.prompt"}, pipeline, unread) == frozenset()
        pipeline["connections"].append({"sender": "prompt.prompt", "receiver": "logger.lines"})
        assert unread_senders(inputs, outputs, pipeline, unread) == frozenset()


class _Analyzer:
    """Stands for the stage whose output a reader makes the same way itself."""


class _Maker(_Reader):
    def made_inputs(self) -> dict[str, tuple[str, type]]:
        return {"analysis": ("query", _Analyzer)}


class TestMadeInputs:
    def _analysed(self) -> tuple[dict, dict, dict]:
        connections = [
            {"sender": "ranker.documents", "receiver": "prompt.documents"},
            {"sender": "analyzer.guidance", "receiver": "prompt.guidance"},
            {"sender": "prompt.prompt", "receiver": "writer.messages"},
            {"sender": "analyzer.analysis", "receiver": "writer.analysis"},
            {"sender": "ranker.ranked", "receiver": "writer.documents"},
        ]
        inputs = {"question": ["ranker.query", "analyzer.query", "prompt.query", "writer.query"]}
        return inputs, {"answer": "writer.replies"}, {"components": {}, "connections": connections}

    def test_a_stage_whose_every_reader_makes_its_value_or_is_left_out_is_left_out(self):
        inputs, outputs, pipeline = self._analysed()
        built = _Built(ranker=object(), analyzer=_Analyzer(), prompt=object(), writer=_Maker(frozenset({"messages"})))
        assert unread_senders(inputs, outputs, pipeline, built) == frozenset({"prompt", "analyzer"})
        pruned = without_branches(inputs, pipeline, unread_senders(inputs, outputs, pipeline, built))
        assert pruned is not None and not {"prompt", "analyzer"} & set(pruned.pipeline["components"])
        assert pruned.inputs["question"] == ["ranker.query", "writer.query"]

    def test_a_read_prompt_another_question_or_another_kind_of_stage_keeps_the_analyzer(self):
        inputs, outputs, pipeline = self._analysed()
        reading = _Built(analyzer=_Analyzer(), writer=_Maker(frozenset()))
        assert unread_senders(inputs, outputs, pipeline, reading) == frozenset()
        other = _Built(analyzer=object(), writer=_Maker(frozenset({"messages"})))
        assert unread_senders(inputs, outputs, pipeline, other) == frozenset({"prompt"})
        built = _Built(analyzer=_Analyzer(), writer=_Maker(frozenset({"messages"})))
        rewritten = {
            **inputs,
            "question": ["ranker.query", "prompt.query", "writer.query"],
            "asked": ["analyzer.query"],
        }
        assert unread_senders(rewritten, outputs, pipeline, built) == frozenset({"prompt"})
        assert unread_senders(inputs, {**outputs, "analysis": "analyzer.analysis"}, pipeline, built) == {"prompt"}


class _Idle:
    def __init__(self) -> None:
        self.asked: list[dict] = []

    def idle_for(self, values: dict) -> bool:
        self.asked.append(values)
        return not values.get("session_id")


class _BuiltByName(_Built):
    def get_component(self, name: str):
        return self.components[name]


class TestIdleStages:
    def test_a_stage_the_question_leaves_nothing_to_do_is_named_with_the_inputs_that_feed_it(self):
        inputs = {"question": ["ranker.query", "memo.query", "note.query"], "session_id": ["memo.session_id"]}
        connections = [
            {"sender": "ranker.ranked", "receiver": "memo.documents"},
            {"sender": "ranker.ranked", "receiver": "note.documents"},
            {"sender": "note.status", "receiver": "statuses.statuses"},
        ]
        memo, note = _Idle(), _Idle()
        built = _BuiltByName(ranker=object(), memo=memo, note=note, shown=_Idle())
        stages = idle_stages(inputs, {"shown": "shown.status"}, {"connections": connections}, built)
        # `note` sends its status on and `shown` is a named output: only `memo` may be left out.
        assert stages == {"memo": {"query": "question", "session_id": "session_id"}}
        assert idle(stages, built, {"question": "Who?"}) == frozenset({"memo"})
        assert memo.asked == [{"query": "Who?", "session_id": None}]
        assert idle(stages, built, {"question": "Who?", "session_id": "s1"}) == frozenset()


class TestAbsentLists:
    def test_fuses_as_the_whole_joiner_with_the_missing_lists_empty_to_the_last_bit(self):
        rng = random.Random(3)
        pool = [Document(id=f"d{i}", content=f"chunk {i}", score=rng.random()) for i in range(40)]
        for _ in range(200):
            given = [rng.sample(pool, rng.randint(0, 15)) for _ in range(rng.randint(1, 6))]
            missing = rng.randint(0, 4)
            for mode in ("reciprocal_rank_fusion", "merge", "concatenate", "distribution_based_rank_fusion"):
                whole = DocumentJoiner(join_mode=mode).run(documents=[*given, *([] for _ in range(missing))])
                pruned = LoopDocumentJoiner(join_mode=mode, absent_lists=missing).run(documents=given)
                assert [(d.id, d.score) for d in pruned["documents"]] == [(d.id, d.score) for d in whole["documents"]]

    def test_serialises_and_refuses_what_it_cannot_keep(self):
        joiner = LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", absent_lists=3)
        assert LoopDocumentJoiner.from_dict(joiner.to_dict()).absent_lists == 3
        assert asyncio.run(joiner.run_async(documents=[[Document(id="a", content="Alder")]]))["documents"][0].score
        with pytest.raises(ValueError, match="absent_lists needs equal weights"):
            LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", weights=[1, 2], absent_lists=1)
        with pytest.raises(ValueError, match="absent_lists must be a whole number"):
            LoopDocumentJoiner(absent_lists=-1)


class TestSelectionCache:
    def test_builds_once_keeps_the_last_used_and_closes_a_dropped_one_once_unused(self):
        built: list[str] = []
        closed: list[str] = []

        def build(key: str) -> str:
            built.append(key)
            return f"pipeline {key}"

        cache = SelectionCache(build, closed.append, limit=2)
        with cache.lease("a") as first:
            with cache.lease("a") as again:
                assert first is again == "pipeline a"
            with cache.lease("b"), cache.lease("c"):
                assert closed == []  # "a" is dropped but still in use
            assert len(cache) == 2
        assert closed == ["pipeline a"] and built == ["a", "b", "c"]
        # Taken without building: the kept one at once, one not kept is None (an event loop then takes it from a
        # worker thread), never built on the caller's thread.
        with cache.hold("b", build=False) as kept:
            assert kept == "pipeline b"
        assert cache.hold("a", build=False) is None and built == ["a", "b", "c"]
        with cache.lease(None) as nothing:
            assert nothing is None and len(cache) == 2


KB = ["kb"]
QUESTIONS = ["Which river does Warsaw stand on?", "Who won two Nobel Prizes?", "How do HNSW graphs index vectors?"]


def test_a_question_cancelled_while_its_selection_is_built_gives_its_lease_back():
    import threading

    release = threading.Event()
    closed: list[str] = []

    def build(key: str) -> str:
        release.wait(5)
        return f"pipeline {key}"

    cache = SelectionCache(build, closed.append, limit=1)

    async def scenario() -> None:
        asked = asyncio.ensure_future(cache.hold_async("a"))
        await asyncio.sleep(0.05)  # the worker thread is building "a"
        asked.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asked
        release.set()
        for _ in range(250):  # the thread finishes building "a"
            await asyncio.sleep(0.02)
            if len(cache):
                break
        with await cache.hold_async("b"):  # "a" is dropped: closed once nobody holds it
            pass
        for _ in range(250):  # the lease the thread took is given back, on the loop, as soon as it is done
            if closed:
                break
            await asyncio.sleep(0.02)

    asyncio.run(scenario())
    assert closed == ["pipeline a"]


@pytest.fixture(scope="module")
def catalog(settings, database_url, embedding_model) -> PipelineCatalog:
    collection = fresh_collection_name()
    fill_collection(collection, settings, embedding_model)
    return PipelineCatalog.loads(catalog_yaml_for(collection))


def _answer(result) -> dict:
    data = result.model_dump(mode="json", exclude={"timings"})
    for status in data["statuses"]:
        status.pop("execution_time_ms", None)
    return data


@pytest.mark.integration
class TestResearchForASelection:
    def test_runs_only_the_selected_sources_and_answers_as_the_whole_pipeline(self, catalog, monkeypatch):
        pruned = [catalog.research(question, sources=KB) for question in QUESTIONS]
        for result in pruned:
            assert {"kb_dense", "kb_keyword", "joiner", "ranker", "generator"} <= set(result.timings)
            assert not {"graph", "web", "arxiv", "memory"} & set(result.timings)
        skipped = {s.source: s.message for s in pruned[0].statuses if s.status is StatusKind.SKIPPED}
        assert set(skipped) == {"graph", "web", "arxiv", "memory"}
        assert all(s.execution_time_ms == 0.0 for s in pruned[0].statuses if s.source in skipped)
        assert all(chunk.metadata["fusion_score"] > 0 for chunk in pruned[0].chunks)
        monkeypatch.setattr(catalog, "_selection_key", lambda name, inputs: None)  # the whole pipeline, as before
        whole = [catalog.research(question, sources=KB) for question in QUESTIONS]
        assert {"graph", "web", "arxiv", "memory"} <= set(whole[0].timings)
        assert [_answer(result) for result in pruned] == [_answer(result) for result in whole]

    def test_the_async_run_and_another_selection_answer_as_the_whole_pipeline(self, catalog, monkeypatch):
        question = QUESTIONS[0]
        pruned = [
            asyncio.run(catalog.research_async(question, sources=KB, top_k=3)),
            catalog.research(question, sources=["graph", "kb"]),
            catalog.research(question, sources=["graph"]),
        ]
        assert "graph" in pruned[1].timings and "web" not in pruned[1].timings
        # The graph branch of the selection's pipeline walks the whole pipeline's graph: one copy in memory.
        key = catalog._selection_key("research", {"sources": ["graph", "kb"]})
        with catalog._selections.lease(key) as selection:
            graph = selection.pipeline.get_component("graph")
            whole_graph = catalog.get("research").get_component("graph")
            assert graph is not whole_graph and graph._passage_graph is whole_graph._passage_graph is not None
        assert "kb_dense" not in pruned[2].timings and pruned[2].status_of("kb_dense").status is StatusKind.SKIPPED
        monkeypatch.setattr(catalog, "_selection_key", lambda name, inputs: None)
        whole = [
            asyncio.run(catalog.research_async(question, sources=KB, top_k=3)),
            catalog.research(question, sources=["graph", "kb"]),
            catalog.research(question, sources=["graph"]),
        ]
        assert [_answer(result) for result in pruned] == [_answer(result) for result in whole]

    def test_each_selection_is_built_once_without_the_stages_it_needs_not_run_and_every_source_runs_the_whole_pipeline(
        self, catalog
    ):
        catalog.research(QUESTIONS[0], sources=KB)
        kept = len(catalog._selections)
        left_out = {"prompt_builder", "question_analyzer", "memory_writer"}  # unread, made by the generator, idle
        key = ("research", frozenset({"graph", "web", "arxiv", "memory", *left_out}))
        assert catalog._selection_key("research", {"sources": KB}) == key
        with catalog._selections.lease(key) as first:
            catalog.research(QUESTIONS[1], sources=["KB "])
            with catalog._selections.lease(key) as again:
                assert again is first and first is not None
        assert len(catalog._selections) == kept
        # The extractive generator reads no prompt and analyses the question itself, and no session leaves the memory
        # writer nothing to do: a selection's pipeline runs without the prompt builder, the analyzer and the writer.
        answered = catalog.research(QUESTIONS[1], sources=KB)
        assert not left_out & set(answered.timings) and "generator" in answered.timings
        # Given a session, the memory writer has something to do: that selection keeps it.
        remembered = catalog._selection_key("research", {"sources": KB, "session_id": "s1"})
        assert remembered == ("research", key[1] - {"memory_writer"})
        everything = catalog.research(QUESTIONS[0], sources=["all"])
        assert {"kb_dense", "graph", "web", "arxiv", "memory", "prompt_builder"} <= set(everything.timings)
        assert catalog._selection_key("research", {"sources": ["all"]}) is None
        assert len(catalog._selections) == kept

    def test_a_selection_asked_with_a_session_remembers_the_question_as_the_whole_pipeline_does(
        self, catalog, monkeypatch
    ):
        # Memory is not among the sources asked, yet a question given a session is remembered: the selection's run
        # keeps the writer the session gives something to do, and the answer is the whole pipeline's.
        session = f"s-{uuid.uuid4().hex[:8]}"
        pruned = catalog.research(QUESTIONS[0], sources=KB, session_id=session)
        assert "memory_writer" in pruned.timings and "memory" not in pruned.timings
        recalled = catalog.research(QUESTIONS[0], sources=["memory"], session_id=session)
        assert any(chunk.source_type == "memory" for chunk in recalled.chunks)
        monkeypatch.setattr(catalog, "_selection_key", lambda name, inputs: None)
        whole = catalog.research(QUESTIONS[0], sources=KB, session_id=session)
        assert _answer(pruned) == _answer(whole)

    def test_building_and_dropping_a_selection_neither_collects_nor_thaws_the_frozen_heap(self, catalog, monkeypatch):
        # In a set-up process the whole pipeline's warm-up froze the heap; a selection built later must not run a
        # full collection (about a second on a loaded server, holding up every question on the loop) nor thaw the
        # heap when the cache drops it.
        import gc

        from pipelines import heap

        catalog.research(QUESTIONS[0], sources=KB)  # the whole pipeline warmed first
        calls: list[str] = []
        monkeypatch.setattr(heap, "_on", True)
        monkeypatch.setattr(gc, "collect", lambda *args: calls.append("collect") or 0)
        monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
        monkeypatch.setattr(catalog._selections, "limit", 1)  # each new selection drops the one before
        for sources in (["memory"], ["web"], ["arxiv"]):
            catalog.research(QUESTIONS[0], sources=sources)
        assert calls == []

    def test_a_selection_reads_through_the_whole_pipeline_s_knowledge_base_and_leaves_it_open_when_dropped(
        self, catalog
    ):
        # One set of connections per catalog: a selection's knowledge-base branches and ranker read through the
        # whole pipeline's knowledge bases, and dropping the selection does not close them.
        catalog.research(QUESTIONS[0], sources=KB)
        whole = catalog.get("research")
        key = catalog._selection_key("research", {"sources": KB})
        with catalog._selections.lease(key) as selection:
            for name in ("kb_dense", "kb_keyword", "ranker"):
                assert selection.pipeline.get_component(name)._kb.get() is whole.get_component(name)._kb.get(), name
            selection.pipeline.get_component("kb_dense").close()
            selection.pipeline.get_component("ranker").close()
        assert whole.get_component("kb_dense")._kb._store is not None
        assert whole.get_component("ranker")._kb._store is not None
        assert catalog.research(QUESTIONS[1], sources=["all"]).chunks  # the whole pipeline still answers
