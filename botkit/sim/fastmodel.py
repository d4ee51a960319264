"""Building pydantic models from known-good values without validating them again.

The simulator's views produce values of exactly the models' types (Decimal, enums, int times);
validating them once more would cost four times the work for nothing. :class:`Build` is the
core of pydantic's ``model_construct`` without its per-call overhead.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel

__all__ = ["Build"]

B = TypeVar("B", bound=BaseModel)


class Build(Generic[B]):
    """``cls.model_construct(**values)`` at a quarter of the cost: known-good values, no checks.

    Does what pydantic's ``model_construct`` does for these plain models (fields into
    ``__dict__``, unknown keys into ``__pydantic_extra__``, defaults for the missing); the test
    suite checks that the result equals the model validated from the wire answer.
    """

    __slots__ = ("cls", "fields", "names")

    def __init__(self, cls: type[B]) -> None:
        self.cls = cls
        self.fields = cls.model_fields
        self.names = frozenset(self.fields)

    def __call__(self, values: dict[str, Any]) -> B:
        """A model owning ``values`` (a fresh dict the caller hands over)."""
        names = self.names
        if values.keys() == names:  # the views give exactly the model's fields: no copy
            data, extra = values, {}
        else:
            data = {k: v for k, v in values.items() if k in names}
            extra = {k: v for k, v in values.items() if k not in names}
        fields_set = set(data)
        if len(data) != len(names):
            for name, info in self.fields.items():
                if name not in data:
                    data[name] = info.get_default(call_default_factory=True)
        model = self.cls.__new__(self.cls)
        object.__setattr__(model, "__dict__", data)
        object.__setattr__(model, "__pydantic_fields_set__", fields_set)
        object.__setattr__(model, "__pydantic_extra__", extra)
        object.__setattr__(model, "__pydantic_private__", None)
        return model
