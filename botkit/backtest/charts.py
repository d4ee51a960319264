"""The matplotlib setup of the PNG charts (the optimisation study's ``history.png`` and
``importance.png``, :mod:`botkit.backtest.study_report`).

Charts are drawn on matplotlib's Agg canvas inside its default style with these settings, so a
user's ``matplotlibrc`` changes nothing; the PNGs carry no software tag or time stamp. The
backtest report itself draws no PNG any more: ``report.html`` (:mod:`botkit.backtest.report_page`)
has the price, position, equity and drawdown, interactive.
"""

from __future__ import annotations

from typing import Any

from matplotlib.typing import RcKeyType

__all__ = ["_RC"]

_RC: dict[RcKeyType, Any] = {
    "timezone": "UTC",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9.0,
    "path.simplify": True,
}
