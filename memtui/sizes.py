"""Sizes as people read them."""

from __future__ import annotations


def size_text(size: int) -> str:
    """`12.3 MB` from 100 kB up, `45 kB` from 1 kB, else `512 bytes` (decimal units, as
    `ls -lh --si` says them)."""
    if size >= 100_000:
        return f"{size / 1e6:,.1f} MB"
    return f"{size / 1e3:.0f} kB" if size >= 1000 else f"{size} bytes"
