"""One way for this package's components to serialise themselves: every `__init__` parameter, read back from the
attribute of the same name, strictly.

Haystack's default serialisation (used when a component has no `to_dict`) reads `getattr(self, <init param>)` and,
when the attribute is missing, silently writes the parameter's default: a renamed attribute then loses its value on
reload. `init_parameters_to_dict` raises instead, writes nested objects (secrets, document stores) with their own
`to_dict()`, and never serialises a flag that wipes a collection as True. `default_from_dict` reverses it: Haystack
restores env-var secrets and nested document stores by itself.

Usage: a component whose init parameters are all kept under their own names inherits both methods,
```python
@component
class MyComponent(InitParameterSerialization):
    ...
```
and one that keeps a parameter in another form writes `to_dict` itself with `init_parameters_to_dict(self, name=value)`.
Components that share init parameters declare them once, on their base class's `__init__`, and take them as
`**shared` under `@with_base_parameters(Base.__init__)`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Self, TypeVar

from haystack.core.errors import SerializationError
from haystack.core.serialization import default_from_dict, default_to_dict

# Init parameters of the integrations' stores that wipe data when a deserialised store is opened: never serialised
# as True, so that loading a dumped pipeline can never empty a collection.
WIPING_FLAGS = ("recreate_table", "hnsw_recreate_index_if_exists", "recreate_index", "drop_old")

_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

Init = TypeVar("Init", bound=Callable[..., None])


def with_base_parameters(base_init: Callable[..., None]) -> Callable[[Init], Init]:
    """Decorates a subclass's `__init__(self, <its own parameters>, **shared)` that hands `shared` to `base_init`:
    its signature, which Haystack, `init_parameters_to_dict` and `help()` read, becomes its own parameters followed
    by `base_init`'s (keyword-only), so the parameters several components share are declared and documented once and
    still serialised by each of them.

    Usage:
    ```python
    @with_base_parameters(MemoryComponent.__init__)
    def __init__(self, num_results: int = 3, **shared: Any) -> None:
        self.num_results = num_results
        MemoryComponent.__init__(self, **shared)
    ```
    """

    def decorate(init: Init) -> Init:
        own = inspect.signature(init)
        kept = [param for param in own.parameters.values() if param.kind is not inspect.Parameter.VAR_KEYWORD]
        names = {param.name for param in kept}
        shared = [
            param.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for param in list(inspect.signature(base_init).parameters.values())[1:]
            if param.name not in names and param.kind not in _SKIPPED_KINDS
        ]
        init.__signature__ = own.replace(parameters=[*kept, *shared])  # type: ignore[attr-defined]
        return init

    return decorate


def without_wiping_flags(data: dict[str, Any]) -> dict[str, Any]:
    """`data` (an object's `to_dict()`) with every data-wiping init parameter set to False."""
    params = data.get("init_parameters") or {}
    for flag in WIPING_FLAGS:
        if params.get(flag):
            params[flag] = False
    return data


def init_parameters_to_dict(obj: Any, **overrides: Any) -> dict[str, Any]:
    """`obj` serialised as `{"type", "init_parameters"}` from its `__init__` signature.

    :param obj: the component (or any object whose `__init__` parameters are kept as attributes of the same name).
    :param overrides: values for parameters not kept under their own name (or kept in another form).
    :returns: the dict `default_from_dict` turns back into an equal object.
    :raises SerializationError: when a parameter is neither an attribute nor in `overrides`.
    """
    params: dict[str, Any] = {}
    for name, parameter in list(inspect.signature(type(obj).__init__).parameters.items())[1:]:
        if parameter.kind in _SKIPPED_KINDS:
            continue
        if name in overrides:
            params[name] = overrides[name]
        elif hasattr(obj, name):
            params[name] = getattr(obj, name)
        else:
            raise SerializationError(
                f"{type(obj).__name__} keeps no attribute {name!r} for its init parameter of that name; "
                f"pass it to init_parameters_to_dict"
            )
    for name, value in params.items():
        if value is not None and callable(getattr(value, "to_dict", None)):
            params[name] = without_wiping_flags(value.to_dict())
    return default_to_dict(obj, **params)


class InitParameterSerialization:
    """`to_dict` / `from_dict` for a component that keeps every init parameter as the attribute of the same name."""

    # Init parameters that take an in-process object (a test's pool or driver, a given store): never serialised.
    in_process_parameters: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = init_parameters_to_dict(self, **dict.fromkeys(self.in_process_parameters))
        for name in self.in_process_parameters:
            del data["init_parameters"][name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return default_from_dict(cls, data)
