"""`EnvironmentProxies`: which proxy a URL goes through by HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY, read
with the standard library and matched without httpx's private helpers. Host names are invented; nothing connects."""

from __future__ import annotations

import pytest

from components.resilience.proxies import EnvironmentProxies, NoProxyEntry
from tests.components.resilience.proxy_environment import PROXY_VARIABLES

PROXY = "http://127.0.0.1:3128"


def choice(no_proxy: str, url: str) -> str | None:
    return EnvironmentProxies.from_settings({"all": PROXY, "no": no_proxy}).proxy_for(url)


@pytest.mark.parametrize(
    ("no_proxy", "url", "direct"),
    [
        # A host name covers itself and the names under it, at a label boundary only.
        ("quorvane.test", "http://quorvane.test/", True),
        ("quorvane.test", "https://api.eu.quorvane.test/v1", True),
        ("quorvane.test", "http://notquorvane.test/", False),
        ("quorvane.test", "http://quorvane.test.brelloway.test/", False),
        # A leading dot (or `*.`): only the names under it.
        (".quorvane.test", "http://api.quorvane.test/", True),
        (".quorvane.test", "http://quorvane.test/", False),
        ("*.quorvane.test", "http://api.quorvane.test/", True),
        ("*.quorvane.test", "http://quorvane.test/", False),
        # Case-insensitive on both sides, a trailing dot ignored.
        ("QUORVANE.Test", "http://Api.quorvane.TEST/", True),
        ("quorvane.test.", "http://api.quorvane.test./", True),
        # IP addresses and CIDR ranges, IPv4 and IPv6.
        ("10.20.30.40", "http://10.20.30.40/", True),
        ("10.20.30.40", "http://10.20.30.41/", False),
        ("10.20.0.0/16", "http://10.20.255.1:8080/", True),
        ("10.20.0.0/16", "http://10.21.0.1/", False),
        ("10.20.0.0/16", "http://10.20.quorvane.test/", False),  # a name is not an address in the range
        ("fd00::/8", "http://[fd12:3456::1]/", True),
        ("fd00::/8", "http://[fe80::1]/", False),
        ("[fd00::/8]", "http://[fd12::1]/", True),
        ("10.0.0.0/8", "http://[fd12::1]/", False),  # another IP version
        # Ports: the written one, or the scheme's default one left implicit.
        ("quorvane.test:8443", "https://api.quorvane.test:8443/", True),
        ("quorvane.test:8443", "https://api.quorvane.test/", False),
        ("quorvane.test:443", "https://quorvane.test/", True),
        ("quorvane.test:443", "http://quorvane.test/", False),
        ("10.20.0.0/16:8080", "http://10.20.1.1:8080/", True),
        ("10.20.0.0/16:8080", "http://10.20.1.1/", False),
        ("10.20.30.40:8080", "http://10.20.30.40:8080/", True),
        ("10.20.30.40:8080", "http://10.20.30.40:8081/", False),
        ("[fd00::7]:8080", "http://[fd00::7]:8080/", True),
        ("[fd00::7]:8080", "http://[fd00::7]:9090/", False),
        # A scheme restricts the entry to it.
        ("https://quorvane.test", "https://quorvane.test/", True),
        ("https://quorvane.test", "http://quorvane.test/", False),
        # `*` anywhere in the list: everything directly.
        ("*", "http://quorvane.test/", True),
        ("brelloway.test, * ,quorvane.test", "https://api.zentrafel.test/", True),
        # Several entries, blanks and unreadable ones skipped.
        (" , brelloway.test ,, quorvane.test:notaport, .", "http://api.brelloway.test/", True),
        (" , brelloway.test ,, quorvane.test:notaport, .", "http://quorvane.test/", False),
        ("", "http://quorvane.test/", False),
    ],
)
def test_no_proxy_entries(no_proxy: str, url: str, direct: bool) -> None:
    assert choice(no_proxy, url) == (None if direct else PROXY)


def test_the_scheme_proxy_comes_before_all_proxy() -> None:
    proxies = EnvironmentProxies.from_settings(
        {"http": "http://127.0.0.1:3001", "https": "127.0.0.1:3002", "all": "socks5://127.0.0.1:3003"}
    )
    assert proxies.proxy_for("http://quorvane.test/") == "http://127.0.0.1:3001"
    assert proxies.proxy_for("https://quorvane.test/") == "http://127.0.0.1:3002"  # no scheme written: http://
    assert (
        EnvironmentProxies.from_settings({"http": "http://127.0.0.1:3001", "all": "http://127.0.0.1:3003"}).proxy_for(
            "https://quorvane.test/"
        )
        == "http://127.0.0.1:3003"
    )
    assert (
        EnvironmentProxies.from_settings({"http": "http://127.0.0.1:3001"}).proxy_for("https://quorvane.test/") is None
    )
    assert proxies.urls() == {"http://127.0.0.1:3001", "http://127.0.0.1:3002", "socks5://127.0.0.1:3003"}


def test_no_proxy_star_leaves_no_proxy_to_mount() -> None:
    proxies = EnvironmentProxies.from_settings({"http": PROXY, "no": "*"})
    assert proxies.urls() == set()
    assert proxies.proxy_for("http://quorvane.test/") is None


def test_read_from_the_environment_lower_case_first(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3001")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:3002")
    monkeypatch.setenv("NO_PROXY", "quorvane.test")
    proxies = EnvironmentProxies.from_environment()
    assert proxies.proxy_for("http://brelloway.test/") == "http://127.0.0.1:3002"
    assert proxies.proxy_for("http://api.quorvane.test/") is None


def test_an_entry_naming_nothing_is_none() -> None:
    assert NoProxyEntry.parse("  ") is None
    assert NoProxyEntry.parse("quorvane.test:http") is None
    assert NoProxyEntry.parse("[fd00::7]x") is None
    assert NoProxyEntry.parse("*.") is None
    assert NoProxyEntry.parse(".") is None
    assert NoProxyEntry.parse("api.*.quorvane.test") is None
