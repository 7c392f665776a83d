"""Benchmarks, studies and reliability tools; `scripts/` holds their entry points."""
