"""Argument types the command lines share: a bad value is one line from argparse, never a stack trace."""

from __future__ import annotations

import argparse


def non_negative_int(value: str) -> int:
    """A whole number of at least 0 (an offset, a count that may be none)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return number


def positive_int(value: str) -> int:
    """A whole number of at least 1 (a limit, a count of threads, steps or tokens)."""
    number = non_negative_int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return number


def int_between(low: int, high: int):  # noqa: ANN201 - an argparse type
    """The type of a whole number from `low` to `high` (a top-k, a depth)."""

    def whole_number(value: str) -> int:
        number = non_negative_int(value) if low >= 0 else int(value)
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, not {value}")
        return number

    whole_number.__name__ = f"whole number from {low} to {high}"
    return whole_number


def non_blank(value: str) -> str:
    """Text that is not empty or only spaces (a name, a search text), stripped."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value.strip()
