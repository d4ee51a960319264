"""Requests ``botkit serve`` files for the service (cancel, flatten): what the service answers
is served back by the API, so it holds no secret — not even one an exchange echoed in an
error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from botkit.app import control
from botkit.settings import Settings

SECRET = "s3cr3t-VALUE-that-must-not-show"


def test_a_failed_request_s_answer_holds_no_secret_the_exchange_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(
        _env_file=None,
        journal=str(tmp_path / "journal.sqlite"),
        api_key="key-0123456789abcdef",
        api_secret=SECRET,
    )

    def echoing(*_args: Any, **_kwargs: Any) -> control.Outcome:
        raise RuntimeError(f"exchange error 401: bad signature for secret {SECRET}")

    monkeypatch.setattr(control, "act", echoing)
    request_id = control.file_request(settings, "cancel", strategy="x", by="api:alice")
    assert control.run_requests(object(), settings) == 1  # type: ignore[arg-type]
    answer = control.request_state(settings, request_id)
    assert answer is not None
    assert answer["status"] == "failed"
    assert any("bad signature" in line for line in answer["lines"])
    on_disk = "".join(p.read_text() for p in control.requests_dir(settings).iterdir())
    assert SECRET not in repr(answer)
    assert SECRET not in on_disk
