"""Fault injection for the simulator's HTTP face: which request gets which fault, and counts.

A :class:`FaultPlan` holds :class:`FaultRule` s. Each rule matches requests by method and path
glob (``fnmatch``), and fires by schedule and/or chance, all conditions together:

* ``nth`` — only the Nth matching request (1-based); ``every`` — every Nth; ``requests`` — a list
  of matching-request numbers; ``after_ms`` / ``until_ms`` — a window on the server clock,
  measured from the moment the rule was armed (added, or the plan created from config);
  ``probability`` — a draw from the plan's seeded RNG; ``times`` — fire at most this many times.
  A rule with none of these fires on every matching request.

Kinds (:class:`FaultKind`): ``latency`` (adds ``delay_ms``, the request is still answered),
``http_500`` / ``http_503``, ``rate_limit`` (429 with ``Retry-After``), ``drop_after`` (processed,
then the connection drops: the ambiguous case), ``drop_before`` (dropped, not processed),
``expired`` (the clock-rule answer), ``html`` / ``truncated`` / ``empty`` (malformed bodies),
``drip`` (the answer sent ``chunk_bytes`` at a time, ``delay_ms`` apart), ``huge`` (the answer
padded with whitespace to ``size_bytes``: still valid JSON) and ``late`` (the request reaches the
exchange ``delay_ms`` later and is processed then, judged by the clock rule at that moment; the
client's connection gets no answer).
Besides rules, ``skew_ms`` shifts the server clock (config entry ``{kind = "skew", ms = 7000}``).

Latency rules add up; the first other rule that fires decides the answer (rules are tried in the
order added; later ones still count the request as seen). Every fired rule is counted in
:attr:`FaultPlan.counts`. The plan is thread-safe and may be changed while a server runs.
"""

from __future__ import annotations

import fnmatch
import random
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from botkit.clock import Clock
from botkit.errors import ConfigError, Location

__all__ = [
    "ArmedFault",
    "FaultDecision",
    "FaultKind",
    "FaultPlan",
    "FaultRule",
]


class FaultKind(StrEnum):
    LATENCY = "latency"
    HTTP_500 = "http_500"
    HTTP_503 = "http_503"
    RATE_LIMIT = "rate_limit"
    DROP_AFTER = "drop_after"
    DROP_BEFORE = "drop_before"
    EXPIRED = "expired"
    HTML = "html"
    TRUNCATED = "truncated"
    EMPTY = "empty"
    DRIP = "drip"
    HUGE = "huge"
    LATE = "late"


# Whether the engine processes a request that gets this fault (``process`` overrides it where
# the kind allows; latency and the two drops are fixed by definition).
_PROCESSED_BY_DEFAULT: dict[FaultKind, bool] = {
    FaultKind.LATENCY: True,
    FaultKind.HTTP_500: False,
    FaultKind.HTTP_503: False,
    FaultKind.RATE_LIMIT: False,
    FaultKind.DROP_AFTER: True,
    FaultKind.DROP_BEFORE: False,
    FaultKind.EXPIRED: False,
    FaultKind.HTML: False,
    FaultKind.TRUNCATED: True,
    FaultKind.EMPTY: False,
    FaultKind.DRIP: True,
    FaultKind.HUGE: True,
    FaultKind.LATE: True,
}
_FIXED_PROCESSING = {
    FaultKind.LATENCY,
    FaultKind.DROP_AFTER,
    FaultKind.DROP_BEFORE,
    FaultKind.LATE,
}


