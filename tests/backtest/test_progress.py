"""The progress bar: silent unless on a terminal, throttled, ends its line."""

from __future__ import annotations

import io

from botkit.backtest.progress import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_written_when_the_stream_is_not_a_terminal() -> None:
    out = io.StringIO()
    with Progress(1000, out) as bar:
        for _ in range(1000):
            bar.update()
    assert out.getvalue() == ""
    assert bar.done == 1000


def test_redraws_are_throttled_by_time() -> None:
    out, clock = Tty(), Clock()
    bar = Progress(1000, out, clock=clock, interval=1.0)
    for _ in range(500):
        bar.update()
    assert out.getvalue().count("\r") == 1  # the first draw, then nothing within the second
    clock.now += 1.0
    bar.update(100)
    assert out.getvalue().count("\r") == 2
    bar.close()
    bar.close()
    text = out.getvalue()
    assert text.endswith("\n")
    assert text.count("\n") == 1


def test_rendered_text_shows_share_counts_rate_and_eta() -> None:
    clock = Clock()
    bar = Progress(525_600, Tty(), clock=clock, label="backtest", width=10)
    bar.update(262_800)
    clock.now += 10.0
    assert bar.render(clock.now) == (
        "backtest [#####.....]  50.0% 262,800/525,600 26,280/s ETA 0:10"
    )
    bar.update(262_800)
    clock.now += 3600.0
    assert bar.render(clock.now).endswith("100.0% 525,600/525,600 146/s 1:00:10")
