"""The one language analysis: spaCy's pipeline, loaded once, and what the product reads from it."""

import pytest

from components.text.analyzer import irregular_forms, terms
from components.text.language import (
    LanguageModelMissing,
    chunk_sentence_spans,
    chunk_sentences,
    entity_kind,
    language_pipeline,
    lexicon_noun,
    parse,
    parse_question,
    parse_syntax,
    parts_of_speech_from_parse,
    read_in_lower_case,
    sentence_spans,
    sentences,
    stored_sentence_spans,
    syntax_tags,
)


class TestLanguagePipeline:
    def test_the_default_pipeline_is_loaded_once_with_the_pipes_the_product_reads(self):
        nlp = language_pipeline()
        assert nlp is language_pipeline()
        assert {"parser", "ner", "lemmatizer", "tagger"} <= set(nlp.pipe_names)

    def test_a_missing_pipeline_is_one_clear_sentence_the_cli_reports(self):
        with pytest.raises(LanguageModelMissing, match="not installed; install its package or set SPACY_MODEL") as err:
            language_pipeline("no_such_spacy_pipeline")
        assert "spacy_model" in str(err.value) and "\n" not in str(err.value)
        # The process's configuration, not a caller's bad input: the server's 503 and `research`'s one line
        # (tests/pipelines/test_configuration_errors.py), never a 422.
        assert not isinstance(err.value, ValueError)

    def test_entities_get_the_products_kinds_and_values_get_none(self):
        doc = parse("Andrey Vasnetsov started Qdrant in Berlin in 2021.")
        kinds = {ent.text: entity_kind(ent.label_) for ent in doc.ents}
        assert kinds["Andrey Vasnetsov"] == "person" and kinds["Berlin"] == "place" and kinds["2021"] is None
        assert entity_kind("NORP") == "group" and entity_kind("CARDINAL") is None


class TestSentences:
    def test_spans_cover_whole_sentences_abbreviations_kept(self):
        text = "Dr. Smith met J. Doe in the U.S. on Monday. They talked about RAG!\n\nThen they left."
        assert [text[start:end] for start, end in sentence_spans(text)] == [
            "Dr. Smith met J. Doe in the U.S. on Monday.",
            "They talked about RAG!",
            "Then they left.",
        ]

    def test_a_name_with_a_dot_before_a_capitalised_suffix_is_one_word_and_ends_no_sentence(self):
        text = (
            "Tavin Orrell co-founded Varnolab.AI with Mira Vell in 2021; Quillon hired them. It was the war.In 1990 it "
            "rained."
        )
        assert [text[start:end] for start, end in sentence_spans(text)] == [
            "Tavin Orrell co-founded Varnolab.AI with Mira Vell in 2021; Quillon hired them.",
            "It was the war.",  # a missing space after a sentence's end still ends it
            "In 1990 it rained.",
        ]
        assert "Varnolab.AI" in [token.text for token in parse(text)]


class TestQuestions:
    def test_a_question_is_read_once_without_parse_or_entities(self):
        doc = parse_question("Who wrote the pgvector extension?")
        hits = parse_question.cache_info().hits
        again = parse_question("Who wrote the pgvector extension?")
        # Parsed once (the second call is a cache hit); each caller gets its own copy of the Doc.
        assert parse_question.cache_info().hits == hits + 1 and again is not doc and again.text == doc.text
        assert [token.lemma_ for token in doc][:2] == ["who", "write"] and not doc.has_annotation("DEP")


class TestIrregularForms:
    def test_irregular_forms_join_their_lemma_from_the_pipelines_tables(self):
        assert irregular_forms()["written"] == "write" and irregular_forms()["children"] == "child"
        assert terms("Who wrote it? It was written by Andrew Kane.") == ["write", "write", "andrew", "kane"]


def test_a_component_asking_for_another_spacy_pipeline_than_the_processes_is_told_so() -> None:
    """One process analyses with one spaCy pipeline (its analyses are cached per text): a component whose
    `spacy_model` names another gets one sentence at warm-up, not the first pipeline's analysis in silence."""
    from components.text import language

    chosen = language_pipeline()  # the process's pipeline, chosen now if nothing chose it yet
    name = language._default_pipeline_name()
    assert language.use_language_pipeline(name) is chosen
    with pytest.raises(language.LanguageModelMismatch, match="give every component of the process the same"):
        language.use_language_pipeline("some_other_spacy_pipeline")


