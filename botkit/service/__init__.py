"""The daemon's edges: logging with redaction, the systemd notify protocol, Prometheus metrics."""
