"""Tongits rules engine: pure, deterministic, no I/O."""
