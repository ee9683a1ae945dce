"""The Entities page over the demo corpus: search, timeline and relationships; and its empty and no-match paths."""

import pytest

from tests.app.conftest import app_page, run_page
from tests.app.test_ask_page import demo_collection  # noqa: F401 - module fixture


@pytest.mark.integration
class TestEntitiesPage:
    def test_an_entitys_timeline_and_relationships(self, demo_collection):  # noqa: F811
        at = run_page("entities.py")
        at.text_input[0].input("PostgreSQL").run()
        assert not at.exception
        assert at.subheader[0].value == "PostgreSQL"
        facts = " ".join(element.value for element in at.markdown)
        assert "1996" in facts or "1986" in facts  # dated facts from the demo corpus's PostgreSQL history
        assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the timeline chart
        assert at.get("graphviz_chart")  # the relationship network
        at.slider[0].set_value(1).run()
        assert not at.exception

    def test_focus_from_another_page_prefills_the_search(self, demo_collection):  # noqa: F811
        at = app_page("entities.py")
        at.session_state["entity_focus"] = "Andrew Kane"
        at.run()
        assert not at.exception
        assert at.subheader[0].value == "Andrew Kane"

    def test_no_match_is_a_sentence(self, demo_collection):  # noqa: F811
        at = run_page("entities.py")
        at.text_input[0].input("zzzz no such entity").run()
        assert any("No entity matches" in element.value for element in at.warning)

    def test_empty_graph_explains_how_to_fill_it(self, app_env):
        at = run_page("entities.py")
        assert any("knowledge graph is empty" in element.value for element in at.info)

    def test_matches_are_ranked_as_the_entity_search_endpoint_ranks_them(self, demo_collection):  # noqa: F811
        from components.graph.entity_search import EntitySearch

        at = run_page("entities.py")
        at.text_input[0].input("Postgres").run()
        assert not at.exception
        shown = [label.split(" · ")[0] for label in at.radio[0].options]
        served = EntitySearch(limit=25).run(query="Postgres")["entities"]
        assert len(shown) > 1 and shown == [entity["name"] for entity in served]


@pytest.mark.integration
def test_an_error_text_is_shown_as_written_not_rendered(demo_collection, monkeypatch):  # noqa: F811
    from components.graph.tools import GraphTools

    def refuse(self, query, *args, **kwargs):
        raise ValueError("query *Nordvik* [see](http://127.0.0.1/x) is refused")

    monkeypatch.setattr(GraphTools, "entity_matches", refuse)
    at = run_page("entities.py")
    at.text_input[0].input("Nordvik").run()
    shown = [element.value for element in at.error]
    assert shown and "\\*Nordvik\\*" in shown[0] and "\\[see\\]" in shown[0]
