"""Union-find over candidate pairs: groups of related memories, with size bounds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


class UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def components(pairs: Iterable[tuple[str, str]], order: Sequence[str]) -> list[list[str]]:
    """Connected components of the pair graph, members and groups in `order`."""
    uf = UnionFind()
    for a, b in pairs:
        uf.union(a, b)
    position = {ident: n for n, ident in enumerate(order)}
    groups: dict[str, list[str]] = {}
    for ident in uf.parent:
        groups.setdefault(uf.find(ident), []).append(ident)
    out = [sorted(g, key=position.__getitem__) for g in groups.values()]
    out.sort(key=lambda g: position[g[0]])
    return out


def clusters(
    pairs: Iterable[tuple[str, str]], order: Sequence[str], min_size: int = 2, max_size: int = 8
) -> list[list[str]]:
    """Components with min_size ≤ size ≤ max_size (pi keeps 2–8 and leaves bigger ones alone)."""
    return [g for g in components(pairs, order) if min_size <= len(g) <= max_size]


def capped_components(
    scored: Sequence[tuple[str, str, float]], order: Sequence[str], cap: int
) -> list[list[str]]:
    """`components`, except that none has more than `cap` members: an oversized component is
    rebuilt from its strongest pairs first, joining two parts only while they fit the cap.
    Every part is still held together by its own pairs; identical to `components` whenever no
    component is over the cap."""
    whole = components([(a, b) for a, b, _ in scored], order)
    if all(len(g) <= cap for g in whole):
        return whole
    position = {ident: n for n, ident in enumerate(order)}
    big = {ident for g in whole if len(g) > cap for ident in g}
    uf = UnionFind()
    size: dict[str, int] = {}
    strongest = sorted(
        (p for p in scored if p[0] in big),
        key=lambda p: (-p[2], position[p[0]], position[p[1]]),
    )
    for a, b, _ in strongest:
        ra, rb = uf.find(a), uf.find(b)
        if ra != rb and size.get(ra, 1) + size.get(rb, 1) <= cap:
            uf.union(a, b)
            size[uf.find(a)] = size.get(ra, 1) + size.get(rb, 1)
    parts: dict[str, list[str]] = {}
    for ident in uf.parent:
        parts.setdefault(uf.find(ident), []).append(ident)
    out = [g for g in whole if len(g) <= cap]
    out += [sorted(g, key=position.__getitem__) for g in parts.values() if len(g) >= 2]
    out.sort(key=lambda g: position[g[0]])
    return out


def component_labels(size: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each of `size` nodes, the smallest node the edges a[k]–b[k] connect it to (itself
    when none): the components of `components`, for nodes numbered 0…size-1, in numpy."""
    label = np.arange(size, dtype=np.int64)
    while True:
        la, lb = label[a], label[b]
        apart = la != lb
        if not apart.any():
            return label
        la, lb = la[apart], lb[apart]
        low = np.minimum(la, lb)
        # hook each root to the smallest root an edge reaches it from, then flatten the trees
        np.minimum.at(label, la, low)
        np.minimum.at(label, lb, low)
        while True:
            up = label[label]
            if np.array_equal(up, label):
                break
            label = up


def scored_clusters(
    size: int, a: np.ndarray, b: np.ndarray, score: np.ndarray, min_size: int, max_size: int
) -> tuple[list[list[int]], list[tuple[float, float]]]:
    """`clusters` of nodes numbered 0…size-1 (the numbers are their order) joined by the edges
    a[k]–b[k]: the groups, each sorted, in the order of their first node; and the lowest and
    highest score of the edges inside each group."""
    if not a.size:
        return [], []
    label = component_labels(size, a, b)
    linked = np.zeros(size, dtype=bool)
    linked[a] = True
    linked[b] = True
    nodes = np.flatnonzero(linked)
    count = np.bincount(label[nodes], minlength=size)[label[nodes]]
    kept = nodes[(count >= min_size) & (count <= max_size)]
    if not kept.size:
        return [], []
    members = kept[np.argsort(label[kept], kind="stable")]
    starts = np.flatnonzero(np.diff(label[members], prepend=-1))
    groups = [part.tolist() for part in np.split(members, starts[1:])]
    edge_label = label[a]
    by_label = np.argsort(edge_label, kind="stable")
    edge_label, ordered = edge_label[by_label], score[by_label]
    first = np.flatnonzero(np.diff(edge_label, prepend=-1))
    where = np.searchsorted(edge_label[first], [g[0] for g in groups])
    lows = np.minimum.reduceat(ordered, first)[where].tolist()
    highs = np.maximum.reduceat(ordered, first)[where].tolist()
    return groups, list(zip(lows, highs, strict=True))


def pair_clusters(
    order: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    score: np.ndarray,
    threshold: float,
    min_size: int,
    max_size: int,
) -> tuple[list[list[str]], list[tuple[float, float]]]:
    """`clusters` of the pairs a[k]–b[k] (positions in `order`) scoring at least `threshold`,
    with the lowest and highest score inside each group; in numpy, for the million pairs of a
    big store."""
    keep = score >= threshold
    found, spans = scored_clusters(len(order), a[keep], b[keep], score[keep], min_size, max_size)
    return [[order[n] for n in group] for group in found], spans
