"""Benchmarks: ``make bench`` runs ``python -m bench``, which runs every ``bench_*.py`` module."""
