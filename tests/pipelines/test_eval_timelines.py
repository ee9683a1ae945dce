"""`research eval timelines`: the scoring, an end-to-end run on a small written corpus, and the CLI dispatch."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

import pytest

from components.graph.dates import FuzzyDate
from components.graph.extraction import LanguageExtractor
from pipelines.cli import main as cli_main
from pipelines.evaluation.jsonl import load_jsonl
from pipelines.evaluation.timelines import (
    GoldTimeline,
    TimelineEntry,
    evaluate_timelines,
    normalise_sentence,
    parse_gold_date,
    score_timeline,
)
from tests.components.graph.conftest import NORDVIK_2019, NORDVIK_2020, make_document

GOLD = {
    "entity": "Henrik Dahl",
    "events": [
        {
            "date": "2019-02-14",
            "mentions": [
                {
                    "doc_id": "n1",
                    "sentence_id": 1,
                    "sentence": "Chief executive Henrik Dahl said the decision was painful.",
                }
            ],
        },
        # Dahl's event is the saying, on the article's day (2021 dates the stop he reports), as the TimeLine task's
        # gold dates a reported statement by the day it was made.
        {
            "date": "2019-02-14",
            "mentions": [{"doc_id": "n1", "sentence_id": 2, "sentence": "He said deliveries would stop in 2021."}],
        },
        {
            "date": "2012",
            "mentions": [{"doc_id": "n2", "sentence_id": 3, "sentence": "Dahl led the company from 2012 until 2019."}],
        },
        {
            "date": "XXXX-XX-XX",
            "mentions": [{"doc_id": "n2", "sentence_id": 2, "sentence": "Mr Lindqvist replaced Henrik Dahl as CEO."}],
        },
    ],
}


class TestScoring:
    def test_gold_dates_keep_their_precision(self):
        assert parse_gold_date("2008-06-09") == FuzzyDate.parse("2008-06-09")
        assert parse_gold_date("2008-03-XX").iso() == "2008-03"
        assert parse_gold_date("2008").precision == "year"
        assert parse_gold_date("XXXX-XX-XX") is None and parse_gold_date("XXX-XX-XX") is None

    def test_sentence_matching_ignores_spacing_and_case(self):
        spaced, plain = "Nordvik Group ' latest suit , filed", "nordvik group' latest suit, filed"
        assert normalise_sentence(spaced) == normalise_sentence(plain)

    def test_a_quotation_mark_the_splitter_moved_does_not_hide_the_sentence(self):
        # The gold's sentence opens with the quotation's mark; the extractor's sentence lost it to the sentence before
        # and took the next one's opening mark at its end.
        gold_text = '" We won the tender, " said Varno chief Ilse Marten.'
        mention = {"doc_id": "n4", "sentence_id": 2, "sentence": gold_text}
        gold = {"entity": "Ilse Marten", "events": [{"date": "2019-02-14", "mentions": [mention]}]}
        split = 'We won the tender, " said Varno chief Ilse Marten. "'
        entry = TimelineEntry("n4", split, FuzzyDate.parse("2019-02-14"))
        score = score_timeline("Ilse Marten", [entry], gold, {})
        assert (score.recalled, score.correct_entries, score.dated_correct) == (1, 1, 1)

    def test_recall_precision_and_date_accuracy(self):
        entries = [
            TimelineEntry(
                "n1", "Chief executive Henrik Dahl said the decision was painful.", FuzzyDate.parse("2019-02-14")
            ),
            TimelineEntry("n1", "He said deliveries would stop in 2021.", FuzzyDate.parse("2019")),  # wrong date
            TimelineEntry("n2", "Mr Lindqvist replaced Henrik Dahl as CEO.", FuzzyDate.parse("2020-01-28")),
            TimelineEntry("n2", "Nordvik agreed to pay 1.2 billion euros.", FuzzyDate.parse("2020-01-28")),  # not gold
        ]
        score = score_timeline("Henrik Dahl", entries, GOLD, {})
        assert (score.gold_mentions, score.recalled, score.entries, score.correct_entries) == (4, 3, 4, 3)
        assert score.recall == 0.75 and score.precision == 0.75
        assert (score.dated_gold, score.dated_correct) == (2, 1)  # the undated gold event is not scored for dates
        assert score.date_accuracy == 0.5
        # Document ids are mapped from the gold's to the ingested ones; another document never matches.
        moved = [TimelineEntry("X", e.sentence, e.date) for e in entries]
        assert score_timeline("Henrik Dahl", moved, GOLD, {"n1": "X"}).recalled == 2
        assert score_timeline("Henrik Dahl", [], GOLD, {}).precision == 0.0

    def test_each_gold_event_of_a_sentence_is_dated_by_the_fact_with_its_date(self):
        # A sentence telling two events at two dates has a fact for each; each gold event is dated by the fact of
        # its own date, not both by the sentence's first fact.
        text = "Orla Brenner joined Varno Freight in 2006 and moved to Quillon Marine in 2014."
        mention = {"doc_id": "n3", "sentence_id": 4, "sentence": text}
        gold = {
            "entity": "Orla Brenner",
            "events": [
                {"date": "2006", "mentions": [mention]},
                {"date": "2014", "mentions": [mention]},
            ],
        }
        both = [TimelineEntry("n3", text, FuzzyDate.parse("2006")), TimelineEntry("n3", text, FuzzyDate.parse("2014"))]
        score = score_timeline("Orla Brenner", both, gold, {})
        assert (score.recalled, score.entries, score.correct_entries) == (1, 2, 2)
        assert (score.dated_gold, score.dated_correct) == (2, 2)
        assert GoldTimeline(gold, {}).judge(both) == [(True, True), (True, True)]
        # One fact dates only one of them right.
        assert score_timeline("Orla Brenner", both[:1], gold, {}).dated_correct == 1
        # An entry holding the sentence within a longer line counts as right wherever it stands on the timeline.
        longer = [both[0], TimelineEntry("n3", "Update: " + text, FuzzyDate.parse("2014"))]
        assert [right for right, _ in GoldTimeline(gold, {}).judge(longer)] == [True, True]

    def test_an_undated_fact_is_listed_undated_and_scored_at_its_document_s_date(self):
        # The gold dates an event whose sentence states no date by the document it is in; the timeline lists such a
        # fact as undated (not drawn), files it at its document's date, and the evaluation scores that date.
        text = "Quillon Marine has appointed Petra Lindqvist as its chief executive."
        document, chunks = make_document("n9", text, dt.date(2019, 2, 14), "Quillon names a chief executive")
        fact = next(f for f in LanguageExtractor().extract(document, chunks).facts if f.text == text)
        assert fact.contract()["undated"] and fact.date_method == "document"
        entries = [TimelineEntry("n9", fact.text, fact.valid_at)]  # as `graph_timeline` builds it
        mention = {"doc_id": "n9", "sentence_id": 0, "sentence": text}
        on_its_day = {"entity": "Petra Lindqvist", "events": [{"date": "2019-02-14", "mentions": [mention]}]}
        score = score_timeline("Petra Lindqvist", entries, on_its_day, {})
        assert (score.recalled, score.dated_gold, score.dated_correct) == (1, 1, 1)
        unknown = {"entity": "Petra Lindqvist", "events": [{"date": "XXXX-XX-XX", "mentions": [mention]}]}
        assert score_timeline("Petra Lindqvist", entries, unknown, {}).dated_gold == 0  # not scored for its date


@pytest.mark.integration
class TestEvaluateTimelines:
    def test_end_to_end_with_baseline(self, work_dir: Path, embedding_model, capsys):
        corpus = work_dir / "corpus.jsonl"
        corpus.write_text(
            "\n".join(
                json.dumps(record)
                for record in [
                    {
                        "id": "n1",
                        "title": "Nordvik to end NV900",
                        "text": NORDVIK_2019,
                        "date": "2019-02-14",
                        "corpus": "t",
                    },
                    {"id": "n2", "title": "Nordvik settles", "text": NORDVIK_2020, "date": "2020-01-28", "corpus": "t"},
                ]
            )
        )
        gold = work_dir / "gold.jsonl"
        gold.write_text(json.dumps(GOLD) + "\n")
        collection = f"t_{uuid.uuid4().hex[:8]}"
        report = evaluate_timelines(corpus, gold, collection=collection, baseline_k=3)
        graph, baseline = report.total("graph"), report.total("baseline")
        assert graph.recall == 1.0 and graph.date_accuracy == 1.0
        assert graph.precision > baseline.precision
        assert set(report.systems) == {"graph", "baseline"} and report.seconds["ingest"] > 0
        # The CLI prints the same three numbers for both systems, in one run.
        out_json, facts = work_dir / "scores.json", work_dir / "run" / "facts.jsonl"
        code = cli_main(
            [
                "eval",
                "timelines",
                "--corpus",
                str(corpus),
                "--gold",
                str(gold),
                "--collection",
                collection,
                "--baseline-k",
                "3",
                "--json",
                str(out_json),
                "--facts",
                str(facts),
            ]
        )
        printed = capsys.readouterr().out
        assert code == 0 and "graph: event recall 1.000" in printed and "baseline: event recall" in printed
        assert json.loads(out_json.read_text())["graph"]["ALL"]["recall"] == 1.0
        # Every fact of both systems' timelines, by corpus id, for `research eval compare`.
        written = {(r["system"], r["entity"]): r["facts"] for r in map(json.loads, facts.read_text().splitlines())}
        assert set(written) == {("graph", "Henrik Dahl"), ("baseline", "Henrik Dahl")}
        said = {"document": "n1", "sentence": GOLD["events"][0]["mentions"][0]["sentence"], "date": "2019-02-14"}
        assert said in written[("graph", "Henrik Dahl")]


SEMEVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "semeval2015_timeline_trial"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.skipif(not SEMEVAL.is_dir(), reason="the SemEval-2015 TimeLine trial data is not next to the repository")
class TestSemEvalTrial:
    def test_graph_timelines_beat_semantic_search(self, embedding_model):
        collection = f"t_{uuid.uuid4().hex[:8]}"
        report = evaluate_timelines(SEMEVAL / "corpus.jsonl", SEMEVAL / "entity_timelines.jsonl", collection)
        graph, baseline = report.total("graph"), report.total("baseline")
        assert graph.recall > baseline.recall and graph.precision > 2 * baseline.precision
        assert graph.date_accuracy > baseline.date_accuracy


class TestEvalCommand:
    def test_unknown_evaluation(self, capsys):
        assert cli_main(["eval", "nonsense"]) == 1
        assert "unknown evaluation 'nonsense'" in capsys.readouterr().err

    def test_bad_input_is_one_sentence(self, work_dir: Path, capsys):
        missing = work_dir / "missing.jsonl"
        assert cli_main(["eval", "timelines", "--corpus", str(missing), "--gold", str(missing)]) == 1
        assert "does not exist" in capsys.readouterr().err
        broken = work_dir / "broken.jsonl"
        broken.write_text('{"id": 1}\nnot json\n')
        assert cli_main(["eval", "timelines", "--corpus", str(broken), "--gold", str(broken)]) == 1
        assert "broken.jsonl line 2 is not JSON" in capsys.readouterr().err

    def test_question_sets_go_to_the_question_evaluation(self, monkeypatch):
        import pipelines.evaluation.questions as questions

        seen = []
        monkeypatch.setattr(questions, "main", lambda argv: seen.append(argv) or 0)
        assert cli_main(["eval", "set.jsonl", "--variants", "dense"]) == 0
        assert seen == [["set.jsonl", "--variants", "dense"]]


@pytest.mark.parametrize("name", ["markets", "politics", "bailout"])
def test_the_invented_timeline_sets_hold_their_own_sentences_and_dates(name):
    # Our own gold timelines (invented names): each gold sentence is its document's title or a sentence of its text,
    # every date reads at a precision, and every entity is written in the corpus.
    root = Path(__file__).resolve().parents[1] / "data"
    corpus = {row["id"]: row for row in load_jsonl(root / f"invented_{name}_corpus.jsonl", ("id", "text", "date"))}
    gold = load_jsonl(root / f"invented_{name}_timelines.jsonl", ("entity", "events"))
    assert gold and all(record["events"] for record in gold)
    text = " ".join(row["text"] for row in corpus.values())
    for record in gold:
        assert record["entity"] in text
        for event in record["events"]:
            assert event["date"].startswith("XXXX") or parse_gold_date(event["date"]) is not None, event
            for mention in event["mentions"]:
                document = corpus[mention["doc_id"]]
                assert mention["sentence"] in document["text"], mention
                assert mention["event_token"] in mention["sentence"], mention
                assert (mention["sentence_id"] == 0) == (mention["sentence"] == document["title"]), mention
