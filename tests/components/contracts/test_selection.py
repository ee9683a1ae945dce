import pytest

from components.contracts import source_selected


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
