"""The CLI's tests answer in their own process: `research ask` must not find a server on the default port."""

from __future__ import annotations

import pytest

from tests.contract_servers import free_port


@pytest.fixture(autouse=True)
def no_server_at_the_configured_address(monkeypatch: pytest.MonkeyPatch):
    from components.settings import reload_settings

    monkeypatch.setenv("HAYHOOKS_PORT", str(free_port()))
    reload_settings()
    yield
    monkeypatch.undo()
    reload_settings()
