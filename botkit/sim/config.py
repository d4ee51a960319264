"""The simulator's settings: instruments, starting balance, fees, price model, auth and faults.

Loaded from a TOML file operators can edit (``configs/sim.toml``); ``load_sim_config(None)`` gives
the built-in defaults, which are the same file shipped inside the package
(``botkit/sim/default_sim.toml``). TOML is parsed with ``parse_float=Decimal`` so no amount passes
through ``float``. Every mistake becomes a :class:`~botkit.errors.ConfigError` naming
``file:line:column``, the setting and what to do.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from botkit.errors import ConfigError, Location
from botkit.exchange.models import InstrumentStatus, PositionMode

__all__ = [
    "ApiKeyConfig",
    "AuthConfig",
    "BalanceConfig",
    "FeesConfig",
    "InstrumentConfig",
    "OrderRulesConfig",
    "PricesConfig",
    "SimConfig",
    "default_config_text",
    "load_sim_config",
    "parse_sim_config",
]

PositiveDecimal = Annotated[Decimal, Field(gt=0, allow_inf_nan=False)]
Scheme = Literal["pf", "v3"]
NonNegDecimal = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApiKeyConfig(_Strict):
    """One API key the simulator accepts."""

    key: str = Field(min_length=1)
    secret: SecretStr
    passphrase: SecretStr


class AuthConfig(_Strict):
    """Which keys and signing schemes the simulator accepts, and the clock tolerance."""

    keys: list[ApiKeyConfig] = Field(
        default_factory=lambda: [
            ApiKeyConfig(
                key="sim-key",
                secret=SecretStr("sim-secret"),
                passphrase=SecretStr("sim-passphrase"),
            )
        ]
    )
    schemes: list[Scheme] = Field(default_factory=lambda: list[Scheme](["pf", "v3"]))
    tolerance_ms: int = Field(default=5000, gt=0)


class BalanceConfig(_Strict):
    """The starting wallet: one settlement currency and its amount."""

    currency: str = "USDT"
    amount: NonNegDecimal = Decimal(10000)


class FeesConfig(_Strict):
    """Fee rates as fractions of the traded value (0.0002 = 2 bp)."""

    maker: Annotated[Decimal, Field(allow_inf_nan=False, ge=Decimal("-0.01"), le=1)] = Decimal(
        "0.0002"
    )
    taker: Annotated[Decimal, Field(allow_inf_nan=False, ge=0, le=1)] = Decimal("0.0006")


class PricesConfig(_Strict):
    """How the mark price moves when nobody sets it.

    ``random_walk``: every ``step_ms`` the mark moves by a seeded Gaussian relative step whose
    standard deviation per minute is the instrument's ``volatility``. ``static``: the mark stays
    where it is until ``SimEngine.set_mark`` moves it (backtests replay candles this way).
    """

    model: Literal["random_walk", "static"] = "random_walk"
    step_ms: int = Field(default=1000, gt=0)
    spread_ticks: int = Field(default=1, ge=0)
    candle_history_minutes: int = Field(default=1440 * 7, ge=60)
    depth_per_fill: NonNegDecimal = Decimal(0)
    """At most this many contracts of a resting order fill per price event (0 = no limit)."""
    drift_per_request: Annotated[
        Decimal, Field(ge=Decimal("-0.01"), le=Decimal("0.01"), allow_inf_nan=False)
    ] = Decimal(0)
    """Before answering each request the marks move by this fraction (rounded to the tick): a
    mark that moves between two reads of one cycle (``-0.0005``: 5 bps down per request)."""


class OrderRulesConfig(_Strict):
    """How strictly the simulator reads an order's amounts."""

    strict_text: bool = True
    """Refuse (400) an ``sz`` / ``px`` whose text has an exponent, a sign, or more decimals than
    ``lotSz`` / ``tSz`` allow (``"2.0"`` on a lot of 1), as a strict exchange does."""


