"""The HMAC key made once signs as ``hmac.digest`` does, and the body encoder made once writes
what ``json.dumps`` writes (issue 20: the session signs with the key's blocks hashed once and
serialises through one encoder)."""

from __future__ import annotations

import hmac
import json
import pickle
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.signing import HmacKey, sign
from botkit.live import http

_KEYS = st.binary(max_size=200) | st.sampled_from([b"", b"k" * 64, b"k" * 65, b"\x00" * 70])


@settings(max_examples=300, deadline=None)
@given(key=_KEYS, message=st.binary(max_size=3000))
def test_the_key_made_once_signs_as_hmac_digest_does(key: bytes, message: bytes) -> None:
    """Fails if the key's padding, its hashing when longer than a block, or the inner and
    outer pads are wrong: every signature the client sends would be refused."""
    made = HmacKey(key)
    assert made.digest(message) == hmac.digest(key, message, "sha256")
    assert made.digest(message) == made.digest(message)  # the kept states are not consumed


@settings(max_examples=100, deadline=None)
@given(secret=st.text(max_size=80), message=st.text(max_size=300))
def test_signing_with_the_key_or_its_text_gives_one_signature(secret: str, message: str) -> None:
    assert sign(HmacKey(secret), message) == sign(secret, message)


def test_the_key_shows_and_writes_nothing_of_the_secret() -> None:
    made = HmacKey("very-secret-value")
    assert "very-secret" not in repr(made)
    assert "very-secret" not in str(made)
    with pytest.raises(TypeError):
        pickle.dumps(made)
    with pytest.raises(AttributeError):  # no place to keep the secret's text
        made.secret = "x"  # type: ignore[attr-defined]


_BODIES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=12,
)


def _plain(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=http._json_default)


@settings(max_examples=300, deadline=None)
@given(body=_BODIES)
def test_the_encoder_made_once_writes_what_json_dumps_writes(body: Any) -> None:
    """Fails if the shared encoder is set up otherwise than ``json.dumps`` with the session's
    options (separators, ASCII escapes, Decimals as plain text, the check of cycles)."""
    assert http.dumps(body) == _plain(body)


def test_the_encoder_refuses_what_json_dumps_refuses() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for bad in (cyclic, {"x": object()}, {(1,): "tuple key"}):
        with pytest.raises((TypeError, ValueError)) as plain:
            _plain(bad)
        with pytest.raises(type(plain.value)) as ours:
            http.dumps(bad)
        assert str(ours.value) == str(plain.value)
    assert http.dumps([Decimal("1E+2"), Decimal("-0.00")]) == '["100","-0.00"]'
