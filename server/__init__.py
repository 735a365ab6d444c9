"""Tongits Trio server."""
