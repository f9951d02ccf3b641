"""Checks for lesson 05 (not written yet)."""

__all__: list[str] = []
