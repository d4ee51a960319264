"""Building pydantic models from known-good values without validating them again.

The simulator's views produce values of exactly the models' types (Decimal, enums, int times);
validating them once more would cost four times the work for nothing. :class:`Build` is the
core of pydantic's ``model_construct`` without its per-call overhead: per model class it makes
two plain functions with everything they need bound in (class, slot setters, field names), so a
call is an allocation and four slot stores — about a fifth of ``model_construct``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

__all__ = ["Build"]

B = TypeVar("B", bound=BaseModel)

_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
Setter = Callable[[Any, Any], None]


def _slot_setter(cls: type, name: str) -> Setter:
    """The ``__set__`` of the data descriptor ``object.__setattr__(obj, name, v)`` would use."""
    for klass in cls.__mro__:
        found = vars(klass).get(name)
        if found is not None:
            setter: Setter = found.__set__
            return setter
    raise TypeError(f"{cls.__name__} has no {name} slot")  # pragma: no cover - pydantic 2 has


def _makers(
    cls: type[B],
) -> tuple[Callable[[dict[str, Any], set[str], dict[str, Any]], B], Callable[[dict[str, Any]], B]]:
    """(make(data, fields_set, extra), exact(values)) for ``cls``, its setters bound in."""
    set_dict, set_fields, set_extra, set_private = (_slot_setter(cls, n) for n in _SLOTS)
    every_field = set(cls.model_fields)
    no_extra: dict[str, Any] = {}
    new = object.__new__

    def make(data: dict[str, Any], fields_set: set[str], extra: dict[str, Any]) -> B:
        model: B = new(cls)
        set_dict(model, data)
        set_fields(model, fields_set)
        set_extra(model, extra)
        set_private(model, None)
        return model

    def exact(values: dict[str, Any]) -> B:
        model: B = new(cls)
        set_dict(model, values)
        set_fields(model, every_field)  # shared: see Build
        set_extra(model, no_extra)
        set_private(model, None)
        return model

    return make, exact


class Build(Generic[B]):
    """``cls.model_construct(**values)`` at a fraction of the cost: known-good values, no checks.

    Does what pydantic's ``model_construct`` does for these plain models (fields into
    ``__dict__``, unknown keys into ``__pydantic_extra__``, defaults for the missing); the test
    suite checks that the result equals the model validated from the wire answer. Each model
    gets its own fields-set and extras (nothing is shared between models).

    ``exact(values)`` skips even the sorting of keys, for callers whose dict holds exactly the
    model's fields (the views do); it is a plain function attribute (no bound method per call).
    ``parts(fields, extras)`` is the model of a view already split: ``fields`` exactly the
    model's fields, ``extras`` the other keys (each dict in the view's order, as the split here
    would leave them), both handed over.
    """

    __slots__ = ("_make", "cls", "exact", "fields", "names")

    def __init__(self, cls: type[B]) -> None:
        self.cls = cls
        self.fields = cls.model_fields
        self.names = frozenset(self.fields)
        self._make, self.exact = _makers(cls)

    def parts(self, fields: dict[str, Any], extras: dict[str, Any]) -> B:
        """What ``self(view)`` builds, without splitting the view key by key: ``fields`` holds
        exactly the model's fields and ``extras`` the view's other keys, each in the view's
        order."""
        return self._make(fields, set(fields), extras)

    def __call__(self, values: dict[str, Any]) -> B:
        """A model owning ``values`` (a fresh dict the caller hands over)."""
        names = self.names
        if len(values) == len(names) and values.keys() == names:  # exactly the model's fields
            return self.exact(values)
        data = {k: v for k, v in values.items() if k in names}
        extra = {k: v for k, v in values.items() if k not in names}
        fields_set = set(data)
        if len(data) != len(names):
            for name, info in self.fields.items():
                if name not in data:
                    data[name] = info.get_default(call_default_factory=True)
        return self._make(data, fields_set, extra)
