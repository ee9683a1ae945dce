"""A paper's PDF link comes from the arXiv feed (or a mirror's), so it is checked by the address policy like every URL
the product fetches: the link itself and every redirect hop. A refused link is a clear status and the abstract
stands in; nothing is sent to the refused address."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from components.arxiv import ArxivSearch, ingest_arxiv
from components.arxiv.access import pdf_text
from components.contracts import StatusKind
from components.resilience import SourceError
from components.tools import public_address
from tests.contract_servers.pages import PageServer
from tests.inside_names import resolve_inside

pytestmark = pytest.mark.integration

INSIDE = [
    ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
    ("http://10.0.0.1/pdf/2005.11401", "a private address"),
    ("http://[::1]/pdf/2005.11401", "a loopback address"),
    ("https://papers.quorvane.test/pdf/2005.11401", "a private address"),  # a name resolving to 192.168.1.20
]


@pytest.fixture(autouse=True)
def inside_name(monkeypatch: pytest.MonkeyPatch) -> None:
    resolve_inside(monkeypatch, "papers.quorvane.test")


@pytest.fixture()
def loopback_stands_for_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contract servers' 127.0.0.1 plays a public host; every other address keeps its real classification."""
    real = public_address.refused_reason
    monkeypatch.setattr(public_address, "refused_reason", lambda ip: None if str(ip) == "127.0.0.1" else real(ip))


def pdf_requests(server) -> list[dict]:  # noqa: ANN001
    return [request for request in server.requests if request["path"].startswith("/pdf/")]


@pytest.mark.parametrize(("url", "reason"), INSIDE)
def test_a_pdf_link_to_an_inside_address_is_refused_in_one_sentence(url: str, reason: str) -> None:
    with pytest.raises(SourceError, match=rf"^the PDF link was refused: .*{reason}.*ALLOW_PRIVATE_ADDRESSES is set$"):
        pdf_text(url, timeout_s=2.0)


def test_the_contract_servers_loopback_link_is_refused_unless_private_addresses_are_allowed(arxiv_server) -> None:  # noqa: ANN001
    url = f"{arxiv_server.base_url}/pdf/2005.11401"
    with pytest.raises(SourceError, match="a loopback address"):
        pdf_text(url, timeout_s=2.0)
    assert pdf_requests(arxiv_server) == []
    assert "marginalises over them" in pdf_text(url, timeout_s=5.0, allow_private=True)


@pytest.mark.parametrize(("target", "reason"), INSIDE)
def test_every_redirect_hop_is_checked(arxiv_server, loopback_stands_for_public, target: str, reason: str) -> None:  # noqa: ANN001
    with PageServer() as mirror:
        # Two public hops, then one to the inside address: refused before it is asked.
        url = f"{mirror.base_url}/go?to={quote(target, safe='')}"
        url = f"{mirror.base_url}/go?to={quote(url, safe='')}"
        with pytest.raises(SourceError, match=reason):
            pdf_text(url, timeout_s=2.0)
        assert len(mirror.requests) == 2
        # The same hops ending at a public PDF are followed.
        good = f"{mirror.base_url}/go?to={quote(f'{arxiv_server.base_url}/pdf/2005.11401', safe='')}"
        assert "marginalises over them" in pdf_text(good, timeout_s=5.0)


def make(server, **kwargs) -> ArxivSearch:  # noqa: ANN001
    component = ArxivSearch(api_url=server.url, timeout_s=5.0, retries=0, min_interval_s=0.0, full_text=True, **kwargs)
    component.warm_up()
    return component


class TestArxivSearch:
    def test_a_refused_pdf_link_is_the_status_and_the_abstract_stands_in(self, arxiv_server) -> None:  # noqa: ANN001
        result = make(arxiv_server, allow_private_addresses=False).run(query="retrieval augmented generation")
        status, documents = result["status"], result["documents"]
        assert status.status is StatusKind.PARTIAL, status.message
        assert "2005.11401 (the PDF link was refused:" in status.message
        assert "a loopback address" in status.message and "used the abstract" in status.message
        assert {doc.meta["text_source"] for doc in documents} == {"abstract"}
        assert "2005.11401" in {doc.meta["paper_id"] for doc in documents}
        assert pdf_requests(arxiv_server) == []

    def test_allowed_private_addresses_read_the_pdf(self, arxiv_server) -> None:  # noqa: ANN001
        result = make(arxiv_server, allow_private_addresses=True).run(query="retrieval augmented generation")
        assert "full_text" in {doc.meta["text_source"] for doc in result["documents"]}
        assert pdf_requests(arxiv_server)

    def test_the_setting_is_read_when_built_and_serialised(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from components.settings import reload_settings

        url = "http://127.0.0.1:9/api/query"
        assert ArxivSearch(api_url=url).allow_private_addresses is False
        monkeypatch.setenv("ALLOW_PRIVATE_ADDRESSES", "true")
        reload_settings()
        try:
            component = ArxivSearch(api_url=url)
        finally:
            monkeypatch.delenv("ALLOW_PRIVATE_ADDRESSES")
            reload_settings()
        assert component.allow_private_addresses is True
        data = component.to_dict()
        assert data["init_parameters"]["allow_private_addresses"] is True
        assert ArxivSearch.from_dict(data).allow_private_addresses is True


def test_ingesting_full_text_from_a_refused_link_keeps_the_abstract(arxiv_settings, arxiv_server, store) -> None:  # noqa: ANN001
    from ingest.ingestor import Ingestor

    outcome = ingest_arxiv(
        ["2005.11401"], full_text=True, ingestor=Ingestor(store=store, hooks=[]), allow_private=False
    )
    assert outcome.full_text == {"2005.11401": False}
    assert "the PDF link was refused" in outcome.failed[0][1] and "ingested the abstract" in outcome.failed[0][1]
    record = store.find_by_source("arxiv:2005.11401")
    assert record.metadata["text_source"] == "abstract"
    assert pdf_requests(arxiv_server) == []
