"""Fixtures of the memory tests: the Zep contract server, and Zep settings that never reach a real server."""

from __future__ import annotations

import pytest

from tests.contract_servers.zep import zep_server, zep_server_session  # noqa: F401 - fixtures


@pytest.fixture()
def zep_env(monkeypatch: pytest.MonkeyPatch, zep_server):  # noqa: ANN001, F811
    """ZEP_API_KEY for the contract server; ZEP_API_URL removed so zep-python uses the URL it is given."""
    monkeypatch.delenv("ZEP_API_URL", raising=False)
    monkeypatch.setenv("ZEP_API_KEY", zep_server.api_key)
    return zep_server
