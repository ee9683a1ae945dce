import pytest

from components.contracts import SOURCE_NAMES, check_sources, source_selected


class TestSourceSelected:
    @pytest.mark.parametrize(
        "sources,name,expected",
        [
            (None, "web", True),  # no selection asks every source
            (["kb"], "kb", True),
            (["kb"], "web", False),
            ([" KB ", "Graph"], "graph", True),  # case and spaces do not matter
            (["auto"], "arxiv", True),
            (["all"], "memory", True),
            ([], "kb", False),
        ],
    )
    def test_rule(self, sources, name, expected):
        assert source_selected(sources, name) is expected


class TestCheckSources:
    @pytest.mark.parametrize(
        "sources,expected",
        [
            (None, None),
            ([" KB", "web", "kb"], ["kb", "web"]),
            (["auto"], ["auto"]),
            (["auto", "Web"], ["auto", "web"]),
            (["all"], ["kb", "graph", "web", "arxiv", "memory"]),
            (["ALL", "kb"], ["kb", "graph", "web", "arxiv", "memory"]),
        ],
    )
    def test_names_auto_and_all(self, sources, expected):
        assert check_sources(sources) == expected

    @pytest.mark.parametrize(
        "sources,message",
        [
            (["kb", "tv"], "Unknown source tv; choose from kb, graph, web, arxiv, memory, auto"),
            ([" ", ""], "No source selected"),
        ],
    )
    def test_bad_selection_is_one_sentence(self, sources, message):
        with pytest.raises(ValueError, match=message):
            check_sources(sources)

    def test_every_selection_the_ask_page_offers_is_accepted(self):
        # The app's source picker is the fourth place a selection is made; it must offer only what the rule takes.
        import ast
        from pathlib import Path

        page = Path(__file__).resolve().parents[3] / "app" / "pages" / "ask.py"
        labels = next(
            node.value
            for node in ast.walk(ast.parse(page.read_text()))
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SOURCE_LABELS"
        )
        offered = [key.value for key in labels.keys]
        assert check_sources(offered)
        assert {"auto", *SOURCE_NAMES} <= set(offered)
