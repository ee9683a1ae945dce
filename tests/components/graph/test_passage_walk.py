"""The entity-passage walk: seeds from the question's names, mass through bridge entities, and its cache kept in
step with the graph (in this process and across processes)."""

from __future__ import annotations

import datetime as dt
import threading
import time
from unittest.mock import Mock

import pytest
from psycopg import sql

from components.graph.model import DocumentGraph, EntityMention, Fact, entity_uuid, fact_uuid
from components.graph.passage_walk import EntityPassageGraph, PassageGraphCache
from components.graph.store import EntityPassageLinks, GraphStore


def links(passages: dict[str, list[str]], aliases: dict[str, str] | None = None) -> EntityPassageLinks:
    """Links of passages (chunk id -> entity names), every passage its own document."""
    rows = [
        (entity_uuid(name.lower()), chunk, f"doc-{chunk}", 1) for chunk, names in passages.items() for name in names
    ]
    names = {name.lower() for entities in passages.values() for name in entities}
    pairs = [(name, entity_uuid(name)) for name in sorted(names)]
    pairs += [(alias, entity_uuid(name.lower())) for alias, name in (aliases or {}).items()]
    return EntityPassageLinks(links=tuple(rows), names=tuple(pairs))


# A founder's company in one passage, where she was born in another: the birthplace is two hops from the question.
BRIDGE = {
    "nordvik": ["Nordvik Aviation", "Marta Olsen", "Norway"],
    "olsen": ["Marta Olsen", "Trondheim"],
    "lindqvist": ["Lindqvist Motors", "Erik Lund"],
    "lund": ["Erik Lund", "Uppsala"],
}


class TestEntityPassageGraph:
    def test_seeds_are_the_longest_names_the_question_holds(self):
        graph = EntityPassageGraph(
            links({"a": ["South Tarnby", "Brightwater"], "b": ["Tarnby"], "c": ["Ingrid Fenwick"]})
        )
        seeds = graph.seeds("Who directed the film shot in Brightwater, South Tarnby?")
        assert set(seeds.names) == {"south tarnby", "brightwater"}
        assert set(seeds.weights) == {entity_uuid("south tarnby"), entity_uuid("brightwater")}
        # A proper name that is only part of an entity's name still finds it when it is unambiguous.
        assert graph.seeds("Is Fenwick a film director?").weights.keys() == {entity_uuid("ingrid fenwick")}
        assert graph.seeds("What is the weather like?").weights == {}

    def test_aliases_seed_their_entity(self):
        graph = EntityPassageGraph(links({"a": ["Tarnby Optical Works"]}, {"tow": "Tarnby Optical Works"}))
        assert graph.seeds("When was TOW founded?").weights.keys() == {entity_uuid("tarnby optical works")}

    def test_rare_names_weigh_more_than_common_ones(self):
        passages = {f"p{i}": ["United States"] for i in range(20)}
        passages["x"] = ["Tamsin Orvik", "United States"]
        graph = EntityPassageGraph(links(passages))
        weights = graph.seeds("Which United States band did Tamsin Orvik found?").weights
        assert weights[entity_uuid("tamsin orvik")] > 3 * weights[entity_uuid("united states")]

    def test_the_walk_reaches_the_second_hop_through_the_bridge(self):
        graph = EntityPassageGraph(links(BRIDGE))
        walk = graph.top_passages("Where was the founder of Nordvik Aviation born?", limit=10)
        walked = walk.passages
        assert walk.seeds.names == ("nordvik aviation",)
        order = [passage.chunk_id for passage in walked]
        # The seed's passage first, then the bridge's (Marta Olsen's birthplace); the unconnected company never.
        assert order[:2] == ["nordvik", "olsen"]
        assert "lindqvist" not in order and "lund" not in order
        assert all(passage.document_id == f"doc-{passage.chunk_id}" for passage in walked)
        assert walked[0].score > walked[1].score > 0
        # The entities with the most mass: the seed, then the bridge between the two passages.
        assert walk.entities[:2] == [entity_uuid("nordvik aviation"), entity_uuid("marta olsen")]

    def test_a_passage_two_seeds_lead_to_ranks_first(self):
        graph = EntityPassageGraph(
            links({"both": ["Ada Lovelace", "Charles Babbage"], "ada": ["Ada Lovelace"], "bab": ["Charles Babbage"]})
        )
        walk = graph.top_passages("How did Ada Lovelace work with Charles Babbage?", limit=3)
        assert walk.passages[0].chunk_id == "both"

    def test_empty_graph_and_limit(self):
        assert EntityPassageGraph(EntityPassageLinks((), ())).top_passages("Anything?").passages == []
        graph = EntityPassageGraph(links(BRIDGE))
        assert len(graph.top_passages("Where was the founder of Nordvik Aviation born?", limit=1).passages) == 1


