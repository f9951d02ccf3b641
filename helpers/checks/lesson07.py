"""Checks for lesson 07 (not written yet)."""

__all__: list[str] = []