class TestTheOneSentenceSplitter:
    """spaCy's sentences with the product's mending rules: every reader of sentences (ingestion, the ranker, the
    answer, the citation check) gets these."""

    def test_abbreviations_initials_quotes_and_paragraphs(self):
        text = 'Dr. Smith met J. R. R. Tolkien. He said "Hello." Then left!\n\nNew part, e.g. here. Last one'
        assert [text[start:end] for start, end in sentence_spans(text)] == [
            "Dr. Smith met J. R. R. Tolkien.",
            'He said "Hello."',
            "Then left!",
            "New part, e.g. here.",
            "Last one",
        ]

    def test_abbreviations_inside_and_at_the_end_and_list_items(self):
        text = "Dr. Smith met J. Doe in the U.S. on Monday. They talked e.g. about RAG! Then they left.\n- A list item"
        assert sentences(text) == [
            "Dr. Smith met J. Doe in the U.S. on Monday.",
            "They talked e.g. about RAG!",
            "Then they left.",
            "- A list item",
        ]

    def test_a_chunk_is_read_from_its_stored_spans_without_a_parse(self, monkeypatch):
        from components.text import language

        text = "Halvard Mills opened in 1921. It closed in 1988."
        stored = {"sentence_spans": [[0, 29], [30, 48]]}
        monkeypatch.setattr(language, "sentence_spans", lambda _: pytest.fail("the chunk was split again"))
        assert chunk_sentence_spans(text, stored) == [(0, 29), (30, 48)]
        assert chunk_sentences(text, stored) == ["Halvard Mills opened in 1921.", "It closed in 1988."]

    @pytest.mark.parametrize(
        "stored",
        [
            None,
            [],
            "0-29",
            [[0, 29], [30, 99]],
            [[30, 48], [0, 29]],
            [[0, 29, 1]],
            [[0.0, 29]],
            [[5, 5]],
            [[True, 29]],
            [[29, 30]],
        ],
    )
    def test_spans_that_do_not_fit_the_text_fall_back_to_the_splitter(self, stored):
        text = "Halvard Mills opened in 1921. It closed in 1988."
        assert stored_sentence_spans(text, {"sentence_spans": stored}) is None
        assert chunk_sentence_spans(text, {"sentence_spans": stored}) == sentence_spans(text) == [(0, 29), (30, 48)]


def test_naming_the_analysis_of_a_keyword_index_does_not_choose_the_processs_pipeline(monkeypatch) -> None:
    """A knowledge base opened before any component warmed up (its record of the text analysis is checked) must not
    fix the process's spaCy pipeline: the components' `spacy_model` chooses it."""
    from components.text import analyzer, language

    monkeypatch.setattr(language, "_chosen", [])
    assert analyzer.text_analysis().startswith(language.pipeline_name_from_settings())
    assert language._chosen == []
    monkeypatch.setattr(language, "_chosen", ["another_pipeline"])
    assert analyzer.text_analysis().startswith("another_pipeline unknown / ")


def test_the_same_pipeline_read_from_another_folder_is_the_same_text_analysis(tmp_path, monkeypatch) -> None:
    """SPACY_MODEL may name a pipeline folder: a base built on one machine must not be refused on another where the
    same pipeline sits in another folder (the record names the pipeline by its meta.json, not by its path)."""
    import json

    from components.text import analyzer, language

    records = []
    for place in ("srv/models/one", "home/analyst/pipelines/copy"):
        folder = tmp_path / place
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text(json.dumps({"lang": "xx", "name": "quillon_lemmas", "version": "2.4.1"}))
        monkeypatch.setattr(language, "_chosen", [str(folder)])
        records.append(analyzer.text_analysis())
    assert records[0] == records[1]
    assert records[0].startswith("xx_quillon_lemmas 2.4.1 / ")
    (tmp_path / "srv/models/one/meta.json").write_text(
        json.dumps({"lang": "xx", "name": "quillon_lemmas", "version": "2.5.0"})
    )
    analyzer._text_analysis.cache_clear()
    monkeypatch.setattr(language, "_chosen", [str(tmp_path / "srv/models/one")])
    assert analyzer.text_analysis() != records[1]  # another release of it may ship other lemma tables