class TestPassageGraphCache:
    def test_without_a_change_counter_it_rereads_after_the_ttl(self, monkeypatch):
        store = Mock(spec=GraphStore)
        store.graph_version.return_value = None
        store.entity_passage_links.return_value = links(BRIDGE)
        cache = PassageGraphCache(store, ttl_s=30.0)
        first = cache.get()
        assert cache.get() is first and store.entity_passage_links.call_count == 1
        clock = [1000.0]
        monkeypatch.setattr("components.graph.passage_walk.time.monotonic", lambda: clock[0])
        cache._loaded_at = 1000.0
        clock[0] += 31.0
        assert cache.get() is not first and store.entity_passage_links.call_count == 2

    def test_a_new_version_rebuilds(self):
        store = Mock(spec=GraphStore)
        store.graph_version.return_value = "1"
        store.entity_passage_links.return_value = links(BRIDGE)
        cache = PassageGraphCache(store)
        first = cache.get()
        assert cache.get() is first
        store.graph_version.return_value = "2"
        assert cache.get() is not first and store.entity_passage_links.call_count == 2

    def test_a_slow_graph_is_rebuilt_in_the_background(self):
        store = Mock(spec=GraphStore)
        store.graph_version.return_value = "1"
        store.entity_passage_links.return_value = links(BRIDGE)
        cache = PassageGraphCache(store, blocking_build_s=1.0)
        first = cache.get()
        cache._build_s = 5.0  # as if the last read had taken five seconds
        release, reading = threading.Event(), threading.Event()

        def slow_links():
            reading.set()
            release.wait(5)
            return links({"new": ["Nordvik Aviation"]})

        store.entity_passage_links.side_effect = slow_links
        store.graph_version.return_value = "2"
        assert cache.get() is first and reading.wait(5)  # the question keeps the previous graph
        assert cache.get() is first and store.entity_passage_links.call_count == 2  # one rebuild at a time
        release.set()
        for _ in range(100):
            if cache.get() is not first:
                break
            time.sleep(0.05)
        assert [chunk for chunk, _ in cache.get().passages] == ["new"]


def document_graph(document_id: str, chunk_id: str, sentence: str, names: list[str]) -> DocumentGraph:
    mentions = [EntityMention(key=name.lower(), name=name, kind="organization") for name in names]
    fact = Fact(
        uuid=fact_uuid(document_id, 0, sentence),
        text=sentence,
        document_id=document_id,
        sentence_index=0,
        entity_keys=[m.key for m in mentions],
        chunk_id=chunk_id,
        chunk_index=0,
        document_title=document_id,
        document_date=dt.date(2024, 1, 1),
    )
    return DocumentGraph(document_id=document_id, entities=mentions, facts=[fact])


@pytest.mark.integration
class TestPostgresLinksAndVersion:
    @pytest.fixture()
    def stores(self, database_url, collection_name):
        from components.graph.postgres_store import PostgresGraphStore

        # Two instances over the same tables: one stands for another process (the app, an ingestion run).
        store, other = PostgresGraphStore(collection_name), PostgresGraphStore(collection_name)
        yield store, other
        store.drop()

    def test_links_in_one_read(self, stores):
        store, _ = stores
        store.replace_document(
            document_graph("d1", "d1-c0", "Nordvik Aviation hired Marta Olsen.", ["Nordvik Aviation", "Marta Olsen"])
        )
        found = store.entity_passage_links()
        assert sorted(found.links) == sorted(
            [(entity_uuid("nordvik aviation"), "d1-c0", "d1", 1), (entity_uuid("marta olsen"), "d1-c0", "d1", 1)]
        )
        assert ("marta olsen", entity_uuid("marta olsen")) in found.names

    def test_names_only_mentioned_link_their_passage_for_the_walk(self, stores):
        store, _ = stores
        graph = document_graph(
            "d1", "d1-c0", "Marta Olsen flew the Nordvik Aviation prototype over Lyngen.", ["Marta Olsen"]
        )
        graph.facts[0].mention_keys = ["nordvik aviation", "lyngen"]
        store.replace_document(graph)
        store.replace_document(
            document_graph("d2", "d2-c0", "Nordvik Aviation was founded in Bodo.", ["Nordvik Aviation"])
        )
        found = store.entity_passage_links()
        # A mentioned name that is an entity elsewhere links by its id; one that is nowhere a participant by its key.
        assert (entity_uuid("nordvik aviation"), "d1-c0", "d1", 1) in found.links
        assert ("mention:lyngen", "d1-c0", "d1", 1) in found.links
        assert ("lyngen", "mention:lyngen") in found.names
        # Timelines keep participants only.
        assert [hit.fact.text for hit in store.entity_facts([entity_uuid("nordvik aviation")])] == [
            "Nordvik Aviation was founded in Bodo."
        ]
        walk = EntityPassageGraph(found).top_passages("Who flew over Lyngen?")
        assert [p.chunk_id for p in walk.passages][:1] == ["d1-c0"]

    def test_the_cache_follows_writes_and_deletes_from_any_process(self, stores):
        store, other = stores
        store.replace_document(
            document_graph("d1", "d1-c0", "Nordvik Aviation hired Marta Olsen.", ["Nordvik Aviation", "Marta Olsen"])
        )
        cache = PassageGraphCache(store, ttl_s=3600.0)
        first = cache.get()
        assert cache.get() is first and len(first.passages) == 1
        # Another process ingests a document: the next question sees its passage.
        other.replace_document(
            document_graph("d2", "d2-c0", "Marta Olsen was born in Trondheim.", ["Marta Olsen", "Trondheim"])
        )
        second = cache.get()
        assert second is not first and {p for p, _ in second.passages} == {"d1-c0", "d2-c0"}
        walk = second.top_passages("Where was the founder of Nordvik Aviation born?")
        assert [p.chunk_id for p in walk.passages] == ["d1-c0", "d2-c0"]
        # Updating other columns of facts is not a change of the graph's links.
        with store._get_pool().connection() as conn:
            conn.execute(sql.SQL("UPDATE {} SET date_method = date_method").format(store._names["facts"]))
        assert cache.get() is second
        other.delete_document("d2")
        third = cache.get()
        assert third is not second and {p for p, _ in third.passages} == {"d1-c0"}
