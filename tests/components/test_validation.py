"""The shared parameter checks: what they accept is returned as given, what they refuse names the parameter."""

from __future__ import annotations

import pytest

from components.validation import bounded_count, bounded_text, clamp, positive, positive_int, within


@pytest.mark.parametrize(
    ("value", "low", "high", "whole"),
    [(0, 0, 1, False), (1, 0, 1, False), (0.5, 0, 1, False), (0.1, 0.1, 0.9, False), (50, 1, 50, True)],
)
def test_within_returns_a_value_in_range(value: float, low: float, high: float, whole: bool) -> None:
    assert within("x", value, low, high, whole=whole) == value


@pytest.mark.parametrize(
    ("value", "whole", "message"),
    [
        (-0.1, False, "x must be between 0 and 10, not -0.1"),
        (11, False, "x must be between 0 and 10, not 11"),
        (2.5, True, "x must be an integer between 0 and 10, not 2.5"),
        (True, True, "x must be an integer between 0 and 10, not True"),
    ],
)
def test_within_names_the_parameter_and_the_range(value: object, whole: bool, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        within("x", value, 0, 10, whole=whole)


@pytest.mark.parametrize("value", [0.5, 7, 1e-9])
def test_positive_returns_a_number_above_zero(value: float) -> None:
    assert positive("timeout_s", value) == value


@pytest.mark.parametrize("value", [0, -1.5, float("nan")])
def test_positive_refuses_zero_below_and_nan_naming_the_parameter(value: float) -> None:
    with pytest.raises(ValueError, match=f"^timeout_s must be positive, not {value!r}$"):
        positive("timeout_s", value)


def test_positive_int_and_bounded_count() -> None:
    assert positive_int("n", 3) == 3
    with pytest.raises(ValueError, match="n must be a positive integer"):
        positive_int("n", 0)
    assert bounded_count("n", None, 5, 10) == 5
    assert bounded_count("n", 99, 5, 10) == 10
    assert bounded_count("n", 0, 5, 10) == 1
    with pytest.raises(ValueError, match="n must be a whole number"):
        bounded_count("n", "3", 5, 10)


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [(5, 1, 10, 5), ("7", 1, 10, 7), (0, 1, 10, 1), (99, 1, 10, 10), (0.25, 0.0, 1.0, 0.25), (3, 0.0, 1.0, 1.0)],
)
def test_clamp_reads_a_number_of_the_bounds_type_and_keeps_it_in_range(value, low, high, expected) -> None:
    result = clamp(value, low, high, "x")
    assert result == expected and type(result) is type(low)


@pytest.mark.parametrize("value", [None, True, "three", float("nan"), [1]])
def test_clamp_names_the_parameter_for_what_is_not_a_number(value) -> None:
    with pytest.raises(ValueError, match=r"^limit must be a number, not "):
        clamp(value, 1, 50, "limit")


@pytest.mark.parametrize("value", [None, True, "three", float("nan"), float("inf")])
def test_clamp_gives_the_default_for_what_is_not_a_number_when_there_is_one(value) -> None:
    assert clamp(value, 1, 50, "limit", default=10) == 10


@pytest.mark.parametrize(("value", "expected"), [("  a question \n", "a question"), ("x" * 10, "x" * 10)])
def test_bounded_text_returns_the_text_stripped(value: str, expected: str) -> None:
    assert bounded_text("query", value, 10) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "query is empty"),
        (" \n\t", "query is empty"),
        ("x" * 1001, r"query is longer than 1,000 characters \(1,001\)"),
        (42, "query must be text, not int"),
        (["a", "b"], "query must be text, not list"),
    ],
)
def test_bounded_text_names_the_parameter_and_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        bounded_text("query", value, 1000)
