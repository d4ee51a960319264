"""botkit.backtest: replay candles through the simulator and report what the strategies did.

One module, one job (import what you need; nothing heavy happens on ``import botkit.backtest``):

* :mod:`~botkit.backtest.bars` — ``Bar`` (one candle), ``CandleSeries``, ``Gap``.
* :mod:`~botkit.backtest.candles` — ``load_candles``: CSV / JSON lines, checked, located errors.
* :mod:`~botkit.backtest.candle_fast` — the columnar way in for a plain CSV (numpy, exact).
* :mod:`~botkit.backtest.candle_parse` — the row parsers behind it (fast and checked paths).
* :mod:`~botkit.backtest.columns` — ``BarColumns``, ``EquityCurve``: candles and the equity
  curve in compact columns.
* :mod:`~botkit.backtest.candle_writer` — ``write_candles``: CSV or JSON lines by extension.
* :mod:`~botkit.backtest.path` — ``candle_path``: the four price points inside a candle.
* :mod:`~botkit.backtest.synth` — ``synth_bars``: the seeded synthetic series.
* :mod:`~botkit.backtest.fetch` — ``fetch_candles``: paged download through the client.
* :mod:`~botkit.backtest.result` — ``BacktestResult`` and its rows: what a run produced.
* :mod:`~botkit.backtest.metrics` — ``compute_figures``: return, drawdown, exposure, counts.
* :mod:`~botkit.backtest.report` — ``write_report`` / ``render_summary`` (+ ``report_html``:
  the overview page; ``report_page``: the interactive ``report.html`` with the vendored charting
  library in ``assets/``; ``report_indicators``: the strategies' indicators for it).
* :mod:`~botkit.backtest.progress` — ``Progress``: a stderr progress bar for terminals.
"""
