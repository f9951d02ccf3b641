"""Checks for lesson 02 (not written yet)."""

__all__: list[str] = []
