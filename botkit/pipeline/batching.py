"""Batching: orders into groups of at most 10 in a deterministic order, and results back to orders.

Pure. The order is fixed by :func:`order_key` (reduce-only orders first, so risk-reducing orders
leave before risk-adding ones; then strategy, rule, slot, leg, client order id), so the same
decisions always make the same batches. :func:`match_results` pairs each result with its order by
position *and* client order id; anything else is a :class:`~botkit.errors.BatchMismatch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from botkit.errors import BatchMismatch, RequestContext
from botkit.exchange.models import OrderRequest, PlaceResult
from botkit.intents import OrderIntent

__all__ = ["MAX_BATCH", "make_batches", "match_results", "order_key"]

MAX_BATCH = 10
"""Orders per ``POST /v3/trade/orders`` (spec 8)."""

T = TypeVar("T")


def order_key(intent: OrderIntent) -> tuple[bool, str, str, int, int, str]:
    """The deterministic sending order of intents."""
    return (
        not intent.reduce_only,
        intent.strategy,
        intent.rule,
        intent.slot,
        intent.leg,
        intent.cl_ord_id,
    )


def make_batches(items: Sequence[T], size: int = MAX_BATCH) -> tuple[tuple[T, ...], ...]:
    """Consecutive groups of at most ``size`` (1–10), keeping the given order."""
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"batch size {size} is outside 1..{MAX_BATCH}")
    return tuple(tuple(items[i : i + size]) for i in range(0, len(items), size))


def match_results(
    requests: Sequence[OrderRequest], results: Sequence[PlaceResult]
) -> list[tuple[OrderRequest, PlaceResult]]:
    """Pair each result with its order: same count, same position, same ``clOrdId``.

    A result that does not carry the client order id of the order at its position is a
    mismatch, accepted or not: the exchange may have placed orders we cannot attribute.
    """
    if len(results) != len(requests):
        raise BatchMismatch(
            f"batch of {len(requests)} orders answered with {len(results)} results",
            context=_context(requests),
        )
    pairs = list(zip(requests, results, strict=True))
    for index, (request, result) in enumerate(pairs):
        if result.clOrdId != (request.clOrdId or ""):
            raise BatchMismatch(
                f"result {index} carries clOrdId {result.clOrdId!r} for order {request.clOrdId!r}",
                context=_context(requests),
            )
    return pairs


def _context(requests: Sequence[OrderRequest]) -> RequestContext:
    """What a mismatch names: the batch request and its client order ids (built only then)."""
    ids = tuple(r.clOrdId or "" for r in requests)
    return RequestContext(method="POST", path="/v3/trade/orders", client_order_ids=ids)
