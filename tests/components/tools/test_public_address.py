"""The SSRF suite: only globally routable unicast addresses pass, for every resolved address and every redirect.

The resolver is stubbed throughout: no test here asks real DNS or sends a request beyond 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from components.resilience import SourceError
from components.tools import public_address
from components.tools.fetch_page import FetchPage, check_url
from components.tools.public_address import RefusedAddress, parse_literal, public_addresses, refused_reason
from tests.contract_servers.pages import PageServer, html_page

REFUSED = {
    # loopback in every notation
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "::1": "loopback",
    "::ffff:127.0.0.1": "IPv4-mapped",
    "::127.0.0.1": "IPv4-compatible",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    # private
    "10.0.0.1": "private",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "192.168.1.1": "private",
    "::ffff:10.0.0.1": "IPv4-mapped",
    # link-local and metadata
    "169.254.1.1": "link-local",
    "fe80::1": "link-local",
    "169.254.169.254": "metadata",
    "169.254.170.2": "metadata",
    "100.100.100.200": "metadata",
    "168.63.129.16": "metadata",
    "fd00:ec2::254": "metadata",
    # carrier-grade NAT
    "100.64.0.1": "carrier-grade NAT",
    "100.127.255.254": "carrier-grade NAT",
    # 6to4, Teredo and NAT64 embedding inside IPv4
    "2002:7f00:1::1": "6to4 address embedding a loopback",
    "2002:a00:1::1": "6to4 address embedding a private",
    "2002:a9fe:a9fe::1": "6to4 address embedding a cloud metadata",
    "2002:6440:1::1": "6to4 address embedding a carrier-grade NAT",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
    "64:ff9b::a00:1": "NAT64 address embedding a private",
    # unique-local, site-local, multicast, reserved, documentation and benchmarking
    "fc00::1": "unique-local",
    "fd12:3456:789a::1": "unique-local",
    "fec0::1": "site-local",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "ff02::1": "multicast",
    "ff0e::1": "multicast",
    "240.0.0.1": "private",
    "255.255.255.255": "private",
    "192.0.2.1": "private",
    "198.18.0.1": "private",
    "2001:db8::1": "private",
    "100::1": "private",  # discard-only
}

PUBLIC = ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001:80b::200e", "2002:808:808::1"]


@pytest.fixture(autouse=True)
def no_real_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Every lookup answers from this table; an unknown name fails like NXDOMAIN, never reaching real DNS."""
    table: dict[str, list[str]] = {}

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(f"stub resolver: {host} is unknown")
        return table[host]

    monkeypatch.setattr(public_address, "resolve", resolve)
    return table


