import inspect

import pytest
from haystack import component, default_from_dict
from haystack.core.errors import SerializationError
from haystack.core.serialization import allow_deserialization_module
from haystack.utils import Secret

from components.serialization import (
    InitParameterSerialization,
    init_parameters_to_dict,
    with_base_parameters,
    without_wiping_flags,
)


class _Store:
    def __init__(self, table: str = "chunks", recreate_table: bool = False) -> None:
        self.table = table
        self.recreate_table = recreate_table

    def to_dict(self) -> dict:
        return init_parameters_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "_Store":
        return default_from_dict(cls, data)


@component
class _Reader:
    def __init__(self, limit: int = 5, api_key: Secret | None = None, document_store: _Store | None = None) -> None:
        self.limit = limit
        self.api_key = api_key
        self.document_store = document_store

    @component.output_types(n=int)
    def run(self, query: str) -> dict:
        return {"n": self.limit}


@component
class _Renamed:
    def __init__(self, limit: int = 5) -> None:
        self._limit = limit

    @component.output_types(n=int)
    def run(self, query: str) -> dict:
        return {"n": self._limit}


class TestInitParametersToDict:
    def test_every_parameter_round_trips_with_secret_and_store(self, monkeypatch):
        monkeypatch.setenv("READER_KEY", "s3cret")
        allow_deserialization_module(__name__)  # the nested store class lives in this test module
        reader = _Reader(limit=7, api_key=Secret.from_env_var("READER_KEY"), document_store=_Store("docs"))
        data = init_parameters_to_dict(reader)
        assert data["init_parameters"]["limit"] == 7
        assert data["init_parameters"]["api_key"] == {"type": "env_var", "env_vars": ["READER_KEY"], "strict": True}
        assert "s3cret" not in repr(data)
        again = default_from_dict(_Reader, data)
        assert again.limit == 7 and again.api_key.resolve_value() == "s3cret"
        assert isinstance(again.document_store, _Store) and again.document_store.table == "docs"

    def test_a_wiping_flag_is_never_written_as_true(self):
        data = init_parameters_to_dict(_Reader(document_store=_Store(recreate_table=True)))
        assert data["init_parameters"]["document_store"]["init_parameters"]["recreate_table"] is False
        assert without_wiping_flags({"init_parameters": {"drop_old": True}}) == {"init_parameters": {"drop_old": False}}

    def test_a_parameter_kept_under_another_name_is_an_error_not_a_silent_default(self):
        with pytest.raises(SerializationError, match="'limit'"):
            init_parameters_to_dict(_Renamed(limit=9))
        assert init_parameters_to_dict(_Renamed(limit=9), limit=9)["init_parameters"] == {"limit": 9}


class _SharedBase(InitParameterSerialization):
    def __init__(self, collection: str = "docs", timeout_s: float = 7.0) -> None:
        self.collection = collection
        self.timeout_s = timeout_s


@component
class _WithShared(_SharedBase):
    @with_base_parameters(_SharedBase.__init__)
    def __init__(self, limit: int = 5, **shared) -> None:  # noqa: ANN003
        self.limit = limit
        _SharedBase.__init__(self, **shared)

    @component.output_types(n=int)
    def run(self, query: str) -> dict:
        return {"n": self.limit}


class TestWithBaseParameters:
    def test_the_signature_lists_its_own_then_the_base_parameters_keyword_only(self):
        parameters = inspect.signature(_WithShared.__init__).parameters
        assert list(parameters) == ["self", "limit", "collection", "timeout_s"]
        assert parameters["collection"].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters["timeout_s"].default == 7.0

    def test_every_parameter_is_serialised_and_round_trips(self):
        made = _WithShared(3, collection="papers", timeout_s=2.0)
        data = made.to_dict()
        assert data["init_parameters"] == {"limit": 3, "collection": "papers", "timeout_s": 2.0}
        again = _WithShared.from_dict(data)
        assert (again.limit, again.collection, again.timeout_s) == (3, "papers", 2.0)

    def test_an_unknown_parameter_is_still_refused(self):
        with pytest.raises(TypeError, match="unexpected keyword argument 'colection'"):
            _WithShared(colection="papers")
