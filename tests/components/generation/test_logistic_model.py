"""The packaged logistic models load through the shared reader and score a fixed feature vector as they were fitted
to (the numbers are the ones the models' own fitting code gave, read before their loading was shared; refitted
files are pinned the same way)."""

from __future__ import annotations

import math

import pytest

from components.generation.answer_confidence import AnswerConfidence
from components.generation.logistic_model import read_logistic
from components.generation.span_choice import SpanModel


def fixed_vector(names: tuple[str, ...]) -> dict[str, float]:
    return {name: 0.5 + 0.1 * index for index, name in enumerate(names)}


def test_the_packaged_confidence_model_scores_a_fixed_vector_as_before() -> None:
    model = AnswerConfidence.load()
    assert len(model.features) == 35 and model.threshold == pytest.approx(0.8296682796307772, abs=1e-12)
    assert model.probability(fixed_vector(model.features)) == pytest.approx(0.9999078826591652, abs=1e-12)
    assert model.probability({}) == pytest.approx(0.5416699675384448, abs=1e-12)
    # `found_stretch` left with its rule family: its term at 0, the value it now always has, is in the intercept.
    assert "found_stretch" not in model.features and "found_stretch" in model.meta["retired_features"]
    assert AnswerConfidence.from_dict(model.to_dict()) == model


def test_the_packaged_span_model_scores_a_fixed_vector_as_before() -> None:
    model = SpanModel.load()
    assert len(model.features) == 62
    assert model.probability(fixed_vector(model.features)) == pytest.approx(0.9996493292607799, abs=1e-12)
    assert model.probability({}) == pytest.approx(0.02282808773108597, abs=1e-12)
    assert SpanModel.from_dict(model.to_dict()) == model


def test_the_shared_reader_names_the_model_and_keeps_the_rest_as_meta() -> None:
    data = {"version": 2, "features": ["a"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "intercept": 0.5, "x": 1}
    read = read_logistic(data, "toy model", 2, {"a"}, LookupError)
    assert read.numbers == {"intercept": 0.5} and read.meta == {"version": 2, "intercept": 0.5, "x": 1}
    with pytest.raises(LookupError, match="^the toy model lacks or mistypes 'threshold'$"):
        read_logistic(data, "toy model", 2, {"a"}, LookupError, ("intercept", "threshold"))
    with pytest.raises(LookupError, match="^the toy model holds a number that is not finite$"):
        read_logistic({**data, "coef": [math.inf]}, "toy model", 2, {"a"}, LookupError)
    with pytest.raises(
        LookupError,
        match=r"^the toy model reads unknown features: a \(this version does not compute them: fit the file again "
        r"with its `research fit` command\)$",
    ):
        read_logistic(data, "toy model", 2, {"b"}, LookupError)


def test_a_yes_no_column_is_centred_not_divided_and_a_measured_one_is_divided_by_twice_its_spread() -> None:
    import numpy as np

    from components.generation.logistic_model import standard_scale

    matrix = np.array([[0.0, 1.0, 7.0], [0.0, 3.0, 7.0], [1.0, 5.0, 7.0], [0.0, 7.0, 7.0]])
    assert standard_scale(matrix).tolist() == pytest.approx([matrix[:, 0].std(), matrix[:, 1].std(), 1.0])
    assert standard_scale(matrix, binary_unscaled=True).tolist() == pytest.approx([1.0, 2 * matrix[:, 1].std(), 2.0])


def test_unscaled_a_yes_no_feature_true_on_few_rows_is_held_back_by_the_penalty() -> None:
    # 300 rows, half right by a measured feature; a rare flag is 1 on three rows, all right. Divided by its small
    # spread the flag's column is scaled up and the penalty hardly holds its weight back; centred only, it is.
    import numpy as np

    from components.generation.logistic_model import fit_standardised

    rng = np.random.default_rng(7)
    measured = rng.normal(size=300)
    labels = [bool(value > 0) ^ bool(rng.random() < 0.25) for value in measured]
    flag = np.zeros(300)
    for row in (0, 100, 200):
        flag[row], labels[row] = 1.0, True
    matrix = np.column_stack([measured, flag])

    def raw_flag_weight(binary_unscaled: bool) -> float:
        _, scale, coef, _ = fit_standardised(matrix, matrix.mean(axis=0), labels, 1.0, 1000, binary_unscaled)
        return coef[1] / scale[1]

    assert raw_flag_weight(False) > 1.5 * raw_flag_weight(True) > 0
