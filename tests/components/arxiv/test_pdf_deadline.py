"""Reading a paper's PDF ends at its timeout, counted over the whole download, not per read."""

from __future__ import annotations

import gzip
import time
from urllib.parse import quote

import pytest

from components.arxiv.access import pdf_text
from components.resilience import RetryableError, SourceError

pytestmark = pytest.mark.integration


def test_a_pdf_that_arrives_a_few_bytes_at_a_time_ends_at_the_timeout(arxiv_server) -> None:  # noqa: ANN001
    # Every read gets bytes within a tenth of a second, so only a deadline over the whole download ends it.
    arxiv_server.fail("drip", path="/pdf/2005.11401", delay_s=0.1)
    started = time.monotonic()
    with pytest.raises(RetryableError, match="did not arrive within 1 s"):
        pdf_text(f"{arxiv_server.base_url}/pdf/2005.11401", timeout_s=1.0, allow_private=True)
    assert 0.9 <= time.monotonic() - started < 4.0


def test_a_pdf_in_time_is_read_and_a_refused_one_is_one_sentence(arxiv_server) -> None:  # noqa: ANN001
    text = pdf_text(f"{arxiv_server.base_url}/pdf/2005.11401", timeout_s=5.0, allow_private=True)
    assert "marginalises over them" in text
    with pytest.raises(SourceError, match=r"^the PDF is not available \(HTTP 404\)$"):
        pdf_text(f"{arxiv_server.base_url}/pdf/9999.99999", timeout_s=5.0, allow_private=True)
    arxiv_server.fail("500", path="/pdf/2005.11401")
    with pytest.raises(RetryableError, match="^the PDF server answered HTTP 500$"):
        pdf_text(f"{arxiv_server.base_url}/pdf/2005.11401", timeout_s=5.0, allow_private=True)


def test_ingesting_full_text_keeps_the_abstract_when_the_pdf_is_late(arxiv_settings, arxiv_server, store) -> None:  # noqa: ANN001
    from components.arxiv import ingest_arxiv
    from ingest.ingestor import Ingestor

    ingestor = Ingestor(store=store, hooks=[])
    ingestor.warm_up()  # the embedding model's first load is not the PDF's time
    arxiv_server.fail("drip", path="/pdf/2005.11401", delay_s=0.1)
    started = time.monotonic()
    outcome = ingest_arxiv(["2005.11401"], full_text=True, ingestor=ingestor, timeout_s=1.5, allow_private=True)
    assert time.monotonic() - started < 8.0
    assert outcome.full_text == {"2005.11401": False}
    assert "did not arrive within 1.5 s" in outcome.failed[0][1]


def test_redirects_share_the_download_time(arxiv_server) -> None:  # noqa: ANN001
    # Three slow redirect hops, each well within the timeout alone, take longer than it together.
    from tests.contract_servers.pages import PageServer

    with PageServer() as mirror:
        mirror.fail("slow", path="/go", delay_s=0.5)
        url = f"{arxiv_server.base_url}/pdf/2005.11401"
        for _ in range(3):
            url = f"{mirror.base_url}/go?to={quote(url, safe='')}"
        started = time.monotonic()
        with pytest.raises(RetryableError, match="did not arrive within 1 s"):
            pdf_text(url, timeout_s=1.0, allow_private=True)
        assert time.monotonic() - started < 1.4


def test_a_body_compressed_unasked_is_capped_at_its_decoded_size() -> None:
    # Asked for an uncompressed body, the server gzips 40 MB of zeros into a few kilobytes anyway.
    from tests.contract_servers import Reply
    from tests.contract_servers.pages import PageServer

    packed = gzip.compress(bytes(40 * 1024 * 1024), compresslevel=1)
    route = Reply(200, packed, "application/pdf", headers={"Content-Encoding": "gzip"})
    with PageServer({"/packed.pdf": route}) as mirror, pytest.raises(SourceError, match="larger than 30 MB"):
        pdf_text(f"{mirror.base_url}/packed.pdf", timeout_s=10.0, allow_private=True)
