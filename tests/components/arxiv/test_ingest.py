"""`ingest_arxiv` and the `research arxiv` commands against the arXiv contract server."""

from __future__ import annotations

import pytest

from components.arxiv import ingest_arxiv
from pipelines.cli import main


@pytest.mark.integration
class TestIngestArxiv:
    def test_papers_land_with_their_arxiv_metadata(self, arxiv_settings, store):
        from ingest.ingestor import Ingestor

        outcome = ingest_arxiv(
            ["2005.11401", "arXiv:1706.03762v7", "9999.99999"], ingestor=Ingestor(store=store, hooks=[])
        )
        assert [paper.paper_id for paper in outcome.papers] == ["2005.11401", "1706.03762"]
        assert outcome.not_found == ["9999.99999"]
        assert outcome.report.ok and len(outcome.report.added) == 2
        record = store.find_by_source("arxiv:2005.11401")
        assert record.doc_type == "arxiv"
        assert record.url == "https://arxiv.org/abs/2005.11401"
        assert str(record.date) == "2020-05-22"
        assert record.metadata["authors"][0] == "Patrick Lewis"
        assert record.metadata["arxiv_categories"] == ["cs.CL", "cs.LG"]
        assert record.metadata["text_source"] == "abstract"
        _, chunks = store.get_document(record.document_id)
        assert "non-parametric memory" in " ".join(chunk.text for chunk in chunks)

    def test_full_text_when_asked_and_the_abstract_when_the_pdf_fails(self, arxiv_settings, arxiv_server, store):
        from ingest.ingestor import Ingestor

        arxiv_server.fail("500", path="/pdf/1706.03762")
        outcome = ingest_arxiv(
            ["2005.11401", "1706.03762"], full_text=True, ingestor=Ingestor(store=store, hooks=[]), allow_private=True
        )  # the contract server's PDF links name 127.0.0.1
        assert outcome.full_text == {"2005.11401": True, "1706.03762": False}
        assert outcome.failed and outcome.failed[0][0] == "1706.03762"
        _, chunks = store.get_document(store.find_by_source("arxiv:2005.11401").document_id)
        assert "marginalises over them" in " ".join(chunk.text for chunk in chunks)
        assert store.find_by_source("arxiv:1706.03762").metadata["text_source"] == "abstract"

    def test_bad_identifiers_and_an_unreachable_api_are_one_sentence(self, arxiv_settings, arxiv_server, store):
        with pytest.raises(ValueError, match="not an arXiv identifier"):
            ingest_arxiv(["not-an-id"], ingestor=object())
        arxiv_server.fail("500", path="/api/query")
        with pytest.raises(ValueError, match="HTTP 500"):
            ingest_arxiv(["2005.11401"], ingestor=object())


@pytest.mark.integration
class TestArxivCommands:
    def test_search(self, arxiv_settings, capsys):
        assert main(["arxiv", "search", "dense passage retrieval", "-n", "3"]) == 0
        out = capsys.readouterr().out
        assert "[1] 2004.04906  Dense Passage Retrieval for Open-Domain Question Answering" in out
        assert "https://arxiv.org/abs/2004.04906" in out
        assert "arxiv: success, 1 found" in out

    def test_search_errors_are_one_line(self, arxiv_settings, capsys):
        assert main(["arxiv", "search", "attention", "--from", "2020-02-30"]) == 1
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1] == (
            "research: arXiv search failed (error): date_from must be a date as YYYY-MM-DD, not '2020-02-30'"
        )
        assert "Traceback" not in err

    def test_bibtex(self, arxiv_settings, capsys):
        assert main(["arxiv", "bibtex", "https://arxiv.org/abs/1706.03762"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("@misc{vaswani2017attention,")
        assert main(["arxiv", "bibtex", "0000.00000"]) == 1
        assert "not found on arXiv: 0000.00000" in capsys.readouterr().err
