"""Fixtures of the arXiv source's tests: the arXiv contract server, and settings pointed at it."""

from __future__ import annotations

import pytest

from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures


@pytest.fixture()
def arxiv_settings(arxiv_server, monkeypatch):  # noqa: F811
    """The settings with ARXIV_API_URL at the contract server and a short request interval."""
    from components.settings import reload_settings

    monkeypatch.setenv("ARXIV_API_URL", arxiv_server.url)
    monkeypatch.setenv("ARXIV_MIN_INTERVAL_S", "0.2")
    yield reload_settings()
    monkeypatch.undo()
    reload_settings()