class TestSentencesReadOnce:
    """An answer being checked is read once and only for its sentences: parsed without the entity recogniser and not
    kept in the cache every reader of entities shares, with the same cuts as the cached path."""

    TEXTS = [
        "Orvella Marsk founded Tindral Works in 1987 [1]. It moved to Kestrow in 1994 [2].",
        "Dr. Halvar Quen (born 14 May [O.S. 2 May] 1862) studied at Brennmoor; he left in 1880.",
        "The Vantor bridge opened.\nIt carries two lines [3].\n\nNo more.",
    ]

    @pytest.mark.parametrize("text", TEXTS)
    def test_the_cuts_are_those_of_the_cached_path(self, text: str) -> None:
        once = sentence_spans(text, cache=False)
        assert once and once == sentence_spans(text)

    def test_a_text_read_for_its_cuts_runs_only_what_cuts_it(self) -> None:
        from components.text import language

        text = "Tessaly Ombrin rowed across the Vell in 1931. Her boat still hangs in the Carrowby boathouse."
        docs = [doc for _, doc in language.analyse_text(text, entities=False)]
        # No tags, lemmas or entities are made for it (none of them moves a boundary); the parse is there.
        assert all(token.tag_ == "" and token.lemma_ == "" for doc in docs for token in doc)
        assert not any(doc.ents for doc in docs)
        assert any(token.dep_ for doc in docs for token in doc)
        assert sentence_spans(text, cache=False) == sentence_spans(text)

    def test_an_answer_read_once_is_not_kept_for_readers_of_entities(self) -> None:
        from components.text import language

        text = "Maelis Droune chaired the Quorvane board in 2011 [1]. She stepped down in 2019 [2]."
        sentences(text, cache=False)
        assert not any("Maelis Droune" in line for line in language._DOC_CACHE)
        # Read with the cache afterwards, the same lines get their entities.
        assert any(ent.text == "Maelis Droune" for _, doc in language.analyse_text(text) for ent in doc.ents)

    def test_the_citation_check_reads_its_answer_once(self) -> None:
        from haystack import Document

        from components.generation.citation_checker import CitationChecker
        from components.text import language

        answer = "Brisa Tolvane built the Harrowgate mill in 1902 [1]."
        checker = CitationChecker()
        checker.warm_up()
        result = checker.run(answer=answer, documents=[Document(content="Brisa Tolvane built the Harrowgate mill.")])
        assert result["sentences"][0]["supported"]
        assert not any("Brisa Tolvane" in line for line in language._DOC_CACHE)


class TestSentencesAroundKnownOnes:
    """A text some of whose sentences are known (an answer's copies of stored chunk sentences) is cut as the whole
    text is: only the rest is parsed, and the cuts are mended across every boundary."""

    TEXTS = [
        "Orvella Marsk founded Tindral Works in 1987 [1]. It moved to Kestrow in 1994 [2]. Its founder retired.",
        "Halvar Quen studied at Brennmoor [1]. he left in 1880 [1]. Dr. Quen then taught at Velm.",
        "The Vantor bridge opened [3].\nIt carries two lines [3].\n\nNo more.",
    ]

    @pytest.mark.parametrize("text", TEXTS)
    @pytest.mark.parametrize("keep", [(0,), (1,), (0, 2), (1, 2)])
    def test_the_cuts_are_those_of_the_whole_text(self, text: str, keep: tuple[int, ...]) -> None:
        from components.text.language import sentence_spans_around

        whole = sentence_spans(text)
        known = [whole[index] for index in keep if index < len(whole)]
        assert sentence_spans_around(text, known, cache=False) == whole

    def test_a_known_sentence_opening_in_lower_case_joins_the_one_before(self) -> None:
        from components.text.language import sentence_spans_around

        text = "Halvar Quen studied at Brennmoor and Velm, then moved; he left in 1880."
        assert sentence_spans_around(text, [(text.index("he left"), len(text))]) == [(0, len(text))]


