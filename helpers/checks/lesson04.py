"""Checks for lesson 04 (not written yet)."""

__all__: list[str] = []