class FaultRule(BaseModel):
    """One fault, as written in ``[[faults]]`` of the simulator's TOML or passed to ``add``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: FaultKind
    method: str = "*"
    path: str = "*"
    probability: float | None = Field(default=None, ge=0, le=1)
    nth: int | None = Field(default=None, ge=1)
    every: int | None = Field(default=None, ge=1)
    requests: frozenset[int] | None = None
    after_ms: int | None = Field(default=None, ge=0)
    until_ms: int | None = Field(default=None, ge=0)
    times: int | None = Field(default=None, ge=1)
    delay_ms: int = Field(default=0, ge=0)
    retry_after: float | None = Field(default=1, ge=0)
    status: int | None = Field(default=None, ge=100, le=599)
    process: bool | None = None
    chunk_bytes: int = Field(default=1, ge=1)
    """``drip``: bytes sent at a time (``delay_ms`` apart)."""
    size_bytes: int = Field(default=100_000_000, ge=1)
    """``huge``: the size the answer is padded to."""

    @model_validator(mode="after")
    def _check(self) -> FaultRule:
        if self.kind in (FaultKind.LATENCY, FaultKind.DRIP, FaultKind.LATE) and self.delay_ms <= 0:
            raise ValueError(f"a {self.kind.value} fault needs delay_ms > 0")
        if self.process is not None and self.kind in _FIXED_PROCESSING:
            raise ValueError(f"'process' cannot be set for {self.kind.value} faults")
        if (
            self.after_ms is not None
            and self.until_ms is not None
            and self.until_ms <= self.after_ms
        ):
            raise ValueError("until_ms must be greater than after_ms")
        return self

    @property
    def processed(self) -> bool:
        """Whether the engine processes the request this fault answers."""
        if self.process is not None:
            return self.process
        return _PROCESSED_BY_DEFAULT[self.kind]

    def matches(self, method: str, path: str) -> bool:
        return (
            self.method == "*" or self.method.upper() == method.upper()
        ) and fnmatch.fnmatchcase(path, self.path)


@dataclass(eq=False)
class ArmedFault:
    """A rule in a plan with its counters: ``seen`` matching requests, ``fired`` injections."""

    rule: FaultRule
    armed_at_ms: int | None = None
    seen: int = 0
    fired: int = 0


@dataclass(frozen=True, slots=True)
class FaultDecision:
    """What the plan decided for one request: extra delay and at most one answer-changing fault."""

    delay_s: float = 0.0
    fault: FaultRule | None = None
    fired: tuple[FaultKind, ...] = field(default=())

    @property
    def processed(self) -> bool:
        """Whether the engine should process the request."""
        return self.fault is None or self.fault.processed


_NO_FAULT = FaultDecision()


class FaultPlan:
    """The faults a simulator injects; change it at run time with :meth:`add` / :meth:`clear`."""

    def __init__(
        self,
        rules: Iterable[FaultRule] = (),
        *,
        seed: int = 0,
        clock: Clock | None = None,
        skew_ms: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(seed)  # noqa: S311 - reproducible fault draws, not security
        self._clock = clock
        self._faults: list[ArmedFault] = []
        self._counts: Counter[str] = Counter()
        self._skew_ms = skew_ms
        for rule in rules:
            self.add(rule)

    @classmethod
    def from_config(
        cls,
        entries: Sequence[Mapping[str, Any]],
        *,
        seed: int = 0,
        clock: Clock | None = None,
        source: str = "sim config",
    ) -> FaultPlan:
        """Build a plan from ``SimConfig.faults``; a bad entry is a located :class:`ConfigError`."""
        rules: list[FaultRule] = []
        skew = 0
        for index, entry in enumerate(entries):
            where = f"faults[{index}]"
            if not isinstance(entry, Mapping):
                raise ConfigError(
                    f"{where} must be a table", where=Location(file=source, field=where)
                )
            if str(entry.get("kind", "")).lower() == "skew":
                skew += _skew_entry(entry, where, source)
                continue
            rules.append(_rule_from_entry(entry, where, source))
        return cls(rules, seed=seed, clock=clock, skew_ms=skew)

    # --- changing the plan ---------------------------------------------------------------

    def add(self, kind: FaultKind | str | FaultRule, **options: Any) -> ArmedFault:
        """Add a rule (a :class:`FaultRule`, or its kind and options); returns it with counters."""
        rule = kind if isinstance(kind, FaultRule) else FaultRule(kind=FaultKind(kind), **options)
        armed = ArmedFault(rule, self._clock.now_ms() if self._clock is not None else None)
        with self._lock:
            self._faults.append(armed)
        return armed

    def remove(self, fault: ArmedFault) -> None:
        with self._lock:
            self._faults = [f for f in self._faults if f is not fault]

    def clear(self) -> None:
        """No faults any more: every rule removed and the clock skew back to 0 (counts kept)."""
        with self._lock:
            self._faults = []
            self._skew_ms = 0

    @property
    def skew_ms(self) -> int:
        """How far the server clock is shifted by the plan (ms, positive = server ahead)."""
        return self._skew_ms

    def set_skew(self, ms: int) -> None:
        with self._lock:
            self._skew_ms = int(ms)

    @property
    def faults(self) -> list[ArmedFault]:
        with self._lock:
            return list(self._faults)

    # --- counting --------------------------------------------------------------------------

    @property
    def counts(self) -> dict[str, int]:
        """Injected faults by kind (``{"rate_limit": 3, ...}``), since creation or reset."""
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()

    # --- deciding --------------------------------------------------------------------------

    def decide(self, method: str, path: str, now_ms: int) -> FaultDecision:
        """The faults for one request at server time ``now_ms``; counts what fired."""
        if not self._faults:
            return _NO_FAULT
        delay_ms = 0
        chosen: FaultRule | None = None
        fired: list[FaultKind] = []
        with self._lock:
            for armed in self._faults:
                rule = armed.rule
                if not rule.matches(method, path):
                    continue
                armed.seen += 1
                if armed.armed_at_ms is None:
                    armed.armed_at_ms = now_ms
                if rule.kind is not FaultKind.LATENCY and chosen is not None:
                    continue
                if not self._fires(armed, now_ms):
                    continue
                armed.fired += 1
                self._counts[rule.kind.value] += 1
                fired.append(rule.kind)
                if rule.kind is FaultKind.LATENCY:
                    delay_ms += rule.delay_ms
                else:
                    chosen = rule
        if not fired:
            return _NO_FAULT
        return FaultDecision(delay_s=delay_ms / 1000, fault=chosen, fired=tuple(fired))

    def _fires(self, armed: ArmedFault, now_ms: int) -> bool:
        rule = armed.rule
        if rule.times is not None and armed.fired >= rule.times:
            return False
        n = armed.seen
        if rule.nth is not None and n != rule.nth:
            return False
        if rule.every is not None and n % rule.every != 0:
            return False
        if rule.requests is not None and n not in rule.requests:
            return False
        elapsed = now_ms - (armed.armed_at_ms if armed.armed_at_ms is not None else now_ms)
        if rule.after_ms is not None and elapsed < rule.after_ms:
            return False
        if rule.until_ms is not None and elapsed >= rule.until_ms:
            return False
        return rule.probability is None or self._rng.random() < rule.probability

    def __repr__(self) -> str:
        kinds = ",".join(f.rule.kind.value for f in self.faults) or "none"
        return f"FaultPlan(faults={kinds}, skew_ms={self._skew_ms})"


def _skew_entry(entry: Mapping[str, Any], where: str, source: str) -> int:
    extra = set(entry) - {"kind", "ms"}
    ms = entry.get("ms")
    if extra or not isinstance(ms, int) or isinstance(ms, bool):
        raise ConfigError(
            f"{where}: a skew entry takes only an integer 'ms' (got {dict(entry)!r})",
            where=Location(file=source, field=where),
            hint='write e.g. {kind = "skew", ms = 7000} for a server clock 7 s ahead',
        )
    return ms


def _rule_from_entry(entry: Mapping[str, Any], where: str, source: str) -> FaultRule:
    try:
        return FaultRule.model_validate(dict(entry))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        name = f"{where}.{loc}" if loc else where
        kinds = ", ".join(k.value for k in FaultKind)
        raise ConfigError(
            f"{name}: {first['msg']}",
            where=Location(file=source, field=name),
            hint=f"fault kinds are skew, {kinds}; see docs/simulator-http.md",
        ) from None
