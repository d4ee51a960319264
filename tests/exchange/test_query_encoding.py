"""The query's percent-encoding equals ``urllib.parse.quote(value, safe="")`` for every value
(issue 20: a value of unreserved characters only is taken as its own encoding)."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.signing import encode_query

_UNRESERVED = "ABCXYZabcxyz0189-_.~"


@settings(max_examples=300, deadline=None)
@given(
    params=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.text(max_size=12) | st.text(alphabet=_UNRESERVED, max_size=12),
        max_size=4,
    )
)
def test_a_query_is_encoded_as_quote_encodes_it(params: dict[str, str]) -> None:
    """Fails if a character outside ``A-Z a-z 0-9 - _ . ~`` (a space, ``/``, ``+``, ``é``, a
    newline at the end) is left as it is."""
    plain = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in sorted(params.items()))
    assert encode_query(params) == plain


def test_the_characters_at_the_edges_of_the_unreserved_set_are_encoded() -> None:
    for value in ["a b", "a/b", "a+b", "é", "ok\n", "~", "", "x=y", "A-Z_0.9"]:
        assert encode_query({"k": value}) == f"k={quote(value, safe='')}"
