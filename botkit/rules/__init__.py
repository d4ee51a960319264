"""botkit.rules."""
