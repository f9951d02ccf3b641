"""Checks for lesson 03 (not written yet)."""

__all__: list[str] = []
