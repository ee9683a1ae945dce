"""The graph components take their store as an init parameter: given (a mock, a real store) or made in `warm_up()`
from the settings, serialised as the store's own configuration with the Neo4j password as an env-var name only."""

from __future__ import annotations

import copy
from unittest.mock import Mock

import pytest
import yaml
from haystack import Pipeline
from haystack.core.errors import DeserializationError

import components.graph.factory as factory
import components.graph.ingest_hook as ingest_hook
from components.graph.comprehensive_search import ComprehensiveSearch
from components.graph.entity_relationships import EntityRelationships
from components.graph.entity_search import EntitySearch
from components.graph.entity_timeline import EntityTimeline
from components.graph.graph_search import GraphSearch
from components.graph.ingest_hook import GraphIngestHook
from components.graph.neo4j_store import Neo4jGraphStore
from components.graph.postgres_store import PostgresGraphStore
from components.graph.store import GraphStore
from components.settings import Settings

COMPONENTS = [EntitySearch, EntityTimeline, EntityRelationships, ComprehensiveSearch, GraphSearch]


def store_of(component) -> GraphStore:
    """The store a warmed-up component reads (the graph branch keeps it itself, the tool components in their tools)."""
    return component._store if isinstance(component, GraphSearch) else component._tools.store


def neo4j_store() -> Neo4jGraphStore:
    return Neo4jGraphStore("neo4j://127.0.0.1:7687", "analyst", database="kg", collection="research")


class TestGraphStoreParameter:
    @pytest.mark.parametrize("cls", COMPONENTS)
    def test_a_given_store_is_used_and_the_settings_are_not_asked(self, cls, monkeypatch):
        def not_asked(*args, **kwargs):
            raise AssertionError("the settings' store was made although one was given")

        monkeypatch.setattr(factory, "graph_store_from_settings", not_asked)
        store = Mock(spec=GraphStore)
        store.collection = "research"
        component = cls(graph_store=store)
        component.warm_up()
        assert store_of(component) is store

    @pytest.mark.parametrize("cls", COMPONENTS)
    def test_without_a_store_each_component_takes_the_settings_store_when_built(self, cls, monkeypatch):
        made = []

        def from_settings(collection=None, settings=None):
            store = Mock(spec=GraphStore)
            store.collection = collection
            made.append(store)
            return store

        monkeypatch.setattr(factory, "graph_store_from_settings", from_settings)
        first, second = cls(collection="kb_one"), cls(collection="kb_two")
        # Made (not connected) as the component is built, so its YAML names it; warm-up makes no other.
        assert [store.collection for store in made] == ["kb_one", "kb_two"]
        assert (first.graph_store, second.graph_store) == (made[0], made[1])
        first.warm_up()
        second.warm_up()
        first.warm_up()
        assert len(made) == 2
        assert store_of(first) is made[0] and store_of(second) is made[1]

    @pytest.mark.parametrize("cls", COMPONENTS)
    def test_settings_naming_no_usable_store_leave_it_to_the_run(self, cls, monkeypatch):
        from components.settings import reload_settings

        monkeypatch.setenv("GRAPH_BACKEND", "neo4j")
        monkeypatch.delenv("NEO4J_URI", raising=False)
        reload_settings()
        try:
            component = cls(collection="kb_one")  # still built: each run says NEO4J_URI is missing
        finally:
            monkeypatch.undo()
            reload_settings()
        assert component.graph_store is None and component.to_dict()["init_parameters"]["graph_store"] is None

    @pytest.mark.parametrize("cls", COMPONENTS)
    def test_the_store_round_trips_with_the_password_as_an_env_var_name(self, cls, monkeypatch):
        monkeypatch.setenv("NEO4J_PASSWORD", "do-not-print-me")
        data = cls(graph_store=neo4j_store()).to_dict()
        assert data["init_parameters"]["graph_store"]["init_parameters"]["password"] == {
            "type": "env_var",
            "env_vars": ["NEO4J_PASSWORD"],
            "strict": False,
        }
        assert "do-not-print-me" not in yaml.safe_dump(data)
        again = cls.from_dict(copy.deepcopy(data))
        assert isinstance(again.graph_store, Neo4jGraphStore)
        assert (again.graph_store.uri, again.graph_store.username, again.graph_store.database) == (
            "neo4j://127.0.0.1:7687",
            "analyst",
            "kg",
        )
        assert again.graph_store._driver is None  # loading a pipeline connects to nothing
        assert again.to_dict() == data

    def test_the_embedded_store_round_trips(self):
        data = EntitySearch(graph_store=PostgresGraphStore("kb_three")).to_dict()
        assert data["init_parameters"]["graph_store"] == {
            "type": "components.graph.postgres_store.PostgresGraphStore",
            "init_parameters": {"collection": "kb_three"},
        }
        assert EntitySearch.from_dict(data).graph_store.collection == "kb_three"

    def test_a_pipeline_with_a_neo4j_store_dumps_and_loads_without_the_secret(self, monkeypatch):
        monkeypatch.setenv("NEO4J_PASSWORD", "do-not-print-me")
        pipeline = Pipeline()
        pipeline.add_component("search", EntitySearch(graph_store=neo4j_store()))
        text = pipeline.dumps()
        assert "NEO4J_PASSWORD" in text and "do-not-print-me" not in text
        loaded = Pipeline.loads(text, allowed_modules=["components", "haystack"])
        assert isinstance(loaded.get_component("search").graph_store, Neo4jGraphStore)

    def test_bad_store_parameters_are_one_sentence(self):
        with pytest.raises(ValueError, match="collection 'kb_one', not 'kb_two'"):
            EntitySearch(collection="kb_two", graph_store=PostgresGraphStore("kb_one"))
        with pytest.raises(ValueError, match="graph_store must be a GraphStore"):
            EntityTimeline(graph_store="postgres")
        data = EntitySearch().to_dict()
        data["init_parameters"]["graph_store"] = {"type": "components.settings.Settings", "init_parameters": {}}
        with pytest.raises(DeserializationError, match="is not a graph store"):
            Pipeline.from_dict(
                {
                    "components": {"search": {"type": "components.graph.entity_search.EntitySearch", **data}},
                    "connections": [],
                },
                allowed_modules=["components"],
            )
        data["init_parameters"]["graph_store"] = {"type": "somewhere.Else", "init_parameters": {}}
        with pytest.raises(DeserializationError):
            EntitySearch.from_dict(data)

    def test_the_settings_choose_the_backend(self, monkeypatch):
        embedded = factory.graph_store_from_settings("kb_one", Settings(graph_backend="postgres"))
        assert isinstance(embedded, PostgresGraphStore) and embedded.collection == "kb_one"
        monkeypatch.setenv("NEO4J_PASSWORD", "from-env")
        settings = Settings(graph_backend="neo4j", neo4j_uri="bolt://127.0.0.1:7687")
        remote = factory.graph_store_from_settings(None, settings)
        assert isinstance(remote, Neo4jGraphStore) and remote.collection == settings.kb_collection
        assert remote._driver is None and "from-env" not in repr(remote.to_dict())

    def test_the_ingest_hook_takes_a_store_or_makes_one(self, monkeypatch):
        given = Mock(spec=GraphStore)
        assert GraphIngestHook(store=given).store is given
        made = Mock(spec=GraphStore)
        monkeypatch.setattr(ingest_hook, "graph_store_from_settings", lambda collection=None, settings=None: made)
        assert GraphIngestHook(collection="kb_one").store is made

    def test_no_process_wide_registry_of_stores_is_left(self):
        assert not hasattr(factory, "_STORES") and not hasattr(factory, "open_graph_store")
