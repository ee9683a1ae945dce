"""The fitted logistic models' shared parts (the answer-confidence model and the span model): reading and checking
a versioned model file with one-sentence errors, scoring a feature mapping, writing the file back, and fitting
standardised weights with scikit-learn."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from components.model_files import read_json_object

COLUMNS = ("mean", "scale", "coef")


@dataclass(frozen=True)
class LogisticFile:
    """What a checked model file holds: the features, their `mean`/`scale`/`coef` columns, the named numbers
    (`intercept` and any others the model reads) and the rest as `meta`."""

    features: tuple[str, ...]
    columns: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]
    numbers: dict[str, float]
    meta: dict[str, Any]


@dataclass(frozen=True)
class LogisticModel:
    """A fitted logistic model over named, standardised features, kept in a versioned JSON file. A subclass names
    the file (`WHAT`, `VERSION`, `KNOWN` features, its `ERROR`, `DEFAULT_PATH`) and how an absent feature reads
    (`ABSENT_READS_AS_MEAN`: as its mean, and so does one that is not finite; otherwise as 0)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    meta: Mapping[str, Any]

    WHAT: ClassVar[str]
    VERSION: ClassVar[int]
    KNOWN: ClassVar[Collection[str]]
    ERROR: ClassVar[type[Exception]]
    DEFAULT_PATH: ClassVar[Path]
    NUMBERS: ClassVar[tuple[str, ...]] = ("intercept",)
    ABSENT_READS_AS_MEAN: ClassVar[bool] = False

    def probability(self, features: Mapping[str, float]) -> float:
        if self.ABSENT_READS_AS_MEAN:
            return logistic_probability(self, features, absent=lambda mean: mean, finite_only=True)
        return logistic_probability(self, features, absent=lambda mean: 0.0, finite_only=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """The model a file holds; `ERROR` (one sentence) when it is not one this code can use."""
        read = read_logistic(data, cls.WHAT, cls.VERSION, cls.KNOWN, cls.ERROR, cls.NUMBERS)
        return cls(read.features, *read.columns, meta=read.meta, **read.numbers)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Any:
        """The model in `path` (the packaged file when None); read once per path."""
        return _load(cls, str(Path(path) if path else cls.DEFAULT_PATH))

    def to_dict(self) -> dict[str, Any]:
        return logistic_dict(self, *self.NUMBERS)


@lru_cache(maxsize=16)
def _load(cls: type[LogisticModel], path: str) -> LogisticModel:
    return cls.from_dict(read_json_object(path, cls.WHAT, cls.ERROR))


def read_logistic(
    data: Mapping[str, Any],
    what: str,
    version: int,
    known: Collection[str],
    error: type[Exception],
    numbers: Sequence[str] = ("intercept",),
) -> LogisticFile:
    """The model a file's JSON object holds; `error` with one sentence naming `what` when its version, a column or
    a number is missing, mistyped, not finite or inconsistent, or when it reads features outside `known`."""
    if data.get("version") != version:
        raise error(f"the {what} is version {data.get('version')!r}, not {version}")
    try:
        features = tuple(str(name) for name in data["features"])
        mean, scale, coef = (tuple(float(value) for value in data[key]) for key in COLUMNS)
        named = {key: float(data[key]) for key in numbers}
    except (KeyError, TypeError, ValueError) as exc:
        raise error(f"the {what} lacks or mistypes {exc}") from exc
    if not all(math.isfinite(value) for value in (*named.values(), *mean, *scale, *coef)):
        raise error(f"the {what} holds a number that is not finite")
    if any(len(column) != len(features) for column in (mean, scale, coef)) or any(value <= 0 for value in scale):
        raise error(f"the {what}'s features, mean, scale and coef do not match")
    unknown = sorted(set(features) - set(known))
    if unknown:
        # Most often a file fitted by an older version, whose features a deleted rule computed.
        raise error(
            f"the {what} reads unknown features: {', '.join(unknown)} (this version does not compute them: fit the "
            f"file again with its `research fit` command)"
        )
    meta = {key: value for key, value in data.items() if key not in {"features", *COLUMNS}}
    return LogisticFile(features, (mean, scale, coef), named, meta)


def logistic_probability(
    model: Any, features: Mapping[str, float], absent: Callable[[float], float], finite_only: bool
) -> float:
    """The probability `model` (with `features`, `mean`, `scale`, `coef` and `intercept`) gives `features`: a
    feature that is absent reads as `absent(mean)`; with `finite_only`, one that is not a finite number reads as its
    mean."""
    z = model.intercept
    for name, mean, scale, weight in zip(model.features, model.mean, model.scale, model.coef, strict=True):
        value = float(features[name]) if name in features else absent(mean)
        if finite_only and not math.isfinite(value):
            value = mean
        z += weight * (value - mean) / scale
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def logistic_dict(model: Any, *numbers: str) -> dict[str, Any]:
    """The JSON object of a model file: its meta, features, columns and the named numbers."""
    return {
        **model.meta,
        "features": list(model.features),
        **{key: list(getattr(model, key)) for key in COLUMNS},
        **{key: getattr(model, key) for key in numbers},
    }


def check_labels(rows: Sequence[Any], labels: Sequence[bool], what: str) -> None:
    """`ValueError` unless every row has a label and both labels occur (`what` names the rows in the message)."""
    if len(rows) != len(labels) or not rows:
        raise ValueError("fit needs as many labels as rows, and at least one")
    if len(set(bool(label) for label in labels)) < 2:
        raise ValueError(f"fit needs both right and wrong {what} among the labelled rows")


def fit_standardised(
    matrix: Any,
    mean: Any,
    labels: Sequence[bool],
    c: float,
    max_iter: int,
    binary_unscaled: bool = False,
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], float]:
    """A logistic regression (scikit-learn, L2 with strength `1/c`) on the matrix's columns standardised by `mean`
    and their spread (1 where a column does not vary): `(mean, scale, coef, intercept)`.

    With `binary_unscaled`, a column holding only 0 and 1 is centred and not divided, and every other column is
    divided by twice its standard deviation (Gelman 2008, "Scaling regression inputs by dividing by two standard
    deviations"): a one-unit weight is then about the same change of the logit for a yes/no feature as for a typical
    change of a measured one, and the penalty weighs a yes/no feature's effect whatever its share of the rows (divided
    by its spread, a feature that is 1 on a few rows is scaled up and its effect is barely penalised)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    scale = standard_scale(matrix, binary_unscaled)
    model = LogisticRegression(C=c, max_iter=max_iter).fit((matrix - mean) / scale, np.array(labels, dtype=int))
    return (
        tuple(float(value) for value in mean),
        tuple(float(value) for value in scale),
        tuple(float(value) for value in model.coef_[0]),
        float(model.intercept_[0]),
    )


def standard_scale(matrix: Any, binary_unscaled: bool = False) -> Any:
    """Each column's scale for `fit_standardised`: its standard deviation (1 where it does not vary); with
    `binary_unscaled`, 1 for a column of only 0 and 1 and twice that scale for the others (2 where one does not vary).
    A yes/no feature absent on some rows and filled with its mean before the fit is no longer 0 and 1 only, so it is
    scaled as a measured one."""
    import numpy as np

    spread = matrix.std(axis=0)
    spread[spread == 0] = 1.0
    if not binary_unscaled:
        return spread
    binary = np.array([bool(np.isin(column, (0.0, 1.0)).all()) for column in matrix.T], dtype=bool)
    return np.where(binary, 1.0, 2.0 * spread)
