"""A chain question is cut at its innermost description, by its parse alone (invented names throughout)."""

from __future__ import annotations

import pytest

from components.generation.question_chain import decompose


@pytest.mark.parametrize(
    ("question", "hop", "rest"),
    [
        # A relative clause.
        (
            "Who directed the film that was shot in Brindlemoor in 1979?",
            "What is the film that was shot in Brindlemoor in 1979?",
            "Who directed <B>?",
        ),
        # A relative clause with its preposition in front.
        (
            "What county borders the county in which Quellport is located?",
            "What is the county in which Quellport is located?",
            "What county borders <B>?",
        ),
        # A relative clause the parse hangs from an earlier noun belongs to the noun its relative word follows.
        (
            "What is the name of the waterfall in the country where the Velk River is found?",
            "What is the country where the Velk River is found?",
            "What is the name of the waterfall in <B>?",
        ),
        # The wh-word in the clause of a noun the rest says something of: which one is asked first, then the clause.
        (
            "Marta Quell starred in a drama that was filmed in what country?",
            "Marta Quell starred in what drama?",
            "<B> was filmed in what country?",
        ),
        (
            "Oskar Brandvik played for a football team based in what city?",
            "Oskar Brandvik played for what football team?",
            "<B> based in what city?",
        ),
        (
            "The Velk Codex is in the hand of a Danish poet whose mentor was whom?",
            "The Velk Codex is in the hand of what Danish poet?",
            "<B>'s mentor was whom?",
        ),
        # A capitalised noun is part of a name, not a description (no championship of the Riders here): the cut is
        # at the game whose clause holds the wh-word.
        (
            "The runner-up in the 1999 Vastmark Riders' Championship appears in a game made by what company?",
            "The runner-up in the 1999 Vastmark Riders' Championship appears in what game?",
            "<B> made by what company?",
        ),
        # The wh-word in the clause of a noun nested in another phrase's clause (the album "included" in the song's
        # description, the ships a boat "was carried on"): the innermost clause holding it is cut, as at the top.
        (
            "Velk Harbour is a song included in the 1968 album Glass Tide by a Danish singer that has sold more than "
            "how many records?",
            "Velk Harbour is a song included in the 1968 album Glass Tide by what Danish singer?",
            "<B> has sold more than how many records?",
        ),
        (
            "The Orvik 9 was a boat that was carried on the ships that were first built when?",
            "The Orvik 9 was a boat that was carried on what ships?",
            "<B> were first built when?",
        ),
        # A name's possessive.
        (
            "Who is the spouse of Tarvik Olen's main director?",
            "What is Tarvik Olen's main director?",
            "Who is the spouse of <B>?",
        ),
        # An "of" phrase holding a name, inside a relative clause: the innermost description goes first.
        (
            "Who ruled the country where the composer of Glass Harbour was a citizen?",
            "What is the composer of Glass Harbour?",
            "Who ruled the country where <B> was a citizen?",
        ),
        # An adverbial wh-word beside the copula asks something else of the described person, not for that person.
        (
            "Where was the director of Glass Harbour born?",
            "What is the director of Glass Harbour?",
            "Where was <B> born?",
        ),
        (
            "Where was the founder of Quellport Mills a professor?",
            "What is the founder of Quellport Mills?",
            "Where was <B> a professor?",
        ),
        # The question's own participle read by the parse as a clause inside the description ("bought [Tovani
        # founded]"): it is given back to the question.
        (
            "When was the firm that bought Tovani founded?",
            "What is the firm that bought Tovani?",
            "When was <B> founded?",
        ),
        # ... or as a participle modifying the name the description ends with ("acquired [GraphQ founded]").
        (
            "Where was the company that acquired GraphQ founded?",
            "What is the company that acquired GraphQ?",
            "Where was <B> founded?",
        ),
        # ... or as a clause of the name after "did" ("the 1960 film Herbsttango [die]", "did" read as the main
        # verb): the description is the director's, not the film's.
        (
            "When did the director of the 1960 Austrian film Herbsttango die?",
            "What is the director of the 1960 Austrian film Herbsttango?",
            "When did <B> die?",
        ),
        # After "did" the question's closing bare verb is its own whatever the parse makes of it: a noun the name's
        # words modify ("Varland's 1492 royal election [die]"), the head of a name hung on it ("the film [Vorlan
        # die]"), a noun after the "of" phrase ("Halvex Mills [study]"), or a verb with its particle ("come from").
        (
            "When did the winner of Varland's 1492 free royal election die?",
            "What is the winner of Varland's 1492 free royal election?",
            "When did <B> die?",
        ),
        (
            "When did the director of the film Vorlan die?",
            "What is the director of the film Vorlan?",
            "When did <B> die?",
        ),
        ("What did the founder of Halvex Mills study?", "What is the founder of Halvex Mills?", "What did <B> study?"),
        (
            "Which country did the band that recorded Tessar Lights come from?",
            "What is the band that recorded Tessar Lights?",
            "Which country did <B> come from?",
        ),
        (
            "How many copies did the debut album of Tessar sell?",
            "What is the debut album of Tessar?",
            "How many copies did <B> sell?",
        ),
        # ... and a noun whose only clause was that verb describes nothing ("the song Tessar [born]").
        (
            "When was the writer of the song Tessar born?",
            "What is the writer of the song Tessar?",
            "When was <B> born?",
        ),
        # A contact relative clause, with no relative word, ending in its stranded preposition: the parse reads its
        # verb as the question's own; the hop asks the clause of its name.
        (
            "What currency predated the Euro in the country Veltromark is from?",
            "Veltromark is from what country?",
            "What currency predated the Euro in <B>?",
        ),
        # ... the question's own verb after "did" closing it.
        (
            "What year did the company Marrow Skyways is part of dissolve?",
            "Marrow Skyways is part of what company?",
            "What year did <B> dissolve?",
        ),
    ],
)
def test_the_innermost_description_is_asked_first(question, hop, rest):
    cut = decompose(question)
    assert cut is not None
    assert (cut.hop, cut.rest("<B>")) == (hop, rest)


