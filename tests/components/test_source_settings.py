"""The research sources refuse bad settings when they are made, with a message naming the setting."""

from __future__ import annotations

import pytest

from components.arxiv import ArxivSearch
from components.graph.graph_search import GraphSearch
from components.web import WebSearch


@pytest.mark.parametrize(
    ("source", "kwargs", "match"),
    [
        (ArxivSearch, {"num_results": 0}, "num_results"),
        (ArxivSearch, {"sort_by": "citations"}, "sort_by"),
        (ArxivSearch, {"date_from": "yesterday"}, "date_from"),
        (ArxivSearch, {"date_from": "2024-02-01", "date_to": "2024-01-01"}, "after"),
        (ArxivSearch, {"categories": "cs.CL"}, "categories"),
        (WebSearch, {"num_results": 0}, "num_results"),
        (WebSearch, {"page_timeout_s": 0}, "page_timeout_s"),
        (WebSearch, {"languages": "en"}, "languages"),
        (WebSearch, {"max_chunks_per_page": 0}, "max_chunks_per_page"),
        (GraphSearch, {"top_k": 0}, "top_k"),
        (GraphSearch, {"facts_per_passage": 11}, "facts_per_passage"),
        (GraphSearch, {"damping": 1.0}, "damping"),
        (GraphSearch, {"timeout_s": 0}, "timeout_s"),
        (GraphSearch, {"collection": " "}, "collection"),
    ],
)
def test_init_validates(source, kwargs, match):
    with pytest.raises(ValueError, match=match):
        source(**kwargs)


def test_setting_or_takes_the_value_given_else_the_setting_read_now(monkeypatch: pytest.MonkeyPatch) -> None:
    from components.settings import reload_settings, setting_or

    monkeypatch.setenv("QUESTION_BUDGET_S", "12")
    reload_settings()
    try:
        assert setting_or(None, "question_budget_s") == 12.0
        assert setting_or(5.0, "question_budget_s") == 5.0
        assert setting_or(0.0, "question_budget_s") == 0.0  # a falsy value given is still the value given
        monkeypatch.setenv("QUESTION_BUDGET_S", "20")
        reload_settings()
        assert setting_or(None, "question_budget_s") == 20.0
    finally:
        monkeypatch.delenv("QUESTION_BUDGET_S")
        reload_settings()
