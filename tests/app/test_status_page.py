import os

import pytest

from tests.app.conftest import run_page


@pytest.mark.integration
class TestStatusPage:
    def test_reports_every_part_with_counts(self, app_env):
        at = run_page("status.py")
        assert any("Every required part is reachable" in element.value for element in at.success)
        text = " ".join(element.value for element in at.markdown)
        assert "knowledge base" in text and "embedder" in text and "generator" in text
        assert any(metric.label == "documents" for metric in at.metric)

    def test_unreachable_database_is_a_sentence_not_a_trace(self, app_env, monkeypatch):
        from components.settings import reload_settings

        monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2")
        reload_settings()
        try:
            at = run_page("status.py")
            assert any("unreachable" in element.value for element in at.error)
            text = " ".join(element.value for element in at.markdown)
            assert "unreachable" in text
        finally:
            os.environ.pop("DATABASE_URL", None)
            reload_settings()
