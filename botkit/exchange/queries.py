"""The wide history queries as values: what to select and which page, said once.

``GET /v3/trade/order/history``, ``/v3/trade/order/trades`` and ``/v3/trade/position/history``
share a symbol filter, a time range (``sTime`` / ``eTime``, Unix ms) and the spec's paging
(``from`` / ``limit`` / ``direct``): :class:`HistoryQuery`. Each endpoint adds its own filters:
:class:`OrderQuery`, :class:`FillQuery`, :class:`PositionQuery`. The port, the live client, the
simulator and the fakes take one of these instead of restating eleven keyword arguments, and
:func:`botkit.exchange.paging.iter_history` walks a query's range by replacing its paging fields.

The values are plain: checking them (a page size outside 1..100, an unknown enum word, a start
after its end) is the adapter's job, as before a request leaves
(:mod:`botkit.exchange.params`), so a caller mistake is refused with the same one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: the command line builds queries without loading pydantic
    from botkit.exchange.models import (
        MarginMode,
        OrderHistoryState,
        OrderSide,
        OrderType,
        PosSide,
    )

__all__ = ["Direction", "FillQuery", "HistoryQuery", "OrderQuery", "PositionQuery"]

Direction = Literal["NEXT", "PREV"]
"""``direct``: page towards newer (``NEXT``) or older (``PREV``) records."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryQuery:
    """What every history query has: a symbol, a time range and a page (all optional)."""

    symbol: str | None = None
    start: int | None = None
    """``sTime``, Unix ms."""
    end: int | None = None
    """``eTime``, Unix ms."""
    from_id: str | None = None
    """``from``: the id of the last record of the previous page."""
    limit: int | None = None
    """Records a page, 1..100."""
    direct: Direction | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderQuery(HistoryQuery):
    """One page of closed orders (``GET /v3/trade/order/history``)."""

    side: OrderSide | str | None = None
    ord_id: str | None = None
    cl_ord_id: str | None = None
    state: OrderHistoryState | str | None = None
    type: OrderType | str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FillQuery(HistoryQuery):
    """One page of executions (``GET /v3/trade/order/trades``)."""

    side: OrderSide | str | None = None
    ord_id: str | None = None
    cl_ord_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionQuery(HistoryQuery):
    """One page of previous positions (``GET /v3/trade/position/history``)."""

    mgn_mode: MarginMode | str | None = None
    pos_side: PosSide | str | None = None
