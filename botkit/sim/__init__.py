"""botkit.sim."""
