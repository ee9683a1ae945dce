"""Names that resolve to an inside address, for the address-policy tests (every other name resolves as the suite's
stub resolver says)."""

from __future__ import annotations

import pytest

from components.tools import public_address


def resolve_inside(monkeypatch: pytest.MonkeyPatch, host: str, address: str = "192.168.1.20") -> None:
    """Make `host` resolve to `address` (a private one by default) for the address policy."""
    real = public_address.resolve

    def resolve(name: str, port: int) -> list[str]:
        return [address] if name == host else real(name, port)

    monkeypatch.setattr(public_address, "resolve", resolve)