class TestSyntaxInTwoStages:
    QUESTIONS = (
        "Which harbour did the ferry that Mira Kessand built in 1931 sail from?",
        "What about the fourth lantern they lit that winter?",
        "Did the Quellmoor council or its mayor close the old bridge?",
        "How many keepers has the Brindlemoor light had since it was built?",
    )

    @pytest.mark.parametrize("question", QUESTIONS)
    def test_the_parse_from_the_tags_is_the_one_pass_parse(self, question: str) -> None:
        tags = syntax_tags(question)
        doc = parse_syntax(question)
        whole = language_pipeline()(question, disable=["ner"])

        def read(parsed):  # noqa: ANN001, ANN202
            return [(t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, str(t.morph)) for t in parsed]

        assert read(doc) == read(whole)
        assert tags is not None and not tags.has_annotation("DEP") and [t.tag_ for t in tags] == [t.tag_ for t in doc]

    def test_nouns_and_proper_nouns_never_come_from_the_parse_alone(self) -> None:
        # Only the attribute ruler's rules on dependencies can change a part of speech the tags gave: they make
        # pronouns, auxiliaries, verbs, adverbs and subordinators, never a noun or a name.
        from_parse = parts_of_speech_from_parse()
        assert {"NOUN", "PROPN"}.isdisjoint(from_parse) and "AUX" in from_parse
        for question in self.QUESTIONS:
            tagged = {(t.i, t.pos_) for t in syntax_tags(question) if t.pos_ in {"NOUN", "PROPN"}}
            assert {(t.i, t.pos_) for t in parse_syntax(question) if t.pos_ in {"NOUN", "PROPN"}} <= tagged

    def test_a_question_analysed_and_parsed_is_tagged_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tok2vec = type(language_pipeline().get_pipe("tok2vec"))
        calls: list[str] = []
        run = tok2vec.__call__

        def counted(self, doc):  # noqa: ANN001, ANN202
            calls.append(doc.text)
            return run(self, doc)

        monkeypatch.setattr(tok2vec, "__call__", counted)
        question = "Which lighthouse did Edda Marrow keep on the Farrow coast?"
        light, parsed = parse_question(question), parse_syntax(question)
        assert calls == [question]
        whole = language_pipeline()(question, disable=["parser", "ner"])
        assert [(t.tag_, t.pos_, t.lemma_) for t in light] == [(t.tag_, t.pos_, t.lemma_) for t in whole]
        assert parsed.has_annotation("DEP") and not light.has_annotation("DEP")

    @pytest.mark.parametrize("spelling", ["lower case", "attribute ids"])
    def test_a_noun_the_parse_may_give_is_found_however_the_rule_spells_it(self, spelling: str) -> None:
        # spaCy's matcher reads a pattern's keys in any case, and a rule may name attributes by their ids: a rule on
        # dependencies that makes a noun is one however it is spelled, or a reader skips a parse that finds a noun.
        import spacy
        from spacy.attrs import DEP, POS
        from spacy.parts_of_speech import NOUN

        from components.text.language import _parse_parts_of_speech

        pipeline = spacy.blank("en")
        for name in ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"):
            pipeline.add_pipe(name)
        pattern, attrs = (
            ({"dep": "nsubj", "lower": "brask"}, {"POS": "NOUN"})
            if spelling == "lower case"
            else ({DEP: "nsubj", "LOWER": "brask"}, {POS: NOUN})
        )
        pipeline.get_pipe("attribute_ruler").add([[pattern]], attrs)
        assert "NOUN" in _parse_parts_of_speech(pipeline)


def test_the_lexicon_knows_common_nouns_and_the_tagger_reads_a_word_written_in_lower_case() -> None:
    assert lexicon_noun("Striker") and lexicon_noun("cornerbacks") and not lexicon_noun("Tomas")
    text = "Striker Tomas Reinholt scored. Rose Marie Smith won."
    assert read_in_lower_case(text, 0) == "NOUN"
    assert read_in_lower_case(text, text.index("Rose")) not in ("NOUN", "")
    assert read_in_lower_case(text, 3) == ""  # no token starts inside a word


def test_a_pipeline_without_a_noun_index_knows_no_noun_and_does_not_fail() -> None:
    import spacy

    from components.text.language import _lexicon_nouns

    # A pipeline without the rule lemmatizer's table (a blank one here): the role cut then never applies.
    assert _lexicon_nouns(spacy.blank("en")) == frozenset()
