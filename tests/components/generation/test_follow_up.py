"""The follow-up rewrite: pronouns, ellipsis, "what about X", standalone questions left alone, the chat model."""

from __future__ import annotations

import pytest

from components.generation.follow_up import FollowUpRewriter, Turn, rewrite_offline
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures

FOUNDED = Turn("When was Brevik Labs founded?", "Brevik Labs was founded in 2019 by Orla Venn in Kestrel Bay [1].")
WHO = Turn("Who founded Brevik Labs?", "Orla Venn founded Brevik Labs in 2019 [1].", short_answer="Orla Venn")


class TestRewriteOffline:
    @pytest.mark.parametrize(
        ("question", "expected"),
        [
            ("Who leads it?", "Who leads Brevik Labs?"),
            ("When was it released?", "When was Brevik Labs released?"),
            ("How many employees does it have?", "How many employees does Brevik Labs have?"),
            ("And its funding?", "What is Brevik Labs' funding?"),
        ],
    )
    def test_a_pronoun_becomes_the_earlier_subject(self, question: str, expected: str) -> None:
        assert rewrite_offline(question, [FOUNDED]) == expected

    def test_what_about_asks_the_last_question_of_another_subject(self) -> None:
        assert rewrite_offline("What about Zorvan Systems?", [FOUNDED]) == "When was Zorvan Systems founded?"
        assert rewrite_offline("And Zorvan?", [FOUNDED]) == "When was Zorvan founded?"

    def test_a_bare_wh_word_asks_the_last_question_again(self) -> None:
        assert rewrite_offline("And where?", [FOUNDED]) == "Where was Brevik Labs founded?"

    def test_an_attribute_alone_is_the_earlier_subjects(self) -> None:
        assert rewrite_offline("What about the founder?", [FOUNDED]) == "Who is Brevik Labs' founder?"

    def test_she_is_the_person_the_answer_named(self) -> None:
        assert rewrite_offline("Where did she study?", [WHO]) == "Where did Orla Venn study?"
        assert rewrite_offline("When was it founded?", [WHO]) == "When was Brevik Labs founded?"

    def test_them_is_the_subjects_of_the_last_turns(self) -> None:
        turns = [FOUNDED, Turn("When was Zorvan founded?", "Zorvan was founded in 2020 [2].")]
        assert rewrite_offline("Which of them was first?", turns) == "Which of Brevik Labs and Zorvan was first?"

    @pytest.mark.parametrize(
        "question",
        [
            "Who founded Kelmora?",
            "What is vector search?",
            "What is Vexa and who leads it?",
            "How does Tarnwick compare with its rivals?",
            "Is it true that Brindle closed?",
            "What is retrieval augmented generation and how does it work?",
        ],
    )
    def test_a_standalone_question_is_never_rewritten(self, question: str) -> None:
        assert rewrite_offline(question, [FOUNDED]) == ""

    def test_nothing_earlier_nothing_rewritten(self) -> None:
        assert rewrite_offline("Who leads it?", []) == ""


