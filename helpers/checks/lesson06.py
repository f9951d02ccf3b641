"""Checks for lesson 06 (not written yet)."""

__all__: list[str] = []
