"""Union-find over candidate pairs: groups of related memories, with size bounds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


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
