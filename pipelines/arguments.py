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
