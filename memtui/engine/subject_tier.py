"""memtui's second tier: complementary facts about one subject become one entry.

The first tier (the same memory said again) groups single entries at the merge line. The
second continues the same average linkage from where the first stopped, at a lower line: its
rows are *units*, each an entry the first tier left alone or a group the first tier made,
weighted by how many entries it stands for, so the mean similarity between two units is the
mean over all their entries' pairs (the first tier's groups are the start of the dendrogram,
not a chain link). Cells of −inf (entries whose subjects, numbers or dates say they are apart)
never link. A component of the candidate graph too large for one full matrix is cut at a
higher line first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memtui.engine.clusters import component_labels
from memtui.engine.grouping import weighted_groups
from memtui.engine.lexical import Vector
from memtui.model import Memory

# entries whose full similarity matrix one clustering holds (float64: 400² is 1.3 MB)
MAX_COMPONENT = 400
_STEP = 0.05


@dataclass(frozen=True, slots=True)
class SubjectGroup:
    units: list[int]
    """The units' numbers, in order."""
    weakest: float
    """The lowest similarity between two entries of different units."""
    mean: float
    """The mean similarity between entries of different units (what average linkage saw)."""
    strongest: float


def subject_groups(
    unit_of: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    score: np.ndarray,
    matrix_of: Callable[[list[int]], np.ndarray],
    threshold: float,
    max_units: int,
) -> list[SubjectGroup]:
    """Groups of two or more units. `unit_of[n]`: the unit of entry n (−1: takes no part);
    `a`, `b`, `score`: the candidate pairs of entries at or above `threshold`; `matrix_of`:
    the full (guarded) similarity matrix of some entries."""
    units = int(unit_of.max()) + 1 if unit_of.size else 0
    if units < 2 or not a.size:
        return []
    ua, ub = unit_of[a], unit_of[b]
    keep = (ua >= 0) & (ub >= 0) & (ua != ub) & (score >= threshold)
    out: list[SubjectGroup] = []
    entries = np.flatnonzero(unit_of >= 0)
    entries = entries[np.argsort(unit_of[entries], kind="stable")]
    bounds = np.searchsorted(unit_of[entries], np.arange(units + 1))
    members_of = [entries[bounds[u] : bounds[u + 1]] for u in range(units)]
    sizes = np.diff(bounds)
    _components(
        unit_of, members_of, sizes, ua[keep], ub[keep], score[keep], threshold, matrix_of,
        max_units, out,
    )  # fmt: skip
    out.sort(key=lambda g: g.units[0])
    return out


def _components(
    unit_of: np.ndarray,
    members_of: list[np.ndarray],
    sizes: np.ndarray,
    ua: np.ndarray,
    ub: np.ndarray,
    score: np.ndarray,
    line: float,
    matrix_of: Callable[[list[int]], np.ndarray],
    max_units: int,
    out: list[SubjectGroup],
) -> None:
    if not ua.size:
        return
    label = component_labels(len(members_of), ua, ub)
    linked = np.unique(np.concatenate([ua, ub]))
    linked = linked[np.argsort(label[linked], kind="stable")]
    cuts = np.flatnonzero(np.diff(label[linked])) + 1
    edge_label = label[ua]
    for part in np.split(linked, cuts):
        members = part.tolist()
        if len(members) < 2:
            continue
        root = int(label[part[0]])
        if int(sizes[part].sum()) > MAX_COMPONENT:
            inside = edge_label == root
            higher = inside & (score >= line + _STEP)
            _components(
                unit_of, members_of, sizes, ua[higher], ub[higher], score[higher],
                line + _STEP, matrix_of, max_units, out,
            )  # fmt: skip
            continue
        _cluster_component(members_of, members, sizes, matrix_of, line, max_units, out)


def _cluster_component(
    members_of: list[np.ndarray],
    members: list[int],
    sizes: np.ndarray,
    matrix_of: Callable[[list[int]], np.ndarray],
    threshold: float,
    max_units: int,
    out: list[SubjectGroup],
) -> None:
    chosen = np.asarray(members, dtype=np.int64)
    entries = np.concatenate([members_of[u] for u in members])
    rows = np.repeat(np.arange(len(members)), sizes[chosen])
    full = np.asarray(matrix_of(entries.tolist()), dtype=np.float64)
    never = np.isneginf(full)
    weights = sizes[chosen].astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(sizes[chosen])[:-1]])
    sums = _block_sums(np.where(never, 0.0, full), starts)
    apart = _block_sums(never.astype(np.float64), starts) > 0
    mean = np.where(apart, -np.inf, sums / np.outer(weights, weights))
    for group in weighted_groups(mean, weights, threshold, max_units):
        cells = np.flatnonzero(np.isin(rows, np.asarray(group)))
        sub = full[np.ix_(cells, cells)]
        cross = rows[cells][:, None] != rows[cells][None, :]
        values = sub[cross]
        out.append(
            SubjectGroup(
                sorted(members[g] for g in group),
                float(values.min()),
                float(values.mean()),
                float(values.max()),
            )
        )


def _block_sums(matrix: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sum of each block of `matrix` between consecutive `starts` (rows and columns)."""
    return np.add.reduceat(np.add.reduceat(matrix, starts, axis=0), starts, axis=1)


def lexical_source(
    memories: Sequence[Memory], vectors: Sequence[Vector]
) -> Callable[[list[str]], np.ndarray]:
    """The memtui lexical scores among some of `memories` (their `vectors`), all in numpy: the
    subject tier asks for thousands of small matrices (equal to `vector_matrix` up to the
    order of a float sum)."""
    # tokens numbered in their sorted order: a matrix's columns (its float sums) come in the
    # same order whichever other users' entries the vocabulary holds
    vocabulary = {t: n for n, t in enumerate(sorted({t for v in vectors for t in v}))}
    rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for memory, vector in zip(memories, vectors, strict=True):
        tokens = np.fromiter((vocabulary[t] for t in vector), np.int64, len(vector))
        rows[memory.id] = (tokens, np.fromiter(vector.values(), np.float64, len(vector)))

    def matrix(ids: list[str]) -> np.ndarray:
        parts = [rows[i] for i in ids]
        columns = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        weights = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
        used, where = np.unique(columns, return_inverse=True)
        dense = np.zeros((len(ids), max(1, len(used))))
        dense[np.repeat(np.arange(len(ids)), [len(p[0]) for p in parts]), where] = weights
        return np.clip(dense @ dense.T, 0.0, 1.0)

    return matrix
