from __future__ import annotations

import pytest
from haystack.dataclasses import ChatMessage, StreamingChunk

from components.contracts import RankedDocuments, StatusKind
from components.generation import ResearchGenerator
from components.generation.answer_wording import NO_SOURCES_ANSWER
from components.generation.question_analyzer import QuestionAnalyzer
from tests.components.ranking.chunks import kb_document
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures

DOCUMENTS = [
    kb_document("sb", "The Kestrel Rovers won the Brambleford Cup in 1911 after a replay.", 0.7),
    kb_document("pa", "Paris is the capital of France.", 0.1),
]
QUESTION = "Who won the Brambleford Cup?"
ANSWER = "The Kestrel Rovers won the Brambleford Cup [1]."
PROMPT = [ChatMessage.from_system("Answer with citations."), ChatMessage.from_user("[1] ... Question: Who won?")]


@pytest.fixture()
def server(chat_server, monkeypatch):  # noqa: F811
    """The chat contract server answering ANSWER; it refuses any key but its own (HTTP 401)."""
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    chat_server.answer = ANSWER
    return chat_server


def _chat(url: str, **kwargs) -> ResearchGenerator:
    # The fallback's short answer leads whatever its confidence (threshold 0): these tests read the fallback.
    kwargs.setdefault("confidence_threshold", 0.0)
    generator = ResearchGenerator(generator="openai", model="contract-model", api_base_url=url, **kwargs)
    generator.warm_up()
    return generator


