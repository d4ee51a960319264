"""botkit.journal."""
