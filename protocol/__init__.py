"""Tongits wire protocol: sans-IO framing and typed messages."""
