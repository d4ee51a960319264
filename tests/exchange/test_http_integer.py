"""``http.integer``'s quick path for a plain ``int`` (an answer's code) gives what counting its
digits gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from botkit.live.http import integer

_near_powers = st.builds(
    lambda k, d, sign: sign * (10**k + d),
    st.integers(0, 30),
    st.integers(-1, 1),
    st.sampled_from([1, -1]),
)


@given(value=st.one_of(st.integers(), _near_powers), digits=st.integers(-2, 25))
def test_an_int_is_kept_when_it_has_at_most_the_digits_allowed(value: int, digits: int) -> None:
    """Fails if the quick path's bounds let ``10 ** n`` through (or stop ``10 ** n - 1``)."""
    expected = value if len(str(abs(value))) <= digits else None
    assert integer(value, max_digits=digits) == expected


def test_a_bool_is_no_integer() -> None:
    assert integer(True) is None
    assert integer(False) is None
