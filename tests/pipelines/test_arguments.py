"""The command lines' whole-number arguments: a bad value is argparse's one line and exit code 2."""

from __future__ import annotations

import argparse

import pytest

from pipelines.arguments import non_negative_int, positive_int


def parse(kind, value: str):
    parser = argparse.ArgumentParser(prog="research")
    parser.add_argument("--n", type=kind)
    return parser.parse_args(["--n", value]).n


@pytest.mark.parametrize(
    ("kind", "value", "said"),
    [
        (positive_int, "0", "must be at least 1, not 0"),
        (positive_int, "-3", "must not be negative, not -3"),
        (positive_int, "two", "must be a whole number, not 'two'"),
        (non_negative_int, "-1", "must not be negative, not -1"),
        (non_negative_int, "1.5", "must be a whole number, not '1.5'"),
    ],
)
def test_a_bad_number_is_one_line(kind, value: str, said: str, capsys) -> None:
    with pytest.raises(SystemExit) as ended:
        parse(kind, value)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert ended.value.code == 2 and error.endswith(said) and "Traceback" not in error


def test_good_numbers_are_read() -> None:
    assert (parse(positive_int, "3"), parse(non_negative_int, "0")) == (3, 0)


def test_the_reader_fit_refuses_no_threads(capsys) -> None:
    from pipelines.evaluation.reader_fit import main

    with pytest.raises(SystemExit):
        main(["measure", "--questions", "q.jsonl", "--corpus", "c.jsonl", "--out", "o.json", "--threads", "0"])
    assert "--threads: must be at least 1, not 0" in capsys.readouterr().err