class TestFollowUpRewriter:
    def test_run_gives_the_question_to_search_and_the_rewrite(self) -> None:
        history = [{"question": FOUNDED.question, "answer": FOUNDED.answer}]
        result = FollowUpRewriter(generator="extractive").run(question="Who leads it?", history=history)
        assert result == {"question": "Who leads Brevik Labs?", "answered_as": "Who leads Brevik Labs?"}
        alone = FollowUpRewriter(generator="extractive").run(question="Who leads Zorvan?", history=history)
        assert alone == {"question": "Who leads Zorvan?", "answered_as": ""}

    def test_an_earlier_rewrite_is_the_turn_a_chain_continues_from(self) -> None:
        history = [{"question": "Who leads it?", "answered_as": "Who leads Brevik Labs?", "answer": "x"}]
        result = FollowUpRewriter(generator="extractive").run(question="Where is it based?", history=history)
        assert result["answered_as"] == "Where is Brevik Labs based?"

    def test_round_trips(self) -> None:
        rewriter = FollowUpRewriter(generator="openai", model="m", timeout_s=5.0, max_turns=2)
        again = FollowUpRewriter.from_dict(rewriter.to_dict())
        assert again.to_dict() == rewriter.to_dict()
        with pytest.raises(ValueError, match="max_turns"):
            FollowUpRewriter(max_turns=0)

    def test_a_chat_model_rewrites_and_the_offline_rewrite_is_its_fallback(self, chat_server, monkeypatch):  # noqa: F811
        monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
        history = [{"question": FOUNDED.question, "answer": FOUNDED.answer}]
        rewriter = FollowUpRewriter(generator="openai", model="rewriter", api_base_url=chat_server.base_url_v1)
        chat_server.plan_answer("Who is the chief executive of Brevik Labs?")
        assert rewriter.run(question="Who leads it?", history=history)["answered_as"] == (
            "Who is the chief executive of Brevik Labs?"
        )
        sent = chat_server.chat_requests()[-1]["messages"]
        assert sent[0]["role"] == "system" and sent[-1]["content"] == "Who leads it?"
        assert sent[1]["content"] == FOUNDED.question
        # A standalone question never reaches the model.
        calls = len(chat_server.chat_requests())
        assert rewriter.run(question="Who leads Zorvan?", history=history)["answered_as"] == ""
        assert len(chat_server.chat_requests()) == calls
        # The model failing leaves the offline rewrite.
        chat_server.fail("500", times=1)
        assert rewriter.run(question="Who leads it?", history=history)["answered_as"] == "Who leads Brevik Labs?"


def test_a_turn_that_names_nothing_is_passed_over() -> None:
    turns = [FOUNDED, Turn("Who leads it?", "The sources do not answer this.")]
    assert rewrite_offline("Where is it based?", turns) == "Where is Brevik Labs based?"


def test_that_company_is_the_one_the_answer_named_and_it_the_questions_subject() -> None:
    turns = [
        Turn(
            "Which company makes the Corvane X2 drone?",
            "The Corvane X2 is made by Strand Aerial [1].",
            short_answer="Strand Aerial",
        )
    ]
    assert rewrite_offline("Where is that company based?", turns) == "Where is Strand Aerial based?"
    assert rewrite_offline("How much does it cost?", turns) == "How much does Corvane X2 cost?"
    assert rewrite_offline("When did they start making drones?", turns) == "When did Strand Aerial start making drones?"


def test_they_after_a_who_answered_with_two_people_are_both() -> None:
    turns = [Turn("Who founded Ember Oakworks?", "Ember Oakworks was founded by Lucia Fenn and Marco Dray [1].")]
    assert rewrite_offline("Where did they meet?", turns) == "Where did Lucia Fenn and Marco Dray meet?"


def test_the_short_answer_to_a_who_is_the_person_whatever_its_label() -> None:
    turns = [Turn("Who designed the Pelloran Bridge?", "Aurelio Mast designed it [2].", short_answer="Aurelio Mast")]
    assert rewrite_offline("What else did he design?", turns) == "What else did Aurelio Mast design?"


def test_the_rewriter_reads_no_setting_and_the_catalog_passes_them(monkeypatch) -> None:
    from components.settings import reload_settings
    from pipelines.catalog import PipelineCatalog

    monkeypatch.setenv("GENERATOR", "openai")
    monkeypatch.setenv("OPENAI_MODEL", "quillon-small")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-quillon-000000")
    reload_settings()
    try:
        # Built without parameters, the rewriter is offline whatever the settings say, and says so in to_dict.
        alone = FollowUpRewriter()
        alone.warm_up()
        assert alone._chat is None
        assert alone.to_dict()["init_parameters"]["generator"] == "extractive"
        # The catalog builds it from the settings.
        catalog = PipelineCatalog(specs={})
        history = [{"question": FOUNDED.question, "answer": FOUNDED.answer}]
        monkeypatch.setattr(FollowUpRewriter, "_by_model", lambda self, question, turns: "")
        assert catalog.follow_up("Who leads it?", history, None) == "Who leads Brevik Labs?"
        parameters = catalog._rewriter.to_dict()["init_parameters"]
        assert parameters["generator"] == "openai" and parameters["model"] == "quillon-small"
        assert parameters["api_base_url"] == "http://127.0.0.1:9/v1"
    finally:
        monkeypatch.undo()
        reload_settings()
    with pytest.raises(ValueError, match="model"):
        FollowUpRewriter(generator="openai", model="")


