"""botkit.exchange."""