class InstrumentConfig(_Strict):
    """A futures product: every field of spec 2.9, plus the start price and volatility."""

    symbol: str = Field(pattern=r"^[A-Z0-9]+_[A-Z0-9]+(_[A-Z0-9]+)?$")
    bAsset: str = ""
    bCcy: str = ""
    qCcy: str = ""
    sCcy: str = ""
    visibleStartTime: int = 1_577_836_800_000
    tradableStartTime: int = 1_577_836_800_000
    tSz: PositiveDecimal
    pxScale: str = ""
    lotSz: PositiveDecimal = Decimal(1)
    minSz: PositiveDecimal = Decimal(1)
    ctVal: PositiveDecimal = Decimal(1)
    status: InstrumentStatus = InstrumentStatus.OPEN
    oDate: int = 1_577_836_800_000
    maxPx: PositiveDecimal = Decimal(1_000_000)
    minPx: PositiveDecimal
    marketMaxQty: PositiveDecimal = Decimal(100_000)
    limitMaxQty: PositiveDecimal = Decimal(1_000_000)
    maxQty: NonNegDecimal = Decimal(0)
    minQty: NonNegDecimal = Decimal(0)
    maxLever: PositiveDecimal = Decimal(75)
    lever: PositiveDecimal = Decimal(20)
    ordPxRange: Annotated[Decimal, Field(gt=0, lt=1, allow_inf_nan=False)] = Decimal("0.05")
    ctType: Literal["LINEAR", "INVERSE"] = "LINEAR"
    alias: str = ""
    iM: PositiveDecimal = Decimal("0.0133")
    mM: PositiveDecimal = Decimal("0.005")
    mR: PositiveDecimal = Decimal(10_000_000)
    start_px: PositiveDecimal
    volatility: NonNegDecimal = Decimal("0.001")
    """Standard deviation of the relative mark change per minute (random-walk model)."""

    @model_validator(mode="after")
    def _derive_and_check(self) -> InstrumentConfig:
        parts = self.symbol.split("_")
        base, quote = parts[0], parts[1]
        for name, value in (("bAsset", base), ("bCcy", base), ("qCcy", quote), ("sCcy", quote)):
            if not getattr(self, name):
                object.__setattr__(self, name, value)
        if not self.pxScale:
            object.__setattr__(self, "pxScale", str(max(0, -self.tSz.as_tuple().exponent)))  # type: ignore[operator]
        if self.minPx >= self.maxPx:
            raise ValueError(f"minPx {self.minPx} must be below maxPx {self.maxPx}")
        if not self.minPx <= self.start_px <= self.maxPx:
            raise ValueError(f"start_px {self.start_px} must lie in [minPx, maxPx]")
        if self.lever > self.maxLever:
            raise ValueError(f"lever {self.lever} exceeds maxLever {self.maxLever}")
        if self.minSz % self.lotSz != 0:
            raise ValueError(f"minSz {self.minSz} is not a multiple of lotSz {self.lotSz}")
        return self


class SimConfig(_Strict):
    """Everything the paper exchange needs to start."""

    seed: int = 42
    balance: BalanceConfig = Field(default_factory=BalanceConfig)
    fees: FeesConfig = Field(default_factory=FeesConfig)
    prices: PricesConfig = Field(default_factory=PricesConfig)
    orders: OrderRulesConfig = Field(default_factory=OrderRulesConfig)
    position_mode: PositionMode = PositionMode.ONE_WAY
    instruments: list[InstrumentConfig] = Field(min_length=1)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    faults: list[dict[str, Any]] = Field(default_factory=list)
    """Fault rules, parsed by :mod:`botkit.sim.faults` (the HTTP layer)."""

    @model_validator(mode="after")
    def _unique_symbols(self) -> SimConfig:
        seen: set[str] = set()
        for inst in self.instruments:
            if inst.symbol in seen:
                raise ValueError(f"instrument {inst.symbol} is listed twice")
            seen.add(inst.symbol)
        return self

    def instrument(self, symbol: str) -> InstrumentConfig | None:
        for inst in self.instruments:
            if inst.symbol == symbol:
                return inst
        return None


