"""botkit.runner."""
