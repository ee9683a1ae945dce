"""The extractive reader's fit: tune/check examples from SQuAD-style files, span labels of the training windows, the
selective numbers, and the shipped delta (only the trained tensors) laid back over the installed encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.evaluation import reader_fit
from pipelines.evaluation.reader_fit import ReaderSettings

PARAGRAPH = (
    "The Vessmark Observatory was founded in 1871 by the astronomer Orvelle Dunmark. "
    "It stands on the northern ridge above the town of Kelbrin and houses a refracting telescope."
)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@pytest.fixture
def squad_files(tmp_path: Path) -> tuple[Path, Path]:
    corpus = _write(
        tmp_path / "corpus.jsonl",
        [{"id": "squad-03-000", "text": PARAGRAPH}, {"id": "squad-15-000", "text": PARAGRAPH}],
    )
    start = PARAGRAPH.index("Orvelle Dunmark")
    questions = _write(
        tmp_path / "questions.jsonl",
        [
            {
                "id": "q1",
                "question": "Who founded the Vessmark Observatory?",
                "answers": ["astronomer Orvelle Dunmark", "Orvelle Dunmark"],
                "gold_doc_ids": ["squad-03-000"],
                "answer_starts": [start, start],
            },
            {
                "id": "q2",
                "question": "Where does the observatory stand?",
                "answers": ["northern ridge"],
                "gold_doc_ids": ["squad-15-000"],
                "answer_starts": [999],
            },
        ],
    )
    return questions, corpus


def test_examples_of_a_half_carry_their_gold_paragraph_and_the_answer_found_at_its_start(squad_files) -> None:
    questions, corpus = squad_files
    tune = reader_fit.squad_examples(questions, corpus, "tune")
    check = reader_fit.squad_examples(questions, corpus, "check")
    assert [e["id"] for e in tune] == ["q1"] and [e["id"] for e in check] == ["q2"]
    assert tune[0]["answer_text"] == "Orvelle Dunmark"  # the answer that really sits at the listed start
    assert tune[0]["context"][tune[0]["answer_start"] :].startswith("Orvelle Dunmark")
    # A start that points nowhere falls back to where the answer's text occurs.
    assert check[0]["answer_start"] == PARAGRAPH.index("northern ridge")


@pytest.fixture(scope="module")
def tokenizer():
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(reader_fit.base_model_path())


def test_training_windows_label_the_answer_tokens_or_the_cls_slot_when_the_window_lacks_it(
    squad_files, tokenizer
) -> None:
    questions, corpus = squad_files
    examples = reader_fit.squad_examples(questions, corpus, "tune")
    features = reader_fit.training_features(tokenizer, examples, ReaderSettings(max_length=32, stride=8))
    labelled = [
        tokenizer.decode(ids[start : end + 1])
        for ids, start, end in zip(
            features["input_ids"].tolist(), features["start_positions"], features["end_positions"], strict=True
        )
        if start > 0
    ]
    assert labelled and set(labelled) == {"orvelle dunmark"}
    assert len(features["input_ids"]) > len(labelled)  # the windows without the whole answer point at [CLS]
    pairs = zip(features["start_positions"].tolist(), features["end_positions"].tolist(), strict=True)
    assert all(start == 0 for start, end in pairs if end == 0)


def test_selective_numbers_show_the_most_confident_first() -> None:
    rows = [(0.9, 1.0), (0.8, 1.0), (0.7, 0.0), (0.6, 1.0), (0.5, 0.0), (0.4, 0.0)]
    numbers = reader_fit.selective_numbers(rows)
    assert numbers["coverage_at_precision_0.85"] == pytest.approx(2 / 6, abs=1e-4)
    assert numbers["coverage_at_precision_0.90"] == pytest.approx(2 / 6, abs=1e-4)
    assert numbers["precision_at_coverage_0.50"] == pytest.approx(2 / 3, abs=1e-4)
    assert numbers["auc"] == pytest.approx(8 / 9, abs=1e-4)
    assert numbers["share_correct"] == pytest.approx(0.5)


def test_the_delta_holds_only_the_trained_tensors_and_loads_back_over_the_installed_encoder(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    model = reader_fit.new_reader(freeze_layers=5, seed=1)
    trained = reader_fit.trainable_names(model, 5)
    assert trained and all(name.startswith(("qa_outputs.", "bert.encoder.layer.5.")) for name in trained)
    with torch.no_grad():
        model.qa_outputs.weight.add_(0.25)
    sizes = reader_fit.save_reader(model, tmp_path, ReaderSettings(max_length=64, stride=16), {"command": "test"})
    assert sizes["trained_parameters"] == sum(p.numel() for n, p in model.named_parameters() if n in trained)
    loaded, tokenizer, settings = reader_fit.load_reader(tmp_path)
    assert settings == ReaderSettings(max_length=64, stride=16)
    assert torch.allclose(loaded.qa_outputs.weight, model.qa_outputs.weight, atol=1e-3)

    passages = [PARAGRAPH, "Kelbrin lies on a river. " * 20]
    spans = reader_fit.read_spans(loaded, tokenizer, settings, "Who founded the observatory?", passages)
    assert [span["passage"] for span in spans] == [0, 1]
    for span in spans:
        assert span["text"] and span["text"] in passages[span["passage"]]
        assert 0.0 < span["probability"] <= 1.0
    # One question per passage reads each pair as if it were asked alone.
    asked = ["Who founded the observatory?", "Where is Kelbrin?"]
    together = reader_fit.read_spans(loaded, tokenizer, settings, asked, passages)
    pairs = zip(asked, passages, strict=True)
    alone = [reader_fit.read_spans(loaded, tokenizer, settings, q, [p])[0] for q, p in pairs]
    assert [span["text"] for span in together] == [span["text"] for span in alone]
    assert [s["probability"] for s in together] == pytest.approx([s["probability"] for s in alone], abs=1e-4)


def test_training_goes_on_from_an_earlier_fit_and_writes_its_delta(squad_files, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    questions, corpus = squad_files
    earlier = reader_fit.new_reader(freeze_layers=5, seed=1)
    with torch.no_grad():
        earlier.qa_outputs.bias.fill_(5.0)
    reader_fit.save_reader(earlier, tmp_path / "earlier", ReaderSettings(max_length=64, stride=16), {})
    common = ["--questions", str(questions), "--corpus", str(corpus), "--freeze-layers", "5", "--max-steps", "1"]
    common += ["--max-length", "64", "--stride", "16", "--lr", "1e-9", "--threads", "1"]
    assert reader_fit.main(["train", *common, "--init", str(tmp_path / "earlier"), "--out", str(tmp_path / "on")]) == 0
    assert reader_fit.main(["train", *common, "--out", str(tmp_path / "fresh")]) == 0
    went_on, _, _ = reader_fit.load_reader(tmp_path / "on")
    fresh, _, _ = reader_fit.load_reader(tmp_path / "fresh")
    assert went_on.qa_outputs.bias.tolist() == pytest.approx([5.0, 5.0], abs=1e-2)
    assert fresh.qa_outputs.bias.tolist() != pytest.approx([5.0, 5.0], abs=1e-2)
    saved = json.loads((tmp_path / "on" / reader_fit.SETTINGS_FILE).read_text(encoding="utf-8"))
    assert saved["steps"] == 1 and saved["tune_questions"] == 1


def test_bad_input_is_one_sentence_and_nothing_is_trained_or_lost(squad_files, tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    questions, corpus = squad_files
    # A tune half with no answer found in its paragraph: refused, no reader written.
    unanswerable = _write(
        tmp_path / "unanswerable.jsonl",
        [{**json.loads(questions.read_text(encoding="utf-8").splitlines()[0]), "answers": ["the harbour"]}],
    )
    common = ["--corpus", str(corpus), "--threads", "1", "--max-steps", "1", "--max-length", "64", "--stride", "16"]
    out = tmp_path / "never"
    assert reader_fit.main(["train", "--questions", str(unanswerable), *common, "--out", str(out)]) == 2
    assert "no tune-half question" in capsys.readouterr().err and not out.exists()
    # A questions file that is not there, and a folder `train` did not write: one sentence each, exit 2.
    assert reader_fit.main(["train", "--questions", str(tmp_path / "absent.jsonl"), *common, "--out", str(out)]) == 2
    assert "absent.jsonl" in capsys.readouterr().err
    measured = ["measure", "--questions", str(questions), "--corpus", str(corpus), "--threads", "1"]
    assert reader_fit.main([*measured, "--reader", str(tmp_path), "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "is not a folder `train` wrote" in err and "Traceback" not in err
    # An output that cannot be written is found before any work.
    replayed = [*measured, "--capture", str(tmp_path / "absent.capture.jsonl"), "--product"]
    assert reader_fit.main([*replayed, "--out", str(tmp_path / "missing" / "m.json")]) == 2
    assert "missing" in capsys.readouterr().err
    # A run that fails midway (here: its capture is not there) leaves an earlier report and predictions as they were.
    earlier, predicted = _write(tmp_path / "earlier.json", [{"top1": 1}]), _write(tmp_path / "p.jsonl", [{"id": "q1"}])
    assert reader_fit.main([*replayed, "--out", str(earlier), "--predictions", str(predicted)]) == 2
    assert "absent.capture.jsonl" in capsys.readouterr().err
    assert json.loads(earlier.read_text(encoding="utf-8")) == {"top1": 1}
    assert json.loads(predicted.read_text(encoding="utf-8")) == {"id": "q1"}
    # Neither a reader nor the product's replay: nothing to measure, said so, and no report written.
    assert reader_fit.main([*measured, "--capture", str(earlier), "--out", str(tmp_path / "empty.json")]) == 2
    assert "nothing to measure" in capsys.readouterr().err and not (tmp_path / "empty.json").exists()


@pytest.mark.parametrize(
    "flags",
    [
        ["train", "--threads", "0"],
        ["train", "--batch-size", "0"],
        ["train", "--stride", "x"],
        ["measure", "--chunks", "0"],
    ],
)
def test_a_count_below_one_is_refused_by_its_flag_before_any_work(flags, squad_files, tmp_path: Path, capsys) -> None:
    questions, corpus = squad_files
    command, *rest = flags
    argv = [command, "--questions", str(questions), "--corpus", str(corpus), "--out", str(tmp_path / "o"), *rest]
    with pytest.raises(SystemExit) as stopped:
        reader_fit.main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and rest[0] in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_an_output_folder_that_cannot_be_made_is_found_before_the_training(
    squad_files, tmp_path: Path, monkeypatch, capsys
) -> None:
    pytest.importorskip("torch")
    questions, corpus = squad_files
    trained: list[int] = []
    monkeypatch.setattr(reader_fit, "new_reader", lambda *args: trained.append(1))
    blocked = _write(tmp_path / "a-file", [])
    argv = ["train", "--questions", str(questions), "--corpus", str(corpus), "--threads", "1", "--max-steps", "1"]
    assert reader_fit.main([*argv, "--max-length", "64", "--stride", "16", "--out", str(blocked / "reader")]) == 2
    err = capsys.readouterr().err
    assert "a-file" in err and "Traceback" not in err and not trained


def test_a_question_longer_than_the_window_is_read_by_its_first_half_window() -> None:
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(reader_fit.base_model_path())
    settings = ReaderSettings(max_length=64, stride=16)
    question = "Who founded the observatory on the northern ridge above the town " * 8
    encoded = reader_fit.windows(tokenizer, [question, "Who founded it?"], [PARAGRAPH, PARAGRAPH], settings)
    asked = [
        [token for token, sid in zip(ids, encoded.sequence_ids(index), strict=True) if sid == 0]
        for index, ids in enumerate(encoded["input_ids"])
    ]
    assert {len(tokens) for tokens in asked if len(tokens) > 10} == {32}  # the long question: half a window
    assert all(1 in encoded.sequence_ids(index) for index in range(len(asked)))  # every window holds paragraph


def test_an_overlap_the_window_has_no_room_for_is_one_sentence(squad_files, tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    questions, corpus = squad_files
    argv = ["train", "--questions", str(questions), "--corpus", str(corpus), "--threads", "1", "--max-steps", "1"]
    assert reader_fit.main([*argv, "--max-length", "64", "--stride", "40", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "stride (40) must be below 29" in err and "Traceback" not in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("settings", ["not json", '{"steps": 1}', '{"settings": {"windowz": 1}}', "[1]"])
def test_a_reader_folder_with_broken_settings_is_one_sentence(squad_files, tmp_path: Path, settings, capsys) -> None:
    questions, corpus = squad_files
    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / reader_fit.SETTINGS_FILE).write_text(settings, encoding="utf-8")
    (folder / reader_fit.DELTA_FILE).write_bytes(b"")
    argv = ["measure", "--questions", str(questions), "--corpus", str(corpus), "--threads", "1"]
    assert reader_fit.main([*argv, "--reader", str(folder), "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "is not the settings `train` writes" in err and reader_fit.SETTINGS_FILE in err and "Traceback" not in err


def test_a_delta_that_is_not_this_encoders_is_one_sentence(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    model = reader_fit.new_reader(freeze_layers=6, seed=1)
    (tmp_path / reader_fit.DELTA_FILE).write_bytes(b"not tensors")
    with pytest.raises(reader_fit.EvaluationInputError, match="is not a safetensors file"):
        reader_fit.lay_delta_over(model, tmp_path)
    save_file({"qa_outputs.bias": torch.zeros(3)}, str(tmp_path / reader_fit.DELTA_FILE))
    with pytest.raises(reader_fit.EvaluationInputError, match="of another shape.*qa_outputs.bias"):
        reader_fit.lay_delta_over(model, tmp_path)
    save_file({"qa_outputs.bias": torch.ones(2)}, str(tmp_path / reader_fit.DELTA_FILE))
    reader_fit.lay_delta_over(model, tmp_path)
    assert model.qa_outputs.bias.tolist() == [1.0, 1.0]