def default_config_text() -> str:
    """The TOML text of the built-in defaults (identical to ``configs/sim.toml``)."""
    return resources.files("botkit.sim").joinpath("default_sim.toml").read_text(encoding="utf-8")


def load_sim_config(path: str | Path | None) -> SimConfig:
    """Read the simulator's TOML file; ``None`` gives the built-in defaults."""
    if path is None:
        return parse_sim_config(default_config_text(), "<built-in sim defaults>")
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "simulator config file not found",
            where=Location(file=str(file)),
            hint="create it (copy configs/sim.toml) or point sim_config at an existing file",
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read simulator config: {exc.strerror}", where=Location(file=str(file))
        ) from None
    return parse_sim_config(text, str(file))


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse_sim_config(text: str, source: str = "<sim config>") -> SimConfig:
    """Parse and validate TOML text; errors name ``source:line:column``."""
    try:
        raw = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        match = _TOML_POS.search(msg)
        where = Location(file=source)
        if match:
            where = Location(file=source, line=int(match[1]), column=int(match[2]))
            msg = _TOML_POS.sub("", msg).strip()
        raise ConfigError(f"not valid TOML: {msg}", where=where, hint="fix the syntax") from None
    try:
        return SimConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        line, column = _locate(text, loc)
        setting = ".".join(str(p) for p in loc) or "<top level>"
        message = f"{setting}: {err['msg']}"
        hint = "see configs/sim.toml for every setting and its default"
        if err["type"] == "extra_forbidden" and loc:
            close = difflib.get_close_matches(str(loc[-1]), _known_keys(loc), n=1)
            message = f"{setting}: unknown setting"
            hint = f"did you mean {close[0]!r}?" if close else "remove it"
        more = len(exc.errors()) - 1
        if more:
            message += f" (+{more} more problem{'s' if more > 1 else ''})"
        raise ConfigError(
            message, where=Location(file=source, line=line, column=column, field=setting), hint=hint
        ) from None


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = SimConfig
    sub: dict[str, type[BaseModel]] = {
        "balance": BalanceConfig,
        "fees": FeesConfig,
        "prices": PricesConfig,
        "orders": OrderRulesConfig,
        "instruments": InstrumentConfig,
        "auth": AuthConfig,
    }
    if len(loc) > 1 and loc[0] in sub:
        model = sub[loc[0]]
        if loc[0] == "auth" and len(loc) > 2 and loc[1] == "keys":
            model = ApiKeyConfig
    return list(model.model_fields)


def _locate(text: str, loc: tuple[Any, ...]) -> tuple[int | None, int | None]:
    """Best effort: the line and column of the setting at ``loc`` in the TOML text."""
    lines = text.splitlines()

    def section_end(begin: int) -> int:
        for i in range(begin + 1, len(lines)):
            if lines[i].lstrip().startswith("["):
                return i
        return len(lines)

    lo, hi, found_any = 0, section_end(-1), False
    tables: list[str] = []
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            continue
        name = ".".join([*tables, str(part)])
        nth = parts[0] if parts and isinstance(parts[0], int) else None
        header = f"[[{name}]]" if nth is not None else f"[{name}]"
        hits = [i for i in range(lo, len(lines)) if lines[i].strip().startswith(header)]
        index = nth or 0
        if len(hits) > index:
            lo = hits[index]
            hi, found_any = section_end(lo), True
            tables.append(str(part))
            if nth is not None:
                parts.pop(0)
            continue
        pattern = re.compile(rf"^\s*\"?{re.escape(str(part))}\"?\s*=")
        for i in range(lo, hi):
            if pattern.match(lines[i]):
                return i + 1, len(lines[i]) - len(lines[i].lstrip()) + 1
        break
    return (lo + 1, 1) if found_any else (None, None)
