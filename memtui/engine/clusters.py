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
