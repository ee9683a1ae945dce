"""The fitted-model files (answer confidence, answer scoring, entity kinds, event confidence) are read one way, and a
file that is missing, not JSON or not an object is one sentence naming it, never a traceback."""

from __future__ import annotations

import pytest

from components.generation.answer_confidence import AnswerConfidence, ConfidenceModelError
from components.generation.answer_scoring import AnswerScoring, ScoringModelError
from components.graph.event_confidence import EventConfidenceModel
from components.graph.kinds import KindModel
from components.model_files import read_json_object

LOADERS = [
    (AnswerConfidence.load, ConfidenceModelError, "confidence model"),
    (AnswerScoring.load, ScoringModelError, "scoring file"),
    (KindModel.load, ValueError, "entity-kind model"),
    (EventConfidenceModel.load, ValueError, "event-confidence model"),
]


@pytest.mark.parametrize(("load", "error", "what"), LOADERS)
@pytest.mark.parametrize(
    ("content", "says"), [(None, "no {what} at"), ("{not json", "is not JSON"), ("[1, 2]", "is not a JSON object")]
)
def test_a_bad_model_file_is_one_sentence(tmp_path, load, error, what, content, says) -> None:
    path = tmp_path / "model.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(error, match=says.format(what=what)) as raised:
        load(str(path))
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_an_entity_kind_model_without_its_fields_is_one_sentence(tmp_path) -> None:
    path = tmp_path / "kinds.json"
    path.write_text('{"classes": ["person"]}', encoding="utf-8")
    with pytest.raises(ValueError, match="is not one the fitting script writes"):
        KindModel.load(path)


def test_a_json_object_is_read_as_it_is(tmp_path) -> None:
    path = tmp_path / "model.json"
    path.write_text('{"threshold": 0.5}', encoding="utf-8")
    assert read_json_object(path, "model") == {"threshold": 0.5}
