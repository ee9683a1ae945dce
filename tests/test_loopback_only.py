"""The test session's network guard: a connection to an address outside this machine fails at once, so a test
whose address check regressed fails instead of reaching a real host; loopback keeps working."""

from __future__ import annotations

import socket

import pytest

from tests.contract_servers.pages import PageServer


@pytest.mark.parametrize("host", ["169.254.169.254", "10.0.0.1", "192.0.2.7", "2001:db8::1", "papers.example.test"])
def test_a_connection_outside_this_machine_is_refused_before_it_is_made(host: str) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        with pytest.raises(OSError, match="tests connect only to loopback addresses"):
            sock.connect((host, 80))
        assert sock.connect_ex((host, 80)) != 0


def test_loopback_connections_still_work() -> None:
    with PageServer() as server, socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as sock:
        assert sock.getpeername()[0] == "127.0.0.1"
