"""Another botkit on the same account: open orders carrying this bot's client order ids that
this journal did not send.

Client order ids are deterministic (strategy, rule, slot, leg: :mod:`botkit.rules.ids`), which
is what keeps one bot from doubling an order across restarts — and what makes two bots running
the same strategies on one account, each with its own journal, share ids silently: each takes
the other's orders for its own, or (on an exchange that accepts a repeated client order id)
both place them. The journal lock (:func:`~botkit.journal.lock_journal`) stops two processes on
one journal; nothing local can see a process on another host or journal, but the exchange can:

* an open order whose id belongs to a loaded strategy (its hash) and that this journal never
  sent — *foreign*;
* an open order whose id this journal sent and settled with another ``ordId`` — *placed twice*.

* an order whose *first* request the exchange answered ``250 duplicate`` (the submitter settles
  it by lookup with :data:`~botkit.runner.orders.submit.SHARED_ID_NOTE`): the other bot placed it
  first, and this journal now holds the other's order.

Each is warned about (log WARNING, and a ``shared_client_id`` journal event), once per order.
The runner checks the open orders of its first cycle (read for the check if the cycle did not)
and of every later cycle that read them anyway, so the check costs no request after start-up,
and the outcomes of every cycle.
Other causes of a foreign order: the journal was deleted, replaced or restored from an old copy,
or ``botkit journal prune`` dropped the settled record of an order still resting. Dry runs send
nothing and are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loguru import logger

from botkit.exchange.models import OpenOrder
from botkit.ports.journal import OrderOutcome, SharedIdReads
from botkit.rules.ids import parse_client_order_id, strategy_tag
from botkit.runner.orders.submit import SHARED_ID_NOTE

__all__ = ["SharedIdWatch", "Suspect", "shared_ids"]

_REMEMBERED = 10_000
"""At most this many warned-about orders are remembered (then the memory starts afresh)."""


@dataclass(frozen=True, slots=True)
class Suspect:
    """An open order another process (or another journal) placed under this bot's ids."""

    order: OpenOrder
    strategy: str
    journal_ord_id: str | None
    """None: the journal never sent this id; else the ordId the journal settled it with."""

    def text(self) -> str:
        o = self.order
        head = f"open order {o.clOrdId} (ordId {o.ordId}, {o.symbol}) of strategy {self.strategy}"
        if self.journal_ord_id is None:
            why = "carries this bot's client order id but this journal never sent it"
        else:
            why = f"repeats a client order id this journal placed as ordId {self.journal_ord_id}"
        return (
            f"{head} {why}: another botkit with another journal may be trading {self.strategy}"
            " on this account (they share client order ids) — run one instance per account and"
            " strategy; or this journal was replaced or pruned"
        )


def shared_ids(
    orders: Sequence[OpenOrder],
    strategies: Iterable[str],
    journal_ord_ids: Mapping[str, str],
) -> list[Suspect]:
    """The suspects among ``orders`` (pure). ``journal_ord_ids``: clOrdId → the ordId this
    journal holds for it (``""`` while unsettled) for every id of ``orders`` it knows."""
    by_tag = {strategy_tag(name): name for name in strategies}
    found: list[Suspect] = []
    for order in orders:
        parsed = parse_client_order_id(order.clOrdId)
        if parsed is None or parsed.strategy_tag not in by_tag:
            continue
        strategy = by_tag[parsed.strategy_tag]
        if order.clOrdId not in journal_ord_ids:
            found.append(Suspect(order, strategy, None))
            continue
        known = journal_ord_ids[order.clOrdId]
        if known and order.ordId and known != order.ordId:
            found.append(Suspect(order, strategy, known))
    return found


def _strategy_of(cl_ord_id: str, strategies: Iterable[str]) -> str:
    parsed = parse_client_order_id(cl_ord_id)
    if parsed is None:
        return ""
    return next((n for n in strategies if strategy_tag(n) == parsed.strategy_tag), "")


class SharedIdWatch:
    """Warns once per order about :func:`shared_ids` suspects (log and journal)."""

    def __init__(self, journal: SharedIdReads) -> None:
        self.journal = journal
        self._warned: set[tuple[str, str]] = set()
        self.checked = False
        """Whether any open orders were checked yet (the first cycle reads them to check)."""

    def check(
        self, orders: Sequence[OpenOrder], strategies: Iterable[str], cycle_id: int | None
    ) -> list[Suspect]:
        """Warn about the new suspects among ``orders``; returns them."""
        self.checked = True
        ids = [o.clOrdId for o in orders if parse_client_order_id(o.clOrdId) is not None]
        if not ids:
            return []
        suspects = shared_ids(orders, strategies, self.journal.ord_ids(ids))
        fresh = [s for s in suspects if (s.order.clOrdId, s.order.ordId) not in self._warned]
        for suspect in fresh:
            detail = {"ordId": suspect.order.ordId, "journal_ordId": suspect.journal_ord_id}
            self._warn(
                suspect.order.clOrdId,
                suspect.order.ordId,
                suspect.strategy,
                suspect.text(),
                detail,
                cycle_id,
            )
        return fresh

    def check_outcomes(
        self, outcomes: Iterable[OrderOutcome], strategies: Iterable[str], cycle_id: int | None
    ) -> list[str]:
        """Warn about orders whose first request the exchange answered ``250 duplicate``;
        returns their client order ids."""
        found = [o for o in outcomes if o.error == SHARED_ID_NOTE]
        names = list(strategies)
        for o in found:
            strategy = _strategy_of(o.cl_ord_id, names)
            text = (
                f"order {o.cl_ord_id} of strategy {strategy or '?'} was already at the exchange"
                f" (ordId {o.ord_id}) when this bot first sent it: another botkit with another"
                f" journal may be trading {strategy or 'this strategy'} on this account (they"
                " share client order ids) — run one instance per account and strategy"
            )
            self._warn(o.cl_ord_id, o.ord_id, strategy, text, {"ordId": o.ord_id}, cycle_id)
        return [o.cl_ord_id for o in found]

    def _warn(
        self,
        cl_ord_id: str,
        ord_id: str,
        strategy: str,
        text: str,
        detail: dict[str, Any],
        cycle_id: int | None,
    ) -> None:
        key = (cl_ord_id, ord_id)
        if key in self._warned:
            return
        if len(self._warned) >= _REMEMBERED:
            self._warned.clear()
        self._warned.add(key)
        logger.bind(strategy=strategy, cl_ord_id=cl_ord_id).warning(text)
        self.journal.record_event(
            "shared_client_id",
            text,
            cl_ord_id=cl_ord_id,
            cycle_id=cycle_id,
            strategy=strategy,
            detail=detail,
        )
