"""botkit.live: the live exchange adapter (signed HTTP, clock sync, the ``ExchangeClient``)."""
