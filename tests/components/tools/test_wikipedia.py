"""WikipediaSummary: the MediaWiki Action API through its contract server."""

from __future__ import annotations

import pytest

from components.resilience import RetryableError, SourceError
from components.tools.wikipedia import WikipediaSummary


class TestWikipediaSummary:
    def test_init_and_serialisation(self) -> None:
        with pytest.raises(ValueError, match="http"):
            WikipediaSummary(api_url="ftp://x")
        tool = WikipediaSummary(api_url="http://127.0.0.1:1/w/api.php", timeout_s=2.0)
        assert WikipediaSummary.from_dict(tool.to_dict()).to_dict() == tool.to_dict()

    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            ({"timeout_s": 0}, "timeout_s must be positive, not 0"),
            ({"timeout_s": float("nan")}, "timeout_s must be positive, not nan"),
            ({"max_chars": 0}, "max_chars must be a positive integer, not 0"),
            ({"max_chars": 2.5}, "max_chars must be a positive integer, not 2.5"),
        ],
    )
    def test_a_bad_number_is_refused_naming_the_parameter(self, arguments: dict, message: str) -> None:
        with pytest.raises(ValueError, match=f"^{message}$"):
            WikipediaSummary(api_url="http://127.0.0.1:1/w/api.php", **arguments)

    def test_summary_of_an_article(self, wikipedia_server) -> None:  # noqa: ANN001
        result = WikipediaSummary(api_url=wikipedia_server.api_url).run(title="alan_Turing")
        assert result["found"] is True and result["title"] == "Alan Turing"
        assert result["summary"].startswith("Alan Turing was an English mathematician")
        assert result["url"] == "https://en.wikipedia.org/wiki/Alan_Turing"
        query = wikipedia_server.requests[-1]["query"]
        for part in ("action=query", "formatversion=2", "exintro=1", "explaintext=1", "redirects=1"):
            assert part in query

    def test_redirects_are_followed(self, wikipedia_server) -> None:  # noqa: ANN001
        result = WikipediaSummary(api_url=wikipedia_server.api_url).run(title="RAG")
        assert result["title"] == "Retrieval-augmented generation" and result["found"]

    def test_missing_article_is_not_found_not_an_error(self, wikipedia_server) -> None:  # noqa: ANN001
        result = WikipediaSummary(api_url=wikipedia_server.api_url).run(title="Nonexistent Article Xyz")
        assert result == {"title": "Nonexistent Article Xyz", "summary": "", "url": "", "found": False}

    def test_bad_titles_are_refused_before_any_request(self, wikipedia_server) -> None:  # noqa: ANN001
        tool = WikipediaSummary(api_url=wikipedia_server.api_url)
        with pytest.raises(SourceError, match="empty"):
            tool.run(title=" ")
        with pytest.raises(SourceError, match="not a valid Wikipedia title"):
            tool.run(title="a|b")
        assert wikipedia_server.requests == []

    def test_rate_limits_and_garbage_are_retryable(self, wikipedia_server) -> None:  # noqa: ANN001
        tool = WikipediaSummary(api_url=wikipedia_server.api_url)
        wikipedia_server.fail("429", times=1, retry_after=2)
        with pytest.raises(RetryableError) as caught:
            tool.run(title="PostgreSQL")
        assert caught.value.retry_after == 2 and caught.value.kind == "rate_limited"
        wikipedia_server.fail("malformed", times=1)
        with pytest.raises(RetryableError, match="malformed"):
            tool.run(title="PostgreSQL")
        assert tool.run(title="Postgres")["title"] == "PostgreSQL"

    def test_an_endless_answer_stops_at_the_byte_limit(self, wikipedia_server) -> None:  # noqa: ANN001
        from components.resilience.transport import BodyTooLarge

        wikipedia_server.fail("endless", times=1)
        with pytest.raises(BodyTooLarge, match="Wikipedia sent more than its 100,000-byte limit"):
            WikipediaSummary(api_url=wikipedia_server.api_url, max_response_bytes=100_000).run(title="PostgreSQL")
