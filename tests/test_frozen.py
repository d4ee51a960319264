"""``botkit.frozen.quick_init``: the quicker ``__init__`` stores exactly what the dataclass'
own ``__init__`` stores, for every class it is applied to, and refuses what it cannot mirror."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import typing
from typing import Any, ClassVar

import pytest

from botkit.frozen import quick_init

_MODULES = (
    "botkit.errors",
    "botkit.backtest.result",
    "botkit.intents",
    "botkit.pipeline.desired",
    "botkit.pipeline.plan",
    "botkit.pipeline.risk",
    "botkit.pipeline.validate",
    "botkit.ports.journal",
    "botkit.retry",
    "botkit.rules.ids",
    "botkit.runner.cycle",
    "botkit.runner.execution",
    "botkit.runner.orders.execute",
    "botkit.runner.orders.submit",
    "botkit.runner.quiet",
    "botkit.sim.accounts",
    "botkit.sim.engine",
    "botkit.sim.history",
    "botkit.sim.orders",
    "botkit.sim.placing",
)


def _init(cls: type) -> Any:
    return vars(cls).get("__init__")


def _quick_classes() -> list[type]:
    found: dict[str, type] = {}
    for name in _MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and hasattr(_init(value), "__dataclass_init__"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


QUICK = _quick_classes()


def test_the_per_order_values_have_the_quicker_init() -> None:
    names = {c.__name__ for c in QUICK}
    assert {
        "OrderIntent", "DeclaredOrder", "Decision", "Checked", "Candidate", "PlannedOrder",
        "NewOrder", "OrderOutcome", "OrderInput", "PlaceOutcome", "CycleReport", "RequestContext",
    } <= names  # fmt: skip


def _slots(obj: object) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


def _both(cls: type, *args: Any, **kwargs: Any) -> tuple[object, object]:
    """(built by the quicker init, built by the dataclass' own) from the same arguments."""
    quick = cls(*args, **kwargs)
    own: object = object.__new__(cls)
    _init(cls).__dataclass_init__(own, *args, **kwargs)
    return quick, own


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_every_field_is_stored_as_the_dataclass_stores_it(cls: type) -> None:
    fields = dataclasses.fields(cls)
    missing = dataclasses.MISSING
    required = [f for f in fields if f.default is missing and f.default_factory is missing]
    marks = {f.name: object() for f in fields}  # one distinct value per field: a swap shows
    # every field given, positionally and by keyword
    for quick, own in (
        _both(cls, *(marks[f.name] for f in fields)),
        _both(cls, **marks),
    ):
        assert all(_slots(quick)[n] is marks[n] for n in marks)
        assert all(_slots(own)[n] is marks[n] for n in marks)
    # only the required ones: the same defaults; factories called per instance
    quick, own = _both(cls, **{f.name: marks[f.name] for f in required})
    second = cls(**{f.name: marks[f.name] for f in required})
    for f in fields:
        got, want = getattr(quick, f.name), getattr(own, f.name)
        if f.default_factory is not dataclasses.MISSING:
            assert got == want
            assert type(got) is type(want)
            assert got is not getattr(second, f.name)  # never shared between instances
        elif f.default is not dataclasses.MISSING:
            assert got is want
    assert _params(_init(cls)) == _params(_init(cls).__dataclass_init__)


def _params(init: Any) -> list[tuple[str, Any, str]]:
    """Names, kinds and defaults (as shown: a factory's is ``<factory>``) of an ``__init__``."""
    return [
        (p.name, p.kind, repr(p.default))
        for p in inspect.signature(init, follow_wrapped=False).parameters.values()
    ]


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_the_init_s_type_hints_are_the_dataclass_ones(cls: type) -> None:
    """What reads an ``__init__``'s hints (hypothesis' ``builds``, pydantic) reads the same."""
    own = _init(cls).__dataclass_init__
    assert typing.get_type_hints(_init(cls)) == typing.get_type_hints(own)


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_the_rest_of_the_dataclass_is_untouched(cls: type) -> None:
    fields = dataclasses.fields(cls)
    values = {f.name: (f.name, 1) for f in fields}  # hashable, picklable, distinct
    quick, own = _both(cls, **values)
    assert quick == own
    assert repr(quick) == repr(own)
    if cls.__hash__ is not None:
        assert hash(quick) == hash(own)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.__setattr__(fields[0].name, None)
    assert pickle.loads(pickle.dumps(quick)) == own  # noqa: S301 - our own bytes
    assert dataclasses.replace(quick) == own  # type: ignore[type-var]


def test_too_few_or_unknown_arguments_are_refused_as_by_the_dataclass() -> None:
    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Pair:
        a: int
        b: int = 2

    with pytest.raises(TypeError):
        Pair()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pair(1, c=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pair(1, 2, 3)  # type: ignore[call-arg]


def test_keyword_only_fields_stay_keyword_only() -> None:
    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Named:
        a: int
        b: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError):
        Named(1)  # type: ignore[call-arg]
    assert Named(a=1) == Named(a=1, b=[])


def test_a_subclass_stores_its_bases_fields_too() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Child(Base):
        b: int = 0

    assert Child(1, 2) == Child(a=1, b=2)
    assert (Child(1).a, Child(1).b) == (1, 0)


def _not_frozen() -> type:
    @dataclasses.dataclass(slots=True)
    class Plain:
        a: int

    return Plain


def _no_slots() -> type:
    @dataclasses.dataclass(frozen=True)
    class Dicty:
        a: int

    return Dicty


def _post_init() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    return Checked


def _init_var() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int]

    return WithInitVar


def _class_var() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithClassVar:
        a: int
        b: ClassVar[int] = 1

    return WithClassVar


def _no_init_field() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Hidden:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    return Hidden


@pytest.mark.parametrize("make", [_not_frozen, _no_slots, _post_init, _init_var, _no_init_field])
def test_what_it_cannot_mirror_is_refused(make: Any) -> None:
    with pytest.raises(TypeError, match="quick_init"):
        quick_init(make())


def test_a_class_variable_is_not_a_field_and_is_left_alone() -> None:
    cls: Any = quick_init(_class_var())
    assert cls(1).a == 1
    assert cls.b == 1
