"""botkit.pipeline."""
