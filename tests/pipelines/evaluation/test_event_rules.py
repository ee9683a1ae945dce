"""The rule-family audit switches each family off within its block only, through attributes that exist."""

from __future__ import annotations

import pytest

from components.graph import extraction
from pipelines.evaluation import event_rules
from pipelines.evaluation.event_rules import RULE_FAMILIES, switched_off


@pytest.mark.parametrize("family", list(RULE_FAMILIES))
def test_each_family_switches_existing_rules_and_restores_them(family: str) -> None:
    patches = RULE_FAMILIES[family]
    before = [owner.__dict__[name] for owner, name, _ in patches]  # KeyError: a rule was renamed
    with switched_off(family):
        assert [owner.__dict__[name] for owner, name, _ in patches] == [value for _, _, value in patches]
    assert [owner.__dict__[name] for owner, name, _ in patches] == before


def test_a_switched_off_rule_changes_what_the_extractor_calls() -> None:
    with switched_off("supposition"):
        assert extraction.supposed(None) is False
    assert extraction.supposed is not event_rules._no


def test_an_unknown_family_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert event_rules.main(["--tune", str(tmp_path), "--check", str(tmp_path), "--families", "nonsense"]) == 2
    assert "unknown rule families nonsense" in capsys.readouterr().err
