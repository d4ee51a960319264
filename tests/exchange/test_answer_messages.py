"""An answer's message is worked out once per text (its one-line form and whether it says the
timestamp expired), and an order's amounts go on the wire as ``format(x, "f")`` writes them
though ``str`` writes most of them (issue 20: the client's steps per request and per order).
Each verdict kept must be the one working it out again gives, every time the text comes back."""

from __future__ import annotations

import decimal
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import (
    AuthFailed,
    ExchangeRejected,
    MalformedResponse,
    RequestContext,
    ServerUnavailable,
    TimestampExpired,
)
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live import http

_CTX = RequestContext("GET", "/v3/account/balance", {}, (), 200)


def _answer(status: int, body: bytes) -> object:
    return http.interpret(status, {}, body, _CTX, write=False, now_ms=0)


@pytest.mark.parametrize("times", [1, 2, 3])
def test_an_expired_timestamp_is_told_each_time_its_text_comes_back(times: int) -> None:
    """Fails if a kept verdict were kept wrong (or only the first answer were searched)."""
    body = b'{"code":400,"msg":"Request expired: signTimestamp is more than 5000 ms"}'
    for _ in range(times):
        with pytest.raises(TimestampExpired):
            _answer(400, body)


def test_a_kept_text_is_no_verdict_for_an_auth_failure_or_another_text() -> None:
    expired = b'{"code":400,"msg":"recvWindow breached"}'
    with pytest.raises(TimestampExpired):
        _answer(400, expired)
    with pytest.raises(AuthFailed):  # 401 with the same text: the key, not the clock
        _answer(200, b'{"code":401,"msg":"recvWindow breached"}')
    with pytest.raises(TimestampExpired) as other:  # the same pattern, another text
        _answer(400, b'{"code":400,"msg":"recvWindow  \\n  fine?"}')
    assert other.value.message == "timestamp expired: recvWindow fine?"
    with pytest.raises(ExchangeRejected):  # and a text without it
        _answer(400, b'{"code":400,"msg":"window closed"}')


_MSG = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["Success", "expired", "EXPIRED\nnow", "signTimestamp is more than 5 s"]),
    st.text(min_size=190, max_size=260),  # around the longest text kept
    st.integers(),
    st.none(),
)


def _plain_message(raw: object) -> tuple[str, bool]:
    """What :func:`interpret` worked out each time before the texts were kept."""
    msg = http._one_line(str(raw)) if raw is not None else ""
    return msg, bool(msg and http.EXPIRED_PATTERN.search(msg))


@settings(max_examples=300, deadline=None)
@given(raw=_MSG)
def test_a_message_kept_is_the_one_worked_out_afresh(raw: object) -> None:
    """Fails if the cache keys a text by anything but itself or keeps a stale verdict."""
    assert http._message(raw) == _plain_message(raw)
    assert http._message(raw) == _plain_message(raw)  # the second time: from the cache


def test_the_messages_kept_are_bounded_in_number_and_size() -> None:
    http._MESSAGES.clear()
    for n in range(http._MESSAGES_MAX * 2):
        http._message(f"text {n}")
    assert len(http._MESSAGES) <= http._MESSAGES_MAX
    http._message("x" * (http._MESSAGE_KEPT_CHARS + 1))
    assert all(len(text) <= http._MESSAGE_KEPT_CHARS for text in http._MESSAGES)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"", "empty body"),
        (b" \r\n\t\x0b\x0c", "empty body"),
        (b"{", "not JSON"),
        (b"x", "not JSON"),
    ],
)
def test_a_blank_body_is_an_empty_one_and_a_broken_one_is_no_json(
    body: bytes, problem: str
) -> None:
    with pytest.raises(MalformedResponse) as info:
        _answer(200, body)
    assert problem in info.value.message


def test_a_5xx_with_a_blank_body_is_still_unavailable() -> None:
    with pytest.raises(ServerUnavailable):
        _answer(503, b"  ")


_AMOUNTS = st.decimals(allow_nan=False, allow_infinity=False, min_value=Decimal("1e-30")).map(
    lambda d: d.scaleb(0)
) | st.sampled_from([Decimal("1E+1"), Decimal("0.0000001"), Decimal("1.50"), Decimal("2E-7")])


@settings(max_examples=300, deadline=None)
@given(sz=_AMOUNTS, px=_AMOUNTS, capitals=st.sampled_from([0, 1]))
def test_an_orders_amounts_go_out_as_fixed_point_text(
    sz: Decimal, px: Decimal, capitals: int
) -> None:
    """Fails if an amount whose ``str`` has an exponent (upper or lower case: a context with
    ``capitals=0``) were sent as ``str`` writes it."""
    with decimal.localcontext() as context:
        context.capitals = capitals
        order = OrderRequest(
            symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT, sz=sz, px=px
        )
        wire = order.to_wire()
    assert wire["sz"] == format(sz, "f")
    assert wire["px"] == format(px, "f")
