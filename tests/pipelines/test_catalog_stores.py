"""The catalog's graph and memory components: their stores in `pipelines.yaml`, round-tripped with no secret."""

from __future__ import annotations

import pytest
import yaml

from components.graph.neo4j_store import Neo4jGraphStore
from components.graph.postgres_store import PostgresGraphStore
from pipelines.catalog import PipelineCatalog, build_pipeline
from tests.pipelines.knowledge import REPO_CATALOG

GRAPH_COMPONENTS = {
    "research": ["graph"],
    "entity_timeline": ["timeline"],
    "entity_relationships": ["relationships"],
    "entity_search": ["search"],
}
SECRET = "n3o4j-do-not-print"


def _catalog_data() -> dict:
    return yaml.safe_load(REPO_CATALOG.read_text())


class TestCatalogStores:
    def test_the_yaml_writes_every_store_parameter_the_components_serialise(self):
        catalog = PipelineCatalog(REPO_CATALOG)
        for name, components in {**GRAPH_COMPONENTS, "research": ["graph", "memory", "memory_writer"]}.items():
            spec = catalog.spec(name)
            built = build_pipeline(spec).to_dict()["components"]
            for component in components:
                written = dict(spec.pipeline["components"][component]["init_parameters"])
                made = dict(built[component]["init_parameters"])
                if "document_store" in written:
                    # null in the YAML: the catalog gives the component the knowledge base KB_BACKEND chooses.
                    assert written.pop("document_store") is None
                    assert made.pop("document_store")["type"].endswith("PgvectorDocumentStore"), (name, component)
                # A null is the setting in force when the pipeline was built, which the built component writes out.
                assert set(written) == set(made), (name, component)
                assert {key: made[key] for key, value in written.items() if value is not None} == {
                    key: value for key, value in written.items() if value is not None
                }, (name, component)
        assert catalog.spec("entity_search").pipeline["components"]["search"]["init_parameters"]["graph_store"] is None

    def test_named_stores_round_trip_and_the_dump_holds_no_secret(self, monkeypatch: pytest.MonkeyPatch):
        monkeypatch.setenv("NEO4J_PASSWORD", SECRET)
        monkeypatch.setenv("ZEP_API_KEY", "zep-do-not-print")
        neo4j = Neo4jGraphStore("neo4j://127.0.0.1:7687", collection="research").to_dict()
        embedded = PostgresGraphStore("research").to_dict()
        data = _catalog_data()
        for name, components in GRAPH_COMPONENTS.items():
            for component in components:
                parameters = data["pipelines"][name]["pipeline"]["components"][component]["init_parameters"]
                parameters["graph_store"] = neo4j if name != "entity_search" else embedded
        catalog = PipelineCatalog.loads(yaml.safe_dump(data))
        dumped = catalog.dumps()
        assert SECRET not in dumped and "zep-do-not-print" not in dumped
        assert dumped.count("NEO4J_PASSWORD") == 3 and "ZEP_API_KEY" in dumped
        reloaded = PipelineCatalog.loads(dumped)
        for name in GRAPH_COMPONENTS:
            assert build_pipeline(reloaded.spec(name)).to_dict() == build_pipeline(catalog.spec(name)).to_dict()
        graph = build_pipeline(reloaded.spec("research")).get_component("graph")
        assert isinstance(graph.graph_store, Neo4jGraphStore) and graph.graph_store._driver is None
        assert graph.graph_store.password.resolve_value() == SECRET
        search = build_pipeline(reloaded.spec("entity_search")).get_component("search")
        assert isinstance(search.graph_store, PostgresGraphStore) and search.graph_store.collection == "research"


def test_a_catalog_builds_its_stores_from_its_own_settings_not_the_process_ones():
    from components.settings import get_settings

    own = get_settings().model_copy(update={"kb_collection": "quellmoor_notes"})
    assert get_settings().kb_collection != "quellmoor_notes"
    dumped = yaml.safe_load(PipelineCatalog(REPO_CATALOG, settings=own).dumps())["pipelines"]
    research = dumped["research"]["pipeline"]["components"]
    for component in ("kb_dense", "kb_keyword", "ranker", "graph"):
        store = research[component]["init_parameters"]["document_store"]
        assert store["init_parameters"]["table_name"] == "quellmoor_notes", component
    for name, components in GRAPH_COMPONENTS.items():
        for component in components:
            store = dumped[name]["pipeline"]["components"][component]["init_parameters"]["graph_store"]
            assert store["init_parameters"]["collection"] == "quellmoor_notes", (name, component)
    # The process's settings are left as they were: a catalog made without settings reads them.
    default = yaml.safe_load(PipelineCatalog(REPO_CATALOG).dumps())["pipelines"]["entity_search"]["pipeline"]
    assert default["components"]["search"]["init_parameters"]["graph_store"]["init_parameters"]["collection"] == (
        get_settings().kb_collection
    )
