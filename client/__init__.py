"""Tongits terminal client, bot SDK and arena."""
