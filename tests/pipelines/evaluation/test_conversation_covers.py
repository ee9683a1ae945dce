"""A reported conflict covers the planted values only when each is the same value, never a part of one."""

from pipelines.evaluation.conversation import _covers


def _conflict(*values: str) -> dict:
    return {"values": [{"value": value} for value in values]}


def test_a_number_inside_a_year_does_not_cover_it() -> None:
    assert not _covers(_conflict("20", "2020"), ["2019", "2020"])
    assert not _covers(_conflict("2019", "2020"), ["20", "2020"])


def test_the_same_values_in_other_forms_cover_the_planted_ones() -> None:
    assert _covers(_conflict("March 2019", "2020"), ["2019", "2020"])
    assert _covers(_conflict("$3 million", "4.5 million dollars"), ["3 million", "4.5 million"])
    assert _covers(_conflict("Orrin Vale", "Tessa Quill"), ["Tessa Quill", "Orrin Vale"])


def test_other_values_do_not_cover_the_planted_ones() -> None:
    assert not _covers(_conflict("$30 million", "$4 million"), ["3 million", "4 million"])
    assert not _covers(_conflict("Orrin Vale", "Tessa"), ["Orrin Vale", "Tessa Quill"])
    assert not _covers(_conflict("May 2019", "2020"), ["March 2019", "2020"])