class TestResearchGenerator:
    def test_init_validates(self):
        with pytest.raises(ValueError, match="generator must be one of"):
            ResearchGenerator(generator="gpt")
        with pytest.raises(ValueError, match="timeout_s"):
            ResearchGenerator(timeout_s=0)
        with pytest.raises(ValueError, match="retries"):
            ResearchGenerator(retries=7)

    def test_to_dict_from_dict_never_holds_the_key(self, monkeypatch):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
        generator = ResearchGenerator(generator="openai", model="m", api_base_url="http://127.0.0.1:9/v1")
        generator.warm_up()
        data = generator.to_dict()
        assert "sk-secret-value" not in repr(data)
        assert data["init_parameters"]["generator"] == "openai"
        assert ResearchGenerator.from_dict(data).to_dict() == data

    def test_extractive_by_default_streams_its_answer(self, settings):
        generator = ResearchGenerator(confidence_threshold=0.0)
        generator.warm_up()
        assert generator.kind == "extractive"
        chunks: list[StreamingChunk] = []
        result = generator.run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION, streaming_callback=chunks.append)
        # The extractive answer's confidence and parts travel with it.
        assert 0.0 < result["short_answer_confidence"] < 1.0
        assert [part["sure"] for part in result["parts"]] == [True]
        # "Who won": the sentence's subject leads as the short answer, then the sentence it comes from.
        assert result["replies"] == [
            "The Kestrel Rovers [1]. The Kestrel Rovers won the Brambleford Cup in 1911 after a replay [1]."
        ]
        assert result["short_answer"] == "The Kestrel Rovers"
        assert result["status"].status is StatusKind.SUCCESS and result["status"].source == "generator"
        assert "".join(chunk.content for chunk in chunks) == result["replies"][0]

    def test_the_rankers_view_answers_as_its_list_does(self, settings):
        generator = ResearchGenerator(confidence_threshold=0.0)
        generator.warm_up()
        shared = generator.run(messages=PROMPT, documents=RankedDocuments(tuple(DOCUMENTS)), query=QUESTION)
        listed = generator.run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        assert shared["replies"] == listed["replies"] and shared["parts"] == listed["parts"]
        assert shared["short_answer"] == "The Kestrel Rovers"

    def test_the_extractive_generator_reads_no_prompt_and_answers_without_one(self, settings):
        generator = ResearchGenerator(confidence_threshold=0.0)
        assert generator.unread_inputs() == frozenset({"messages"})  # a catalog leaves the prompt builder out
        prompted = generator.run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        bare = generator.run(documents=DOCUMENTS, query=QUESTION)
        assert bare["replies"] == prompted["replies"] and bare["parts"] == prompted["parts"]

    def test_the_generator_makes_the_question_analysis_the_analyzer_would_give_it(self, settings):
        generator = ResearchGenerator(confidence_threshold=0.0)
        source, maker = generator.made_inputs()["analysis"]
        assert source == "query" and maker is QuestionAnalyzer  # a catalog may leave the analyzer out
        analysis = QuestionAnalyzer().run(query=QUESTION)["analysis"]
        given = generator.run(documents=DOCUMENTS, query=QUESTION, analysis=analysis)
        made = generator.run(documents=DOCUMENTS, query=QUESTION)
        assert made["replies"] == given["replies"] and made["parts"] == given["parts"]

    def test_a_chat_model_reads_its_prompt_and_without_one_falls_back(self, server):
        generator = _chat(server.base_url_v1)
        assert generator.unread_inputs() == frozenset()
        result = generator.run(documents=DOCUMENTS, query=QUESTION)
        assert result["status"].status is StatusKind.ERROR and "no prompt" in result["status"].message
        assert result["replies"][0].startswith("The Kestrel Rovers")

    def test_chat_answer_through_the_real_client(self, server):
        result = _chat(server.base_url_v1).run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        assert result["replies"] == [ANSWER]
        assert result["status"].status is StatusKind.SUCCESS
        sent = server.chat_requests()[0]
        assert sent["model"] == "contract-model"
        assert sent["messages"][0] == {"role": "system", "content": "Answer with citations."}

    def test_a_refused_key_is_a_clear_status(self, server, monkeypatch):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key")
        result = _chat(server.base_url_v1, retries=1).run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        assert result["status"].status is StatusKind.ERROR
        assert "not authorised (HTTP 401)" in result["status"].message
        assert len(server.chat_requests()) == 1  # an authorisation failure is not retried
        assert result["replies"][0].endswith("[1].")  # the extractive answer stands in

    def test_chat_streaming_delivers_every_piece(self, server):
        pieces: list[str] = []
        result = _chat(server.base_url_v1).run(
            messages=PROMPT, documents=DOCUMENTS, query=QUESTION, streaming_callback=lambda c: pieces.append(c.content)
        )
        assert server.chat_requests()[0]["stream"] is True
        assert "".join(pieces) == ANSWER and len(pieces) > 3  # word by word, not in one piece
        assert result["replies"] == [ANSWER]

    def test_rate_limit_is_retried_after_the_servers_wait(self, server):
        server.fail("429", times=1, retry_after=0.2)
        result = _chat(server.base_url_v1, retries=1).run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        assert result["replies"] == [ANSWER]
        assert result["status"].status is StatusKind.SUCCESS and result["status"].attempts == 2
        assert len(server.chat_requests()) == 2
        first, second = (request["at"] for request in server.requests)
        assert second - first >= 0.19  # the server's Retry-After was honoured

    @pytest.mark.parametrize(
        ("failures", "kind", "words"),
        [
            (("500", 2), StatusKind.ERROR, "server error (HTTP 500)"),
            (("429", 2), StatusKind.ERROR, "rate limited (HTTP 429)"),
            (("malformed", 1), StatusKind.ERROR, "the chat model failed"),
        ],
    )
    def test_failures_give_a_status_and_an_extractive_answer(self, server, failures, kind, words):
        mode, times = failures
        server.fail(mode, times=times, retry_after=0.05 if mode == "429" else None)
        result = _chat(server.base_url_v1, retries=1).run(messages=PROMPT, documents=DOCUMENTS, query=QUESTION)
        assert result["status"].status is kind
        assert words in result["status"].message
        assert "extractive answer instead" in result["status"].message
        assert result["replies"][0].endswith("[1].")

    def test_slow_server_times_out(self, server):
        server.fail("slow", times=1, delay_s=3.0)
        result = _chat(server.base_url_v1, timeout_s=0.5, retries=0).run(
            messages=PROMPT, documents=DOCUMENTS, query=QUESTION
        )
        assert result["status"].status is StatusKind.TIMEOUT
        assert "did not answer within 0.5 s" in result["status"].message
        assert result["replies"][0].startswith("The Kestrel Rovers")

    def test_missing_key_is_a_clear_status(self, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        generator = ResearchGenerator(generator="openai", api_base_url="http://127.0.0.1:9/v1")
        result = generator.run(messages=PROMPT, documents=[], query=QUESTION)
        assert result["status"].status is StatusKind.ERROR
        assert "OPENAI_API_KEY is not set" in result["status"].message
        assert result["replies"] == [NO_SOURCES_ANSWER]
