"""botkit.backtest."""
