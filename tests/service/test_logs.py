"""Logging: JSON lines off a terminal, bound context, and secrets redacted at the sink."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from loguru import logger

from botkit.service.logs import configure_logging, redact

SECRETS = ("key-AKIA1234", "s3cr3t/with+chars=", "pass phrase!")


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    yield
    logger.remove()


def test_json_lines_carry_bound_strategy_rule_and_client_order_id() -> None:
    out = io.StringIO()
    configure_logging(fmt="json", stream=out)
    logger.bind(strategy="dip", rule="ladder", cl_ord_id="bk1-2-3").info("placed")
    record = json.loads(out.getvalue().splitlines()[0])["record"]
    assert record["message"] == "placed"
    assert record["extra"] == {"strategy": "dip", "rule": "ladder", "cl_ord_id": "bk1-2-3"}


def test_text_lines_show_the_context_prefix() -> None:
    out = io.StringIO()
    configure_logging(fmt="text", stream=out)
    logger.bind(strategy="dip", rule="ladder").warning("refused")
    line = out.getvalue()
    assert "[strategy=dip rule=ladder] refused" in line
    assert "WARNING" in line


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_secrets_never_reach_the_output_even_in_a_traceback(fmt: str) -> None:
    out = io.StringIO()
    configure_logging(fmt=fmt, stream=out, secrets=SECRETS)  # type: ignore[arg-type]
    logger.info("key={} secret={}", SECRETS[0], SECRETS[1])
    logger.bind(passphrase=SECRETS[2]).info("bound")
    try:
        raise RuntimeError(f"boom with {SECRETS[1]} and {SECRETS[2]}")
    except RuntimeError:
        logger.exception("crashed")
    text = out.getvalue()
    assert "crashed" in text
    assert "***" in text
    for secret in SECRETS:
        assert secret not in text
    assert "s3cr3t%2Fwith%2Bchars%3D" not in text


def test_redact_leaves_short_strings_alone() -> None:
    assert redact("a b c", ["b"]) == "a b c"
    assert redact("xx-abcd-xx", ["abcd"]) == "xx-***-xx"
