"""Tests of the backtest data tools: candles, path, synth, fetch, report."""
