"""The capture scorer (`scripts/score_captures.py`): per set and half, with each part's answer written out."""

from __future__ import annotations

import json
from pathlib import Path

from pipelines.evaluation.capture import write_capture
from tests.pipelines.cli.test_fit import capture_records
from tests.script_modules import load_script


def _script():
    return load_script("score_captures")


def test_scores_a_capture_per_half_and_writes_each_questions_parts(tmp_path: Path, capsys) -> None:
    write_capture(capture_records(), tmp_path / "squad.jsonl")
    out = tmp_path / "parts.jsonl"
    assert _script().main(["squad", "--captures", str(tmp_path), "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("set half q parts shown/right")
    rows = [line.split() for line in printed[1:]]
    assert [row[:2] for row in rows] == [["squad_dev_a", "tune"], ["squad_dev_a", "check"]]
    assert sum(int(row[2]) for row in rows) == 6
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == 6 and all(r["set"] == "squad_dev_a" and r["parts"] for r in written)
    assert all(len(part) == 3 and isinstance(part[2], bool) for r in written for part in r["parts"])


def test_a_missing_capture_or_an_unknown_set_is_refused_with_a_message(tmp_path: Path, capsys) -> None:
    assert _script().main(["squad", "--captures", str(tmp_path)]) == 2
    assert "missing captures ['squad.jsonl']" in capsys.readouterr().err
    assert _script().main(["trivia", "--captures", str(tmp_path)]) == 2
    assert "unknown sets ['trivia']" in capsys.readouterr().err


def test_a_broken_capture_is_named_with_its_line_not_a_traceback(tmp_path: Path, capsys) -> None:
    (tmp_path / "squad.jsonl").write_text('{"query": "Who built the Orlan mill?"\n', encoding="utf-8")
    assert _script().main(["squad", "--captures", str(tmp_path)]) == 2
    assert "cannot score the captures: squad.jsonl line 1 is not JSON" in capsys.readouterr().err