class TestWhatIsNotRewrittenWrongly:
    def test_a_lower_case_or_unknown_name_is_a_new_subject_not_an_attribute(self) -> None:
        assert rewrite_offline("What about zentrix?", [FOUNDED]) == "When was zentrix founded?"
        assert rewrite_offline("what about Quorvel?", [FOUNDED]) == "When was Quorvel founded?"

    def test_an_acronym_with_its_determiner_is_an_attribute(self) -> None:
        assert rewrite_offline("And the CEO?", [FOUNDED]) == "Who is Brevik Labs' CEO?"
        assert rewrite_offline("And the headquarters?", [FOUNDED]) == "What is Brevik Labs' headquarters?"

    def test_a_bare_wh_after_a_who_is_asked_in_the_passive_or_not_at_all(self) -> None:
        assert rewrite_offline("And when?", [WHO]) == "When was Brevik Labs founded?"
        wrote = Turn("Who wrote Marrow Tide?", "Orla Venn wrote Marrow Tide [1].", short_answer="Orla Venn")
        assert rewrite_offline("And when?", [wrote]) == "When did Orla Venn write Marrow Tide?"  # not "When wrote"
        unanswered = Turn("Who wrote Marrow Tide?", "The sources do not say.")
        assert rewrite_offline("And when?", [unanswered]) == ""
        lumio = Turn("Which company develops Dovecote DB?", "Lumio develops it [2].", short_answer="Lumio")
        assert rewrite_offline("Where?", [lumio]) == "Where does Lumio develop Dovecote DB?"

    def test_a_phrase_of_a_preposition_replaces_the_earlier_ones(self) -> None:
        raised = Turn("How much did Ostara Health raise in 2023?", "Ostara Health raised $55 million in 2023 [1].")
        assert rewrite_offline("And in 2021?", [raised]) == "How much did Ostara Health raise in 2021?"
        assert rewrite_offline("And in Osmer?", [FOUNDED]) == "When was Brevik Labs founded in Osmer?"

    def test_a_demonstrative_stands_for_an_earlier_name_only_of_its_kind(self) -> None:
        assert rewrite_offline("Who wrote this paper?", [FOUNDED]) == ""
        assert rewrite_offline("What happened this year?", [FOUNDED]) == ""
        assert rewrite_offline("Where did this person study?", [WHO]) == "Where did Orla Venn study?"


def test_the_entities_memory_kept_are_antecedents_after_the_questions_subject() -> None:
    remembered = Turn("who leads pellow freight?", "The sources do not say.", entities=("Pellow Freight",))
    assert rewrite_offline("Where is it based?", [remembered]) == "Where is Pellow Freight based?"
    assert rewrite_offline("What about quorra?", [remembered]) == "Who leads quorra?"
    # The question's own subject comes first.
    both = Turn("When was Tindle Yard opened?", "Tindle Yard opened in 2004.", entities=("Osmer Quay", "Tindle Yard"))
    assert rewrite_offline("Who owns it?", [both]) == "Who owns Tindle Yard?"
    # Read from the history the product passes (memory's entities).
    history = [{"question": remembered.question, "answer": remembered.answer, "entities": ["Pellow Freight"]}]
    assert FollowUpRewriter().run(question="Who owns it?", history=history)["answered_as"] == "Who owns Pellow Freight?"
