"""Open orders no loaded strategy owns: whose they are, and what start-up does with them.

A client order id carries a hash of its strategy's name (:mod:`botkit.rules.ids`), so an open
order is either

* **owned**: its tag is a loaded strategy's;
* **of a removed strategy**: its tag is that of a strategy the journal knows (it ran here
  before) that is not loaded now — its file was deleted, renamed away or left the strategies
  folder, perhaps while the service was stopped. It gets that strategy's ``on_delete``, the
  same as when a file goes while the service runs: ``cancel`` cancels it, ``keep`` leaves it
  (and so does an unknown ``on_delete``: a strategy journaled by an older botkit, or a file that
  exists but does not load, whose strategy cannot be told); when two removed strategies the
  journal knows share its tag (a journal from before such names were refused), whose it is
  cannot be told: it is left, neither's ``on_delete`` applies;
* **unattributed**: not a botkit id (placed by hand or by another program), or a botkit id of
  no strategy this journal knows (another bot's, another journal's). Never touched; listed by
  ``botkit status`` and ``botkit plan``.

Pure: values in, values out. The runner reads the orders and applies the verdicts.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botkit.exchange.models import OpenOrder
from botkit.numbers import plain
from botkit.ports.journal import StrategyRecord
from botkit.rules import OnDelete
from botkit.rules.ids import parse_client_order_id, strategy_tag

__all__ = [
    "NOT_OWNED_EVENT",
    "Classified",
    "NotOwned",
    "OrphanReport",
    "classify",
    "not_owned_detail",
    "order_text",
]

NOT_OWNED_EVENT = "orders_not_owned"
"""The journal event listing the open orders no loaded strategy owns (``botkit status``)."""

NOT_BOTKIT = "not placed by botkit"
UNKNOWN_STRATEGY = "a botkit id of no strategy this journal knows"


@dataclass(frozen=True, slots=True)
class NotOwned:
    """An open order left alone, and why."""

    order: OpenOrder
    why: str


@dataclass(frozen=True, slots=True)
class Classified:
    """The open orders of removed strategies (by strategy) and the unattributed ones."""

    removed: dict[str, tuple[StrategyRecord, list[OpenOrder]]] = field(default_factory=dict)
    unattributed: list[OpenOrder] = field(default_factory=list)
    shared: list[NotOwned] = field(default_factory=list)
    """Orders of a tag two removed strategies share (both ran, in a journal from before such
    names were refused): whose they are cannot be told, so neither's ``on_delete`` applies."""


def classify(
    orders: Iterable[OpenOrder], loaded: Collection[str], known: Sequence[StrategyRecord]
) -> Classified:
    """Sort ``orders`` by owner: ``loaded`` strategy names own theirs; ``known`` (the journal's
    strategies) not loaded are removed ones (two of one tag: ``shared``, neither's)."""
    loaded_tags = {strategy_tag(name) for name in loaded}
    removed_by_tag: dict[str, list[StrategyRecord]] = {}
    for record in known:
        if record.name not in loaded and record.tag not in loaded_tags:
            removed_by_tag.setdefault(record.tag, []).append(record)
    out = Classified()
    for order in orders:
        parsed = parse_client_order_id(order.clOrdId)
        if parsed is None:
            out.unattributed.append(order)
        elif parsed.strategy_tag in loaded_tags:
            continue
        elif (records := removed_by_tag.get(parsed.strategy_tag)) is None:
            out.unattributed.append(order)
        elif len(records) > 1:
            out.shared.append(NotOwned(order, why_shared(records)))
        else:
            out.removed.setdefault(records[0].name, (records[0], []))[1].append(order)
    return out


def why_unattributed(order: OpenOrder) -> str:
    return NOT_BOTKIT if parse_client_order_id(order.clOrdId) is None else UNKNOWN_STRATEGY


def why_shared(records: Sequence[StrategyRecord]) -> str:
    names = " or ".join(r.name for r in records)
    return (
        f"of removed strategy {names}, of one client order id tag ({records[0].tag}):"
        " whose it is cannot be told (left)"
    )


def why_kept(record: StrategyRecord, broken: bool, *, dry: bool = False) -> str:
    """Why the orders of removed strategy ``record`` are left resting (``dry``: a dry run, whose
    on_delete cancel was journaled but not sent)."""
    if broken:
        return f"of strategy {record.name}, whose file {record.source} does not load (left)"
    if record.on_delete == OnDelete.KEEP.value:
        return f"of removed strategy {record.name} (on_delete: keep)"
    if record.on_delete == OnDelete.CANCEL.value:
        outcome = "not sent: dry run" if dry else "the cancel failed"
        return f"of removed strategy {record.name} (on_delete: cancel; {outcome})"
    return f"of removed strategy {record.name} (on_delete unknown: journaled by an older botkit)"


def not_owned(
    orders: Iterable[OpenOrder],
    loaded: Collection[str],
    known: Sequence[StrategyRecord],
    *,
    dry: bool = False,
) -> list[NotOwned]:
    """Every open order no loaded strategy owns, with why it is left (a running service's
    view: the removed strategies' on_delete has been applied at start-up, or with ``dry`` only
    journaled)."""
    found = classify(orders, loaded, known)
    out = [NotOwned(o, why_unattributed(o)) for o in found.unattributed]
    for record, its in found.removed.values():
        out += [NotOwned(o, why_kept(record, broken=False, dry=dry)) for o in its]
    return out + found.shared


def order_text(order: OpenOrder) -> str:
    """``BTC_USDT_PERP BUY 1 @ 60000 (ordId 123, clOrdId manual-1)``: one order on one line."""
    price = f" @ {plain(order.px)}" if order.px is not None else ""
    size = plain(order.sz) if order.sz is not None else "?"
    ids = f"ordId {order.ordId or '?'}, clOrdId {order.clOrdId or '(none)'}"
    return f"{order.symbol} {order.side.value} {size}{price} ({ids})"


def not_owned_detail(items: Sequence[NotOwned]) -> dict[str, Any]:
    """The journal event's detail: every order as text, with why it is left."""
    return {
        "orders": [
            {
                "symbol": i.order.symbol,
                "ordId": i.order.ordId,
                "clOrdId": i.order.clOrdId,
                "text": order_text(i.order),
                "why": i.why,
            }
            for i in items
        ]
    }


@dataclass(frozen=True, slots=True)
class OrphanReport:
    """What the start-up pass did: cancels applied (``effects``, the runner's side effects)
    and the orders left resting, with why."""

    effects: tuple[Any, ...] = ()
    left: tuple[NotOwned, ...] = ()

    def lines(self) -> list[str]:
        out = [f"{e.action} {e.strategy}/{e.rule}: {e.detail}" for e in self.effects]
        if self.left:
            out.append(f"open orders no loaded strategy owns: {len(self.left)}")
            out += [f"  {order_text(i.order)}: {i.why}" for i in self.left]
        return out
