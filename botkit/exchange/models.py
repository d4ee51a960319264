"""Typed models of the exchange's resources (spec section 2 and the live-API notes).

Every amount is a :class:`~decimal.Decimal`; JSON is parsed with ``parse_float=Decimal`` so a
number never passes through ``float``. The models are tolerant where the spec lists quirks
(``reduceOnly`` as a string, times as strings or numbers, ``maxlever`` vs ``maxLever``, integer
``lotSz``) and keep unknown fields (``model_extra``) instead of failing. They refuse what would
make a wrong order: NaN, infinities and negative sizes or prices.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, Self

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

__all__ = [
    "FAST_ORDER_REQUESTS",
    "Balance",
    "BalanceDetail",
    "CancelResult",
    "Candle",
    "CurrencyV1",
    "CurrencyV2",
    "Fill",
    "FundingRate",
    "IndexPrice",
    "Instrument",
    "InstrumentStatus",
    "Leverage",
    "LimitPrice",
    "MarginMode",
    "MarkPrice",
    "Market",
    "Millis",
    "Network",
    "OpenOrder",
    "OrderBook",
    "OrderHistoryState",
    "OrderRequest",
    "OrderSide",
    "OrderType",
    "PlaceResult",
    "PosSide",
    "Position",
    "PositionHistory",
    "PositionMode",
    "RiskLimitTier",
    "ServerTime",
    "StpMode",
    "Ticker",
    "TimeInForce",
    "WireModel",
    "order_request",
]


class _UpperEnum(StrEnum):
    """An enum that accepts its words in any letter case (the spec's example sends lower case)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            upper = value.upper()
            for member in cls:
                if member.value == upper:
                    return member
        return None


class OrderSide(_UpperEnum):
    BUY = "BUY"
    SELL = "SELL"


class OrderType(_UpperEnum):
    MARKET = "MARKET"
    LIMIT = "LIMIT"
    LIMIT_MAKER = "LIMIT_MAKER"


class MarginMode(_UpperEnum):
    CROSS = "CROSS"
    ISOLATED = "ISOLATED"


class PosSide(_UpperEnum):
    LONG = "LONG"
    SHORT = "SHORT"
    BOTH = "BOTH"


class TimeInForce(_UpperEnum):
    GTC = "GTC"
    IOC = "IOC"
    FOK = "FOK"


class StpMode(_UpperEnum):
    NONE = "NONE"
    EXPIRE_TAKER = "EXPIRE_TAKER"
    EXPIRE_MAKER = "EXPIRE_MAKER"
    EXPIRE_BOTH = "EXPIRE_BOTH"


class InstrumentStatus(_UpperEnum):
    OPEN = "OPEN"
    PAUSED = "PAUSED"
    CLOSED = "CLOSED"
    CANCEL_ONLY = "CANCEL_ONLY"
    CANCEL_CLOSE_ONLY = "CANCEL_CLOSE_ONLY"


def _status(value: Any) -> Any:
    """An instrument status: one of the words (any letter case), else kept as its text.

    The spec types ``status`` Integer and lists words; the payload carries a string. A number or
    an unknown word never fails the instruments read: it is kept (``"3"``, ``"HALTED"``) and the
    pipeline treats the instrument as not tradable for new orders."""
    if isinstance(value, InstrumentStatus):
        return value
    if value is None or isinstance(value, bool):
        return str(value).lower() if isinstance(value, bool) else "null"
    if isinstance(value, str):
        try:
            return InstrumentStatus(value.strip())
        except ValueError:
            return value.strip()[:40]
    return str(value)[:40]


class OrderHistoryState(_UpperEnum):
    FILLED = "FILLED"
    PARTIALLY_CANCELED = "PARTIALLY_CANCELED"
    CANCELED = "CANCELED"


class PositionMode(_UpperEnum):
    """One-way (``ONE_WAY``, posSide BOTH) or hedge (``HEDGE``, LONG and SHORT legs)."""

    ONE_WAY = "ONE_WAY"
    HEDGE = "HEDGE"


_MILLIS_LIMIT = 10**15  # year 33658: anything larger is not a time


def _millis(value: Any) -> Any:
    """Times arrive as numbers or strings; an empty string means "none". Infinities, huge
    numbers and non-ASCII digits are refused (a ValueError pydantic reports), never converted."""
    if value is None or value == "":
        return None
    bad = ValueError(f"not a millisecond timestamp: {str(value)[:40]!r}")
    if isinstance(value, str):
        text = value.strip()
        digits = text.removeprefix("-")
        if not (text.isascii() and digits.isdigit() and len(digits) <= 15):
            raise bad
        return int(text)
    if isinstance(value, Decimal):
        if not value.is_finite() or abs(value) >= _MILLIS_LIMIT:
            raise bad
        if value != value.to_integral_value():
            raise bad
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _MILLIS_LIMIT:
        raise bad
    return value


def _empty_is_none(value: Any) -> Any:
    return None if value == "" else value


def _lenient_bool(value: Any) -> Any:
    if value is None or value == "":
        return False
    return value


Millis = Annotated[int | None, BeforeValidator(_millis)]
"""Unix milliseconds; accepts ``"1700000000000"``, ``1700000000000`` and ``""`` (None)."""

# The constraints sit on the Decimal inside the Optional: on the union they would also be
# applied to None (pydantic then fails with a TypeError on "" and null).
Amount = Annotated[
    Annotated[Decimal, Field(allow_inf_nan=False)] | None, BeforeValidator(_empty_is_none)
]
"""A signed decimal amount (PnL, equity); empty string is None; NaN and infinities refused."""

Size = Annotated[
    Annotated[Decimal, Field(ge=0, allow_inf_nan=False)] | None, BeforeValidator(_empty_is_none)
]
"""A non-negative decimal (price, size, fee rate); negative, NaN and infinities refused."""

Flag = Annotated[bool, BeforeValidator(_lenient_bool)]
"""A boolean that may arrive as ``"true"`` / ``"false"`` / ``""``."""


class WireModel(BaseModel):
    """Base of every resource: keeps unknown fields, accepts field names and aliases."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


# --- 2.1 market (spot symbol) --------------------------------------------------------------


class SymbolTradeLimit(WireModel):
    symbol: str = ""
    priceScale: int | None = None
    quantityScale: int | None = None
    amountScale: int | None = None
    minQuantity: Size = None
    minAmount: Size = None
    maxQuantity: Size = None
    maxAmount: Size = None
    highestBid: Size = None
    lowestAsk: Size = None


class CrossMargin(WireModel):
    supportCrossMargin: bool = False
    maxLeverage: int | None = None


class Market(WireModel):
    symbol: str
    baseCurrencyName: str = ""
    quoteCurrencyName: str = ""
    displayName: str = ""
    state: str = ""
    visibleStartTime: Millis = None
    tradableStartTime: Millis = None
    symbolTradeLimit: SymbolTradeLimit | None = None
    crossMargin: CrossMargin | None = None


# --- 2.2 / 2.3 currencies ------------------------------------------------------------------


class CurrencyV1(WireModel):
    """One currency of the v1 view. ``name`` is filled from the key of the wrapping object."""

    name: str = ""
    id: int | None = None
    description: str | None = None
    type: str | None = None
    withdrawalFee: Size = None
    minConf: int | None = None
    depositAddress: str | None = None
    blockchain: str | None = None
    delisted: bool = False
    tradingState: str | None = None
    walletState: str | None = None
    walletDepositState: str | None = None
    walletWithdrawalState: str | None = None
    parentChain: str | None = None
    isMultiChain: bool | None = None
    isChildChain: bool | None = None
    supportCollateral: bool | None = None
    supportBorrow: bool | None = None
    childChains: list[str] | None = None


class Network(WireModel):
    id: int | None = None
    coin: str = ""
    name: str = ""
    currencyType: str | None = None
    blockchain: str | None = None
    withdrawalEnable: bool | None = None
    depositEnable: bool | None = None
    depositAddress: str | None = None
    withdrawMin: Amount = None
    decimals: Amount = None
    withdrawFee: Size = None
    minConfirm: int | None = None
    contractAddress: str | None = None


class CurrencyV2(WireModel):
    id: int | None = None
    coin: str
    delisted: bool = False
    tradeEnable: bool | None = None
    name: str = ""
    supportCollateral: bool | None = None
    supportBorrow: bool | None = None
    networkList: list[Network] = Field(default_factory=list)
    externalTransferEnabled: bool | None = None


class ServerTime(WireModel):
    serverTime: int


# --- 2.5 / 2.6 / 2.7 history records -------------------------------------------------------


class _OrderFields(WireModel):
    symbol: str
    side: OrderSide
    type: OrderType
    ordId: str = ""
    clOrdId: str = ""
    mgnMode: MarginMode | None = None
    posSide: PosSide | None = None
    px: Size = None
    sz: Size = None
    reduceOnly: Flag = False
    timeInForce: TimeInForce = TimeInForce.GTC
    stpMode: Annotated[StpMode, BeforeValidator(lambda v: v or "NONE")] = StpMode.NONE
    avgPx: Size = None
    execQty: Size = None
    cancelReason: str = ""
    source: str = ""
    cTime: Millis = None
    uTime: Millis = None


class Order(_OrderFields):
    """A closed order of ``/v3/trade/order/history`` (2.5)."""

    state: OrderHistoryState
    execAmt: Size = None
    feeCcy: str = ""
    feeAmt: Amount = None
    deductCcy: str = ""
    deductAmt: Amount = None
    actType: str = ""
    qCcy: str = ""
    lever: Amount = None


class OpenOrder(_OrderFields):
    """A resting order of ``/v3/trade/order/opens`` (notes): state NEW or PARTIALLY_FILLED."""

    state: str = "NEW"


class Fill(WireModel):
    """An execution of ``/v3/trade/order/trades`` (2.6)."""

    id: str
    symbol: str
    clOrdId: str = ""
    ordId: str = ""
    trdId: str = ""
    side: OrderSide
    type: str = "TRADE"
    mgnMode: MarginMode | None = None
    posSide: PosSide | None = None
    ordType: OrderType | None = None
    role: str = ""
    px: Size = None
    qty: Size = None
    cTime: Millis = None
    uTime: Millis = None
    actType: str = ""
    qCcy: str = ""
    value: Size = None
    feeCcy: str = ""
    feeAmt: Amount = None
    deductCcy: str = ""
    deductAmt: Amount = None
    feeRate: Amount = None


class PositionHistory(WireModel):
    """A previous position of ``/v3/trade/position/history`` (2.7)."""

    id: str
    symbol: str
    side: OrderSide | None = None
    mgnMode: MarginMode | None = None
    posSide: PosSide | None = None
    openAvgPx: Size = None
    closeAvgPx: Size = None
    qty: Amount = None
    closedQty: Size = None
    availQty: Size = None
    pnl: Amount = None
    fee: Amount = None
    fFee: Amount = None
    state: str = "NORMAL"
    cTime: Millis = None
    uTime: Millis = None


class Position(WireModel):
    """An open position of ``/v3/trade/position/opens`` (shape from the live documentation).

    ``qty`` is signed in one-way mode (negative for a short); ``side`` tells the direction.
    """

    symbol: str
    mgnMode: MarginMode | None = None
    posSide: PosSide = PosSide.BOTH
    side: OrderSide | None = None
    qty: Amount = Decimal(0)
    availQty: Size = Decimal(0)
    openAvgPx: Size = None
    markPx: Size = None
    lastPx: Size = None
    indexPx: Size = None
    liqPx: Size = None
    lever: Amount = None
    im: Amount = Decimal(0)
    mm: Amount = Decimal(0)
    mgn: Amount = None
    upl: Amount = Decimal(0)
    uplRatio: Amount = None
    pnl: Amount = Decimal(0)
    fee: Amount = Decimal(0)
    fFee: Amount = None
    mgnRatio: Amount = None
    adl: Amount = None
    state: str = "NORMAL"
    cTime: Millis = None
    uTime: Millis = None


# --- 2.8 placement and cancel results ------------------------------------------------------


class PlaceResult(WireModel):
    """One per submitted order (2.8): ``code`` 200 and an ``ordId``, or a code and a message."""

    clOrdId: str = ""
    ordId: str = ""
    code: Annotated[int, BeforeValidator(lambda v: int(v) if isinstance(v, str) else v)] = 200
    msg: str = Field(default="", validation_alias=AliasChoices("msg", "message"))

    @property
    def accepted(self) -> bool:
        return self.code == ACCEPTED_CODE


ACCEPTED_CODE = 200
"""A result's ``code`` when the order was accepted (:attr:`PlaceResult.accepted`; the hot loops
over a batch's results compare the code they read anyway, without the property's second read)."""


class CancelResult(PlaceResult):
    """One per cancelled order; same shape as a placement result."""


# --- 2.9 instrument ------------------------------------------------------------------------


class Instrument(WireModel):
    """A futures product of ``/v3/market/allInstruments`` (2.9) with its order limits."""

    @property
    def odd_status(self) -> str | None:
        """The status text when it is none of :class:`InstrumentStatus` (else ``None``)."""
        return None if isinstance(self.status, InstrumentStatus) else str(self.status)

    symbol: str
    bAsset: str = ""
    bCcy: str = ""
    qCcy: str = ""
    sCcy: str = ""
    visibleStartTime: Millis = None
    tradableStartTime: Millis = None
    tSz: Annotated[Decimal, Field(gt=0, allow_inf_nan=False)]
    pxScale: str = ""
    lotSz: Annotated[Decimal, Field(gt=0, allow_inf_nan=False)]
    minSz: Size = Decimal(0)
    ctVal: Annotated[Decimal, Field(gt=0, allow_inf_nan=False)] = Decimal(1)
    status: Annotated[InstrumentStatus | str, BeforeValidator(_status)] = InstrumentStatus.OPEN
    """A known :class:`InstrumentStatus`, or the text of one botkit does not know (not
    tradable for new orders: :func:`~botkit.pipeline.validate.check_status`)."""
    oDate: Millis = None
    maxPx: Size = None
    minPx: Size = None
    marketMaxQty: Size = None
    limitMaxQty: Size = None
    maxQty: Size = None
    minQty: Size = None
    maxLever: Amount = Field(default=None, validation_alias=AliasChoices("maxLever", "maxlever"))
    lever: Amount = None
    ordPxRange: Size = None
    ctType: str = ""
    alias: str = ""
    iM: Size = None
    mM: Size = None
    mR: Size = None


# --- 2.10 balance --------------------------------------------------------------------------


class BalanceDetail(WireModel):
    ccy: str
    eq: Amount = Decimal(0)
    isoEq: Amount = Decimal(0)
    avail: Amount = Decimal(0)
    trdHold: Amount = Decimal(0)
    upl: Amount = Decimal(0)
    isoAvail: Amount = Decimal(0)
    isoHold: Amount = Decimal(0)
    isoUpl: Amount = Decimal(0)
    im: Amount = Decimal(0)
    mm: Amount = Decimal(0)
    mmr: Amount = Decimal(0)
    imr: Amount = Decimal(0)
    cTime: Millis = None
    uTime: Millis = None


class Balance(WireModel):
    """The futures account of ``/v3/account/balance`` (2.10)."""

    state: str = "NORMAL"
    eq: Amount = Decimal(0)
    isoEq: Amount = Decimal(0)
    im: Amount = Decimal(0)
    mm: Amount = Decimal(0)
    mmr: Amount = Decimal(0)
    upl: Amount = Decimal(0)
    availMgn: Amount = Decimal(0)
    cTime: Millis = None
    uTime: Millis = None
    details: list[BalanceDetail] = Field(default_factory=list)


class RiskLimitTier(WireModel):
    """A tier of ``/v3/market/riskLimit`` (2.11); accepts ``maxLever`` and ``maxlever``."""

    symbol: str
    mgnMode: MarginMode | None = None
    tier: str = ""
    maxLever: Amount = Field(default=None, validation_alias=AliasChoices("maxLever", "maxlever"))
    mMRatio: Size = None
    maxSize: Size = None
    minSize: Size = None


# --- market data (notes) -------------------------------------------------------------------


class Ticker(WireModel):
    """24h ticker of ``/v3/market/tickers``: last ``c``, mark ``mPx``, index ``iPx``, bid/ask."""

    s: str
    o: Size = None
    h: Size = None
    l: Size = None  # noqa: E741 - the wire name
    c: Size = None
    qty: Size = None
    amt: Size = None
    tC: int | None = None
    sT: Millis = None
    cT: Millis = None
    dN: str = ""
    dC: Amount = None
    bPx: Size = None
    bSz: Size = None
    aPx: Size = None
    aSz: Size = None
    mPx: Size = None
    iPx: Size = None


class MarkPrice(WireModel):
    s: str
    mPx: Size = None


class IndexPrice(WireModel):
    """``/v3/market/indexPrice`` (notes)."""

    s: str
    iPx: Size = None


class FundingRate(WireModel):
    """``/v3/market/fundingRate`` (notes): rate ``fR`` due at ``fT``, next ``nFR`` at ``nFT``."""

    s: str
    fR: Amount = None
    fT: Millis = None
    nFR: Amount = None
    nFT: Millis = None


class OrderBook(WireModel):
    """``/v3/market/orderBook`` (notes): ``[price, size]`` levels, best first."""

    s: str = ""
    asks: list[list[Annotated[Decimal, Field(allow_inf_nan=False)]]] = Field(default_factory=list)
    bids: list[list[Annotated[Decimal, Field(allow_inf_nan=False)]]] = Field(default_factory=list)
    ts: Millis = None


class Leverage(WireModel):
    """One entry of ``/v3/position/leverages``: the leverage set for a symbol and leg."""

    symbol: str
    lever: Amount = None
    mgnMode: MarginMode | None = None
    posSide: PosSide | None = None


class LimitPrice(WireModel):
    """The allowed price band now: BUY at most ``buyLmt``, SELL at least ``sellLmt``."""

    symbol: str
    buyLmt: Size = None
    sellLmt: Size = None


class Candle(WireModel):
    """One candle. The wire row is ``[low, high, open, close, amt, qty, tC, sT, cT]``."""

    low: Decimal
    high: Decimal
    open: Decimal
    close: Decimal
    amt: Decimal = Decimal(0)
    qty: Decimal = Decimal(0)
    tC: int = 0
    sT: int
    cT: int

    @classmethod
    def from_row(cls, row: list[Any]) -> Candle:
        keys = ("low", "high", "open", "close", "amt", "qty", "tC", "sT", "cT")
        if len(row) < len(keys):
            raise ValueError(f"candle row has {len(row)} fields, expected {len(keys)}")
        return cls.model_validate(
            {k: _millis(v) if k in {"sT", "cT"} else v for k, v in zip(keys, row, strict=False)}
        )

    def to_row(self) -> list[str | int]:
        return [
            str(self.low),
            str(self.high),
            str(self.open),
            str(self.close),
            str(self.amt),
            str(self.qty),
            self.tC,
            self.sT,
            self.cT,
        ]


# --- requests ------------------------------------------------------------------------------


_WIRE = "_wire_body"
"""Where an :class:`OrderRequest` keeps its wire body (a key of its ``__dict__`` that is no field:
equality, hashing, ``repr``, iteration and dumps read the fields only)."""
_TEXTS = "_wire_texts"
"""Where it keeps its body's two texts and its amounts' (:meth:`OrderRequest._texts`),
likewise."""
_Texts = tuple[str, str, str, str | None]
"""What :meth:`OrderRequest._texts` makes: the body's text, the journal's, ``sz``, ``px``."""


class OrderRequest(BaseModel):
    """One order as sent to ``POST /v3/trade/orders`` (4.3). Amounts go out as decimal strings.

    botkit always sends ``mgnMode`` and ``posSide`` (the live batch endpoint refuses orders
    without them, notes).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    symbol: str
    side: OrderSide
    type: OrderType
    sz: Annotated[Decimal, Field(gt=0, allow_inf_nan=False)]
    mgnMode: MarginMode = MarginMode.CROSS
    posSide: PosSide = PosSide.BOTH
    px: Annotated[Decimal | None, Field(gt=0, allow_inf_nan=False)] = None
    clOrdId: str | None = Field(default=None, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")
    reduceOnly: bool = False
    timeInForce: TimeInForce = TimeInForce.GTC
    stpMode: StpMode = StpMode.NONE

    def __copy__(self) -> Self:
        copied = super().__copy__()
        copied.__dict__.pop(_WIRE, None)  # an update may follow (model_copy): built afresh
        copied.__dict__.pop(_TEXTS, None)
        return copied

    @property
    def sz_text(self) -> str:
        """The size as the wire carries it (plain digits, never an exponent)."""
        return format(self.sz, "f")

    @property
    def px_text(self) -> str | None:
        """The price as the wire carries it, or None without one."""
        return None if self.px is None else format(self.px, "f")

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for the request body: strings for amounts, no ``None`` fields.

        Built once per request and kept (the journal's row and the request body both ask for
        it): each call returns a fresh copy. A shallow copy of the request starts without it
        (``model_copy`` makes one before it applies an update, deep or not), so an updated copy
        builds its own; a deep copy without an update keeps it, equal in every field.
        """
        return dict(self.kept_wire())

    def kept_wire(self) -> Mapping[str, Any]:
        """The body :meth:`to_wire` hands out copies of, itself: for a reader that only reads
        it (the client writing a request's JSON), never to be changed."""
        wire: dict[str, Any] | None = self.__dict__.get(_WIRE)
        if wire is None:
            wire = self.__dict__[_WIRE] = self._wire()
        return wire

    def wire_text(self) -> str:
        """:meth:`kept_wire` as JSON, as ``json.dumps(body, separators=(",", ":"))`` writes it
        (the client's request body): :meth:`_texts`' first."""
        texts: _Texts | None = self.__dict__.get(_TEXTS)
        if texts is None:
            texts = self.__dict__[_TEXTS] = self._texts()
        return texts[0]

    def journal_text(self) -> str:
        """:meth:`kept_wire` as the journal's ``request`` column holds it, as ``json.dumps(body,
        separators=(",", ":"), sort_keys=True)`` writes it: :meth:`_texts`' second."""
        texts: _Texts | None = self.__dict__.get(_TEXTS)
        if texts is None:
            texts = self.__dict__[_TEXTS] = self._texts()
        return texts[1]

    def amount_texts(self) -> tuple[str, str | None]:
        """The body's ``sz`` and ``px`` (None without a price) as :meth:`kept_wire` holds them
        (:attr:`sz_text`, :attr:`px_text`): :meth:`_texts`' last two, kept with the texts, so a
        reader of the amounts alone (the simulator's port) builds no body."""
        texts: _Texts | None = self.__dict__.get(_TEXTS)
        if texts is None:
            texts = self.__dict__[_TEXTS] = self._texts()
        return texts[2], texts[3]

    def _texts(self) -> _Texts:
        """The body's two texts (:meth:`wire_text`, :meth:`journal_text`) and its amounts'
        (:meth:`amount_texts`), made once per request and kept (beside :meth:`kept_wire`'s
        body, likewise out of the fields), written directly from the fields without the body's
        mapping: the values :meth:`_wire` puts there, each between quotes as the encoder
        leaves it — the words are the members'
        (capitals and ``_``: :data:`_PLAIN_WORDS`), the amounts ``Decimal`` text (digits,
        ``.``, a sign, an exponent) — when the symbol and the client order id need no escaping
        either; by the encoder otherwise. The encoder makes a string for every key and every
        value: a batch of ten written this way takes ~72 % of its instructions (callgrind); the
        journal's text and the body's share their values and checks (issue 20: each order's
        mapping built and then only written out twice)."""
        fields = self.__dict__
        symbol = fields["symbol"]
        cid = fields["clOrdId"]
        if not (
            _PLAIN_WORDS
            and type(symbol) is str
            and _JSON_AS_IS(symbol)
            and (cid is None or (type(cid) is str and _JSON_AS_IS(cid)))
        ):
            wire = self.kept_wire()
            return (
                json.dumps(wire, separators=(",", ":")),
                json.dumps(wire, separators=(",", ":"), sort_keys=True),
                wire["sz"],
                wire.get("px"),
            )
        side = fields["side"]._value_  # ``.value`` reads through enum's descriptor
        mgn = fields["mgnMode"]._value_
        pos = fields["posSide"]._value_
        kind = fields["type"]._value_
        sz = _fixed(fields["sz"])
        px = fields["px"]
        tif = fields["timeInForce"]
        stp = fields["stpMode"]
        # each optional key's piece, "" when the body leaves it out (the body's order first,
        # then the same keys sorted: clOrdId mgnMode posSide px reduceOnly side stpMode symbol
        # sz timeInForce type)
        cid_body = cid_sorted = px_body = px_sorted = reduce_body = reduce_sorted = ""
        tif_body = tif_sorted = stp_body = stp_sorted = ""
        if cid is not None:
            cid_body = f',"clOrdId":"{cid}"'
            cid_sorted = f'"clOrdId":"{cid}",'
        if px is not None:
            px = _fixed(px)
            px_body = f',"px":"{px}"'
            px_sorted = f'"px":"{px}",'
        if fields["reduceOnly"]:
            reduce_body = ',"reduceOnly":true'
            reduce_sorted = '"reduceOnly":true,'
        if tif is not TimeInForce.GTC:
            tif_sorted = tif_body = f',"timeInForce":"{tif._value_}"'
        if stp is not StpMode.NONE:
            stp_body = f',"stpMode":"{stp._value_}"'
            stp_sorted = f'"stpMode":"{stp._value_}",'
        return (
            f'{{"symbol":"{symbol}","side":"{side}","mgnMode":"{mgn}","posSide":"{pos}",'
            f'"type":"{kind}","sz":"{sz}"{cid_body}{px_body}{reduce_body}{tif_body}{stp_body}}}',
            f'{{{cid_sorted}"mgnMode":"{mgn}","posSide":"{pos}",{px_sorted}{reduce_sorted}'
            f'"side":"{side}",{stp_sorted}"symbol":"{symbol}","sz":"{sz}"{tif_sorted},'
            f'"type":"{kind}"}}',
            sz,
            px,
        )

    def _wire(self) -> dict[str, Any]:
        """The body, built: the words are the members' ``_value_`` (``.value`` reads through
        enum's descriptor, at twice the cost)."""
        px = self.px
        body: dict[str, Any] = {
            "symbol": self.symbol,
            "side": self.side._value_,
            "mgnMode": self.mgnMode._value_,
            "posSide": self.posSide._value_,
            "type": self.type._value_,
            "sz": _fixed(self.sz),
        }
        if self.clOrdId is not None:
            body["clOrdId"] = self.clOrdId
        if px is not None:
            body["px"] = _fixed(px)
        if self.reduceOnly:
            body["reduceOnly"] = True
        if self.timeInForce is not TimeInForce.GTC:
            body["timeInForce"] = self.timeInForce._value_
        if self.stpMode is not StpMode.NONE:
            body["stpMode"] = self.stpMode._value_
        return body


_JSON_AS_IS = re.compile(r"[ !#-\[\]-~]*").fullmatch
"""Whether the JSON encoder writes a text as it is, between quotes (a match, or None):
printable ASCII without ``"`` or ``\\`` (``ensure_ascii`` escapes the rest)."""
_PLAIN_WORDS = all(
    member._value_.replace("_", "").isalpha() and member._value_.isascii()
    for kind in (OrderSide, OrderType, MarginMode, PosSide, TimeInForce, StpMode)
    for member in kind
)
"""Every word a body holds is written by the encoder as it is (checked at import)."""


def _fixed(value: Decimal) -> str:
    """``format(value, "f")``: ``str(value)`` when that has no exponent — the same text (the
    plain notation ``str`` writes then is the fixed-point one) at a third of the cost. (``e``:
    a decimal context with ``capitals=0`` writes its exponents in lower case.)"""
    text = str(value)
    return text if "E" not in text and "e" not in text else format(value, "f")


_ORDER_FIELDS = tuple(OrderRequest.model_fields)
_FIELD_COUNT = len(_ORDER_FIELDS)
only_cl_ord_id_chars = re.compile(r"[A-Za-z0-9_-]*").fullmatch
"""Whether a text is made of ``A-Z a-z 0-9 _ -`` only (a match, or None): what
``set(...).issuperset(text)`` says, at a third of its cost (a set lookup per character)."""
_ZERO = Decimal(0)
_set = object.__setattr__


def order_request(
    *,
    symbol: str,
    side: OrderSide,
    order_type: OrderType,
    sz: Decimal,
    mgn_mode: MarginMode,
    pos_side: PosSide,
    px: Decimal | None,
    cl_ord_id: str,
    reduce_only: bool,
    time_in_force: TimeInForce,
    stp_mode: StpMode,
) -> OrderRequest:
    """``OrderRequest(...)`` of these values, every field given: the same model, built without
    running the validation again when the values are already what it would keep — each of the
    type the field holds (a member, a ``Decimal``, a ``bool``, a ``str``), ``sz`` and ``px``
    finite and above 0, ``clOrdId`` 1–32 of ``A-Z a-z 0-9 _ -`` — and through it otherwise (it
    then refuses what it refuses). Every order the pipeline sends is one: validation costs as
    much as the rest of an order's planning. :data:`FAST_ORDER_REQUESTS` says whether the direct
    build is in use (it is compared with the validated one at import)."""
    if (
        FAST_ORDER_REQUESTS
        and type(side) is OrderSide  # the exact type the model keeps
        and type(order_type) is OrderType
        and type(sz) is Decimal
        and type(mgn_mode) is MarginMode
        and type(pos_side) is PosSide
        and type(symbol) is str
        and type(cl_ord_id) is str
        and type(reduce_only) is bool
        and type(time_in_force) is TimeInForce
        and type(stp_mode) is StpMode
        and sz.is_finite()
        and sz > _ZERO
        and (px is None or (type(px) is Decimal and px.is_finite() and px > _ZERO))
        and 0 < len(cl_ord_id) <= 32
        and only_cl_ord_id_chars(cl_ord_id)
    ):
        return _direct({
            "symbol": symbol, "side": side, "type": order_type, "sz": sz, "mgnMode": mgn_mode,
            "posSide": pos_side, "px": px, "clOrdId": cl_ord_id, "reduceOnly": reduce_only,
            "timeInForce": time_in_force, "stpMode": stp_mode,
        })  # fmt: skip
    return OrderRequest(
        symbol=symbol, side=side, type=order_type, sz=sz, mgnMode=mgn_mode, posSide=pos_side,
        px=px, clOrdId=cl_ord_id, reduceOnly=reduce_only, timeInForce=time_in_force,
        stpMode=stp_mode,
    )  # fmt: skip


def order_request_as(known: OrderRequest, cl_ord_id: str) -> OrderRequest | None:
    """``known`` with the client order id ``cl_ord_id``: what ``OrderRequest(...)`` of its
    fields with that id gives, built directly from its fields — ``None`` when the id is not one
    the model keeps as it is (1–32 of ``A-Z a-z 0-9 _ -``; the model refuses the others) or
    the direct build is off (:data:`FAST_ORDER_REQUESTS`). ``known`` holds what validation
    keeps, so only the id is checked: the planner's orders of the same values as one built
    before (:class:`~botkit.pipeline.validate.CheckMemo`) take their request this way."""
    if not (
        FAST_ORDER_REQUESTS
        and type(cl_ord_id) is str
        and 0 < len(cl_ord_id) <= 32
        and only_cl_ord_id_chars(cl_ord_id)
    ):
        return None
    kept = known.__dict__
    fields = kept.copy()  # its fields in the model's order, as every build leaves them
    if len(fields) != _FIELD_COUNT:  # and what it keeps beside them (its body, its texts)
        fields = {name: kept[name] for name in _ORDER_FIELDS}
    fields["clOrdId"] = cl_ord_id
    return _direct(fields)


def _direct(fields: dict[str, Any]) -> OrderRequest:
    """The model holding ``fields`` (every field, in the model's order), as validation leaves
    it: the values in ``__dict__``, every field set, no extras, no private values. Each is
    stored through the model's own slot (:data:`_SLOTS`: what ``object.__setattr__`` finds by
    name, bound once; a third of the build's cost)."""
    order = _new(OrderRequest)
    set_dict, set_fields, set_extra, set_private = _SLOTS
    set_dict(order, fields)
    set_fields(order, _ALL_SET.copy())
    set_extra(order, None)
    set_private(order, None)
    return order


def _slot_setters() -> tuple[Callable[[Any, Any], None], ...]:
    """The stores of a model's ``__dict__`` and pydantic's three slots, each the descriptor's
    own ``__set__`` (``object.__setattr__`` by name when this pydantic keeps one elsewhere)."""
    names = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    setters: list[Callable[[Any, Any], None]] = []
    for name in names:
        slot = BaseModel.__dict__.get(name)
        setter = getattr(slot, "__set__", None)
        setters.append(setter if setter is not None else partial(_by_name, name))
    return tuple(setters)


def _by_name(name: str, obj: Any, value: Any) -> None:
    _set(obj, name, value)


_new = OrderRequest.__new__
_SLOTS = _slot_setters()
_ALL_SET = set(_ORDER_FIELDS)
"""Every field of an order request, set (copied into each: pydantic may add to a model's)."""


def _same_build() -> bool:
    """Whether the direct build gives what validation gives (this pydantic's model layout)."""
    values: dict[str, Any] = {
        "symbol": "BTC_USDT_PERP", "side": OrderSide.SELL, "type": OrderType.LIMIT,
        "sz": Decimal("2.50"), "mgnMode": MarginMode.ISOLATED, "posSide": PosSide.SHORT,
        "px": Decimal("61234.5"), "clOrdId": "a_b-1", "reduceOnly": True,
        "timeInForce": TimeInForce.IOC, "stpMode": StpMode.EXPIRE_BOTH,
    }  # fmt: skip
    try:
        fast = _direct(dict(values))
        slow = OrderRequest(**values)
        return _alike(fast, slow) and tuple(values) == _ORDER_FIELDS
    except Exception:  # a pydantic laid out otherwise: validate every request
        return False


def _alike(fast: OrderRequest, slow: OrderRequest) -> bool:
    return bool(
        fast == slow
        and _shape(fast) == _shape(slow)
        and fast.model_fields_set == slow.model_fields_set
        and fast.__pydantic_extra__ == slow.__pydantic_extra__
        and fast.__pydantic_private__ == slow.__pydantic_private__
        and repr(fast) == repr(slow)
        and fast.model_dump() == slow.model_dump()
        and fast.to_wire() == slow.to_wire()
    )


def _shape(order: OrderRequest) -> list[tuple[str, type, str]]:
    """Each stored value with its type and text (``Decimal("2.50")`` equals ``2.5``)."""
    return [(k, type(v), str(v)) for k, v in order.__dict__.items()]


FAST_ORDER_REQUESTS: bool = _same_build()
"""Whether :func:`order_request` builds checked values directly (this pydantic's models are laid
out as the direct build assumes); else every order request is validated."""
