"""Pairs of rows of a matrix of unit vectors whose dot product reaches a floor, scanned in
blocks of rows so that only a block × n slice of the products is held at once."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

BLOCK = 512


def rows_at_least(unit: np.ndarray, floor: float) -> Iterator[tuple[int, int]]:
    """Each (x, y) with x < y and `unit[x] · unit[y] >= floor`, in row order."""
    for start in range(0, len(unit), BLOCK):
        block = unit[start : start + BLOCK] @ unit[start:].T
        rows, cols = np.nonzero(block >= floor)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            x, y = start + r, start + c
            if y > x:
                yield x, y
