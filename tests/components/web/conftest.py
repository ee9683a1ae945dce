"""Fixtures of the web source's tests: the Firecrawl contract server and components pointed at it."""

from __future__ import annotations

import pytest

from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures


@pytest.fixture()
def firecrawl_key(firecrawl_server, monkeypatch):  # noqa: F811
    """FIRECRAWL_API_KEY set to the key the contract server expects."""
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    return firecrawl_server.api_key
