"""The price band re-checked just before each batch leaves (an edge: it reads the exchange).

A plan checks prices against a band read earlier in the cycle; the mark moves meanwhile, and a
later batch, or a batch re-sent after a 429 or a back-off, leaves later still. So before every
send of a batch :class:`BandCheck` reads the freshest band of the batch's symbols
(``/v3/market/limitPrice``; the mark and ``ordPxRange`` when that read fails) and refuses
locally, with the reason, each priced order that now lies outside it by less than the safety
margin. The rest are sent. A band that cannot be read at all leaves the orders as planned (they
were checked once already), and says so. docs/strategies.md ("Price band") states the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal

from botkit.errors import ExchangeError
from botkit.exchange.models import Instrument, LimitPrice, OrderRequest
from botkit.exchange.port import PriceReads
from botkit.pipeline.validate import Band, band_reason, outside_band, price_band
from botkit.ports.journal import OrderOutcome, Outcome

__all__ = ["BAND_CODE", "BandCheck", "Gate"]

BAND_CODE = 10014
"""The exchange's per-order code for a price outside the band (notes)."""

Gate = Callable[[Sequence[OrderRequest]], tuple[list[OrderRequest], list[OrderOutcome]]]
"""``gate(requests) -> (to send, refused)``: called before every send of a batch."""


class BandCheck:
    """A :data:`Gate`: re-checks priced orders against the band read now.

    ``instruments``: those the plan was checked against; ``margin``: the safety margin (a
    fraction, as :func:`~botkit.pipeline.validate.price_band` takes it); ``note(text)``: where
    a skipped or refusing check is said (the executor journals it)."""

    def __init__(
        self,
        port: PriceReads,
        instruments: Mapping[str, Instrument],
        *,
        margin: Decimal,
        note: Callable[[tuple[str, ...], str], None] = lambda ids, text: None,
    ) -> None:
        self._port = port
        self._instruments = instruments
        self._margin = margin
        self._note = note

    def _fresh(self, symbol: str) -> tuple[Decimal | None, LimitPrice | None] | None:
        """(mark, band) read now, or None when neither can be read."""
        try:
            return None, self._port.limit_price(symbol)
        except ExchangeError as band_error:
            try:
                tickers = self._port.tickers(symbol)
            except ExchangeError as exc:
                self._note((), f"band re-check of {symbol} skipped: {band_error}; {exc}")
                return None
            mark = next((t.mPx for t in tickers if t.s == symbol), None)
            return (mark, None) if mark is not None else None

    def _band(self, symbol: str, now: tuple[Decimal | None, LimitPrice | None]) -> Band | None:
        """The bounds of ``symbol``'s band read now (one :func:`price_band` for the batch's
        orders of the symbol), or ``None`` when they cannot be computed."""
        try:
            return price_band(
                self._instruments[symbol], mark=now[0], limit_price=now[1], margin=self._margin
            )
        except Exception:  # each order's own check meets it again
            return None

    def __call__(
        self, requests: Sequence[OrderRequest]
    ) -> tuple[list[OrderRequest], list[OrderOutcome]]:
        symbols = sorted({r.symbol for r in requests if r.px is not None})
        if not symbols:
            return list(requests), []
        fresh = {s: self._fresh(s) for s in symbols if s in self._instruments}
        bands = {s: self._band(s, now) for s, now in fresh.items() if now is not None}
        keep: list[OrderRequest] = []
        refused: list[OrderOutcome] = []
        for request in requests:
            px = request.px
            symbol = request.symbol
            now = fresh.get(symbol)
            if px is None or now is None:
                keep.append(request)
                continue
            bounds = bands[symbol]
            if bounds is not None:  # inside the bounds: what outside_band says, without a call
                low, high = bounds
                if (low is None or px >= low) and (high is None or px <= high):
                    keep.append(request)
                    continue
            mark, band = now
            instrument = self._instruments[symbol]
            if bounds is None:  # the band's arithmetic failed: meet it as before, per order
                reason = band_reason(
                    px, instrument, mark=mark, limit_price=band, margin=self._margin
                )
            else:
                reason = outside_band(px, bounds, instrument, mark, self._margin)
            if reason is None:
                keep.append(request)
                continue
            text = f"{reason} [re-checked against the band read just before sending]"
            refused.append(
                OrderOutcome(request.clOrdId or "", Outcome.REJECTED_LOCAL, reasons=(text,))
            )
        if refused:
            self._note(
                tuple(o.cl_ord_id for o in refused),
                f"{len(refused)} order(s) not sent: the band moved since the plan",
            )
        return keep, refused