@pytest.mark.parametrize(
    "question",
    [
        # The rest would ask nothing of the described thing: it asks for that thing itself.
        "Who was the president that signed the Tarven Accord?",
        "Who was the man that said Quellport fell?",
        "What is the name of the team that won the Quellport Cup?",
        # The wh-word asks the relation directly ("what was the population of X").
        "What was the population of Quellport in 2011?",
        # ... and where an adverbial wh-word leaves nothing else to ask of it, there is no hop either.
        "Where is the headquarters of Quellport Mills?",
        "When was the founding of Quellport Mills?",
        # No description holding a name.
        "Who wrote the song that everyone sang?",
        # A clause on a predicate of the subject describes the subject itself: one hop.
        "Tessa Orlund is a singer who was born in what city?",
        # So does a clause on a noun in apposition to a name: the noun is that name's, no other thing to find first.
        "The album Velk was recorded by Tessa Orlund, a singer who was born in what city?",
        "Tessa Orlund, a singer who was born in what city, recorded the album Velk?",
        # No question word.
        "Tell me about Quellport.",
        # A name's possessive whose noun carries a name of its own says which one it is: nothing to look up first.
        "Where is Quellport's Tarven conference held?",
        "How much did Brindlemoor's Velk Stadium cost?",
        # A noun with a name in apposition and the question's own bare verb after "does": no clause.
        "What does the acronym QLX stand for?",
        "What does the name Quellport mean in Velkish?",
    ],
)
def test_a_question_without_a_hop_is_not_cut(question):
    assert decompose(question) is None


def test_a_question_is_read_once_for_the_hop_stage_and_the_answer(monkeypatch):
    import components.generation.question_chain as question_chain

    parsed: list[str] = []
    parse = question_chain.parse_syntax

    def counted(text: str):  # noqa: ANN202
        parsed.append(text)
        return parse(text)

    monkeypatch.setattr(question_chain, "parse_syntax", counted)
    question = "Where was the architect of Quellmoor Hall born?"
    first, second = decompose(question), decompose(question)
    assert first is second and first is not None and first.hop == "What is the architect of Quellmoor Hall?"
    assert parsed == [question]


@pytest.mark.parametrize(
    "question",
    [
        "What about the lanterns on the old pier?",  # no name: nothing to look a description up by
        "Did the Harwick ferry that Oskar Velle built sail to Lunmouth?",  # no wh-word
        "Who is Talia Brennick?",  # no noun to head a description
    ],
)
def test_a_question_that_can_hold_no_description_is_not_parsed(monkeypatch, question):
    import components.generation.question_chain as question_chain

    parsed: list[str] = []
    monkeypatch.setattr(question_chain, "parse_syntax", lambda text: parsed.append(text))
    assert question_chain.decompose.__wrapped__(question) is None
    assert parsed == []
