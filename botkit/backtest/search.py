"""What ``botkit optimize`` searches and on which periods: the pure half (no Optuna here).

:func:`parse_space` reads ``--space KEY=LOW..HIGH[:STEP]`` into :class:`Dimension` values;
:func:`check_space` checks the keys against the strategies' ``params:`` (a did-you-mean for an
unknown one); :func:`check_objective` a figure name; :func:`windows` cuts the data's period
into train / test windows (one split, or walk-forward folds). :meth:`Dimension.value` turns
the sampler's number back into the exact decimal a strategy receives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from botkit.backtest.metrics import FIGURE_NAMES
from botkit.backtest.sweep import check_value
from botkit.errors import UsageError
from botkit.rules import Strategy
from botkit.rules.hints import did_you_mean
from botkit.timeparse import format_time

__all__ = [
    "DEFAULT_TRAIN_SHARE",
    "Dimension",
    "Window",
    "check_objective",
    "check_space",
    "parse_space",
    "windows",
]


@dataclass(frozen=True, slots=True)
class Dimension:
    """One searched param: ``low`` to ``high`` inclusive, on a grid of ``step`` when given;
    :attr:`integer` when all are written as whole numbers (the sampler draws integers)."""

    key: str
    low: Decimal
    high: Decimal
    step: Decimal | None = None

    @property
    def integer(self) -> bool:
        """Whole numbers as written (``4..16``, ``4..16:2``; not ``4.0..16``)."""
        parts = (self.low, self.high, *([self.step] if self.step is not None else []))
        return all(int(p.as_tuple().exponent) >= 0 for p in parts)

    def value(self, drawn: float) -> Decimal:
        """The decimal for a number the sampler drew: on the grid (``low + k·step``, exact)
        when there is a step, a whole number for an integer range, else the number to 8
        significant digits; inside the bounds."""
        if self.step is not None:
            k = ((Decimal(repr(drawn)) - self.low) / self.step).to_integral_value()
            value = self.low + k * self.step
        elif self.integer:
            value = Decimal(round(drawn))
        else:
            value = Decimal(f"{drawn:.8g}")
        return min(max(value, self.low), self.high)

    def spec(self) -> str:
        """As the user writes it: ``dip=0.002..0.008:0.001``."""
        step = f":{format(self.step, 'f')}" if self.step is not None else ""
        return f"{self.key}={format(self.low, 'f')}..{format(self.high, 'f')}{step}"


def _number(key: str, text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite():
        raise UsageError(f"--space {key}: {text.strip()!r} is not a number")
    check_value(key, text.strip(), value, option="--space")
    return value


def parse_space(specs: Sequence[str]) -> list[Dimension]:
    """``["dip=0.002..0.008:0.001", "rungs=4..16"]`` → dimensions, each key once."""
    dims: list[Dimension] = []
    for spec in specs:
        key, eq, rest = spec.partition("=")
        key = key.strip()
        bounds, colon, step_text = rest.partition(":")
        low_text, dots, high_text = bounds.partition("..")
        if not eq or not key or not dots or not low_text.strip() or not high_text.strip():
            raise UsageError(
                f"--space {spec!r}: write KEY=LOW..HIGH or KEY=LOW..HIGH:STEP "
                "(e.g. --space dip=0.002..0.008:0.001)"
            )
        if any(d.key == key for d in dims):
            raise UsageError(f"--space {key} is given twice — give each param one range")
        low, high = _number(key, low_text), _number(key, high_text)
        if low >= high:
            raise UsageError(f"--space {key}: LOW must be below HIGH ({spec.partition('=')[2]})")
        step = None
        if colon:
            step = _number(key, step_text)
            if step <= 0:
                raise UsageError(f"--space {key}: STEP must be more than 0")
            if (high - low) % step != 0:
                raise UsageError(
                    f"--space {key}: HIGH − LOW ({format(high - low, 'f')}) is not a whole "
                    f"number of steps of {format(step, 'f')} — make it one"
                )
        dims.append(Dimension(key, low, high, step))
    if not dims:
        raise UsageError("botkit optimize: give at least one --space KEY=LOW..HIGH[:STEP]")
    return dims


def check_space(dims: Iterable[Dimension], strategies: Sequence[Strategy]) -> None:
    """Every key names a param of a strategy (``name`` or ``strategy.name``)."""
    known = sorted({*(p for s in strategies for p in s.params),
                    *(f"{s.name}.{p}" for s in strategies for p in s.params)})  # fmt: skip
    for dim in dims:
        strategy, dot, name = dim.key.rpartition(".")
        hit = any(name in s.params and (not dot or s.name == strategy) for s in strategies)
        if not hit:
            hint = did_you_mean(dim.key, known) if known else "the strategies define no params"
            raise UsageError(f"--space {dim.key}: no strategy defines this param — {hint}")


def check_objective(figure: str) -> str:
    """A figure name of the report, or one line with a did-you-mean."""
    if figure not in FIGURE_NAMES:
        raise UsageError(
            f"--objective {figure}: not a figure — {did_you_mean(figure, list(FIGURE_NAMES))}"
        )
    return figure


@dataclass(frozen=True, slots=True)
class Window:
    """One fold: the params are scored on ``train`` (the sampler sees this) and checked on
    ``test`` (the ranking's out-of-sample figure); half-open ``[start, end)`` in ms."""

    train: tuple[int, int]
    test: tuple[int, int]

    def describe(self) -> str:
        (a, b), (c, d) = self.train, self.test
        return (
            f"train {format_time(a)} → {format_time(b)} · test {format_time(c)} → {format_time(d)}"
        )


DEFAULT_TRAIN_SHARE = Decimal(2) / 3
"""Without --train/--test/--folds: the first two thirds train, the last third tests."""


def windows(
    start: int,
    end: int,
    interval: int,
    *,
    train: int | None = None,
    test: int | None = None,
    folds: int | None = None,
) -> list[Window]:
    """The folds over ``[start, end)`` (whole candles of ``interval``).

    ``train`` and ``test`` (ms): the first ``train`` trains and the next ``test`` tests;
    with ``folds`` K, K such pairs, each ``test`` later than the one before (walk-forward).
    ``folds`` alone: the period in K + 1 equal parts, part i trains and part i + 1 tests.
    Nothing: the first two thirds train, the rest tests."""
    candles = (end - start) // interval
    if (train is None) != (test is None):
        raise UsageError("botkit optimize: give --train and --test together (e.g. 5d and 2d)")
    for name, span in (("--train", train), ("--test", test)):
        if span is not None and span % interval:
            raise UsageError(f"botkit optimize: {name} is not a whole number of candles")
    if train is None or test is None:
        if folds is None:
            n_train = int(candles * DEFAULT_TRAIN_SHARE)
            train, test = n_train * interval, (candles - n_train) * interval
        else:
            part = candles // (folds + 1)
            train = test = part * interval
        if train <= 0 or test <= 0:
            raise UsageError(
                f"botkit optimize: {candles} candles are too few to split — use more data"
            )
    count = folds or 1
    needed = train + count * test
    if start + needed > end:
        raise UsageError(
            f"botkit optimize: {count} fold(s) of {train // interval} + {test // interval} "
            f"candles need {needed // interval} candles; the data has {candles} — shorten "
            "--train/--test or use fewer --folds"
        )
    out: list[Window] = []
    for i in range(count):
        a = start + i * test
        out.append(Window((a, a + train), (a + train, a + train + test)))
    return out