class TestAddressClasses:
    @pytest.mark.parametrize(("address", "why"), sorted(REFUSED.items()))
    def test_refused_classes(self, address: str, why: str) -> None:
        reason = refused_reason(parse_literal(address))
        assert reason is not None and why in reason

    @pytest.mark.parametrize("address", PUBLIC)
    def test_public_unicast_passes(self, address: str) -> None:
        assert refused_reason(parse_literal(address)) is None

    @pytest.mark.parametrize(
        "literal",
        [
            "127.1",
            "0x7f.0.0.1",
            "0x7f000001",
            "2130706433",
            "0177.0.0.1",
            "017700000001",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[0:0:0:0:0:0:0:1]",
            "127.000.000.001",
        ],
    )
    def test_loopback_in_every_notation_is_parsed_and_refused(self, literal: str) -> None:
        with pytest.raises(RefusedAddress, match="loopback|IPv4-mapped"):
            public_addresses(literal, 80)

    @pytest.mark.parametrize(
        "name", ["localhost", "LOCALHOST.", "api.localhost", "metadata.google.internal", "metadata"]
    )
    def test_local_and_metadata_names_are_refused_without_lookup(self, name: str) -> None:
        with pytest.raises(RefusedAddress, match="local or metadata"):
            public_addresses(name, 80)

    def test_every_resolved_address_must_be_public(self, no_real_dns: dict[str, list[str]]) -> None:
        no_real_dns["mixed.example"] = ["93.184.216.34", "10.0.0.7"]
        with pytest.raises(RefusedAddress, match="private address"):
            public_addresses("mixed.example", 443)
        no_real_dns["public.example"] = ["93.184.216.34", "2606:4700::1111"]
        assert [str(a) for a in public_addresses("public.example", 443)] == ["93.184.216.34", "2606:4700::1111"]

    @pytest.mark.parametrize("address", sorted(REFUSED))
    def test_a_url_naming_or_resolving_to_any_refused_class_is_refused(self, address: str, no_real_dns) -> None:
        no_real_dns["rebind.example"] = [address]
        literal = f"[{address}]" if ":" in address else address
        for url in ("http://rebind.example/", f"http://{literal}/"):
            with pytest.raises(SourceError, match="ALLOW_PRIVATE_ADDRESSES"):
                check_url(url, allow_private=False)

    def test_an_unresolvable_name_is_refused(self) -> None:
        with pytest.raises(SourceError, match="does not resolve"):
            check_url("http://nowhere.example/", allow_private=False)

    @pytest.mark.parametrize(
        "url",
        [
            # urlsplit reads the host as the name after '@'; WHATWG parsers read '\\' as '/' and the host before it.
            "http://169.254.169.254\\@quillon.example/latest/meta-data/",
            "http://quillon.example\\@127.0.0.1/",
            "http://quillon.example/a\\b",
            "http://quillon.example /",
            "http://quillon.example\t.evil/",
            "http://quillon.example/\nHost: 10.0.0.1",
            "http://quillon.example/\x00",
            "http://quillon.example/\x7f",
            "http://quillon.example/\u00a0",
        ],
    )
    def test_a_url_with_a_backslash_whitespace_or_control_character_is_refused(self, url: str, no_real_dns) -> None:
        no_real_dns["quillon.example"] = ["93.184.216.34"]
        with pytest.raises(RefusedAddress, match=r"contains a backslash, whitespace or a control character"):
            public_address.check_url(url, allow_private=False)
        with pytest.raises(RefusedAddress, match=r"contains a backslash"):
            public_address.check_url(url, allow_private=True)
        with pytest.raises(SourceError, match=r"fetching it is refused\.$"):
            check_url(url, allow_private=False)

    @pytest.mark.parametrize(
        ("url", "rebuilt"),
        [
            ("https://Quillon.EXAMPLE/guide?x=1#part", "https://quillon.example/guide?x=1#part"),
            ("https://someone:secret@quillon.example:8443/a/b", "https://quillon.example:8443/a/b"),
            ("http://[2606:4700::1111]/notes", "http://[2606:4700::1111]/notes"),
            ("http://[2606:4700::1111]:8080", "http://[2606:4700::1111]:8080"),
        ],
    )
    def test_the_url_a_service_is_sent_is_rebuilt_from_the_checked_parts(self, url: str, rebuilt: str) -> None:
        assert public_address.canonical_url(url) == rebuilt


@pytest.fixture(scope="module")
def redirect_server() -> Iterator[PageServer]:
    """Redirects at `/go?to=URL`; a page at `/page`."""
    with PageServer({"/page": html_page("<html><title>ok</title><body>fine</body></html>")}) as server:
        yield server


class TestRedirects:
    @pytest.fixture(autouse=True)
    def loopback_stands_for_public(self, monkeypatch: pytest.MonkeyPatch, no_real_dns) -> None:
        # The contract server's 127.0.0.1 plays a public host; every other address keeps its real classification.
        real = public_address.refused_reason
        monkeypatch.setattr(public_address, "refused_reason", lambda ip: None if str(ip) == "127.0.0.1" else real(ip))
        no_real_dns["public.example"] = ["127.0.0.1"]

    @pytest.mark.parametrize(
        "target",
        [
            "http://127.0.0.2/",
            "http://[::1]/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.100.100.200/",
            "http://100.64.0.1/",
            "http://[2002:a00:1::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[fd00::1]/",
            "http://0x7f.0.0.2/",
            "http://rebind.example/",
            "http://localhost/",
            "http://[fe80::1]/",
        ],
    )
    def test_a_redirect_to_each_refused_class_is_stopped(self, target: str, redirect_server, no_real_dns) -> None:
        no_real_dns["rebind.example"] = ["192.168.0.1"]
        url = f"http://public.example:{redirect_server.port}/go?to={target}"
        before = len(redirect_server.requests)
        with pytest.raises(SourceError, match="refused"):
            FetchPage(allow_private_addresses=False).run(url=url)
        assert len(redirect_server.requests) == before + 1  # the first hop only; the target was never contacted

    def test_a_redirect_chain_to_a_public_page_is_followed(self, redirect_server) -> None:
        hop = f"http://public.example:{redirect_server.port}"
        result = FetchPage(allow_private_addresses=False).run(url=f"{hop}/go?to={hop}/go%3Fto%3D{hop}/page")
        assert result["title"] == "ok" and result["final_url"] == f"{hop}/page"
