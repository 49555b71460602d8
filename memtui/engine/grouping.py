"""Groups that cannot chain unrelated entries: average (or complete) linkage inside each
connected component of the candidate graph.

Union-find joins A and C when A≈B and B≈C, however far A is from C; on real stores that makes
one component of dozens of unrelated sentences. Average linkage joins two groups only when
their members are, on average over all cross pairs, at least as similar as the merge line;
complete linkage only when every cross pair is. Two groups that reach the line share a pair at
or above it, so clustering each component on its own gives the same result as clustering all
entries at once.

The clustering is the nearest-neighbour chain algorithm on the component's full similarity
matrix (average and complete linkage are reducible, so it is exact); it stops at the merge
line. A group larger than the cap is split along its own dendrogram (then adjacent small pieces
are packed back together up to the cap): every member stays in exactly one piece.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memtui.engine.candidates import Pair, candidate_pairs, memtui_vectors
from memtui.engine.choices import LINKAGES as _LINKAGES
from memtui.engine.clusters import components
from memtui.engine.embedded import Embeddings, combined_matrix, entry_vectors
from memtui.engine.lexical import Vector, vector_matrix
from memtui.engine.similarity import memory_similarity
from memtui.model import Memory, Status

LINKAGES = _LINKAGES


@dataclass(frozen=True, slots=True)
class Group:
    members: list[str]
    """Ids, in store order."""
    weakest: float
    """The lowest similarity between two members (1 for a piece of one)."""
    strongest: float
    split_from: int = 0
    """The size of the oversized group this piece was split from (0: not split)."""


@dataclass(slots=True)
class _Node:
    leaves: list[int]
    children: tuple[_Node, _Node] | None = None


def linkage_groups(
    pairs: Sequence[tuple[str, str, float]],
    order: Sequence[str],
    matrix_of: Callable[[list[str]], np.ndarray],
    threshold: float,
    *,
    linkage: str = "average",
    min_size: int = 2,
    max_size: int = 8,
) -> list[Group]:
    """Groups of the entries in `pairs` (each pair ≥ threshold) by `linkage`; `matrix_of`
    gives the full similarity matrix of a component's ids (scores in `pairs` are used as they
    are, so every reported score is the reference one). Pieces smaller than `min_size` are
    left out (those entries stay as they are)."""
    if linkage not in LINKAGES:
        raise ValueError(f"unknown linkage {linkage!r}")
    position = {ident: n for n, ident in enumerate(order)}
    found = components(((a, b) for a, b, _ in pairs), order)
    where = {ident: n for n, component in enumerate(found) for ident in component}
    exact: list[list[tuple[str, str, float]]] = [[] for _ in found]
    for pair in pairs:
        exact[where[pair[0]]].append(pair)
    out: list[Group] = []
    for component, scored in zip(found, exact, strict=True):
        if len(component) == 2 and max_size >= 2:  # most components: one pair, no matrix
            if min_size <= 2:
                score = scored[0][2]
                members = sorted(component, key=position.__getitem__)
                out.append(Group(members, score, score))
            continue
        matrix = _matrix(component, matrix_of, scored)
        if len(component) == 2 or linkage == "single":
            roots = [_Node(list(range(len(component))))]
        else:
            roots = _cluster(matrix, threshold, linkage)
        for root in roots:
            pieces = (
                [root.leaves] if len(root.leaves) <= max_size else _split(root, max_size, matrix)
            )
            for piece in pieces:
                if len(piece) < min_size:
                    continue
                sub = matrix[np.ix_(piece, piece)]
                upper = sub[_upper(len(piece))] if len(piece) > 1 else np.ones(1)
                members = sorted((component[i] for i in piece), key=position.__getitem__)
                out.append(
                    Group(
                        members,
                        float(upper.min()),
                        float(upper.max()),
                        len(root.leaves) if len(pieces) > 1 else 0,
                    )
                )
    out.sort(key=lambda g: position[g.members[0]])
    return out


@functools.cache
def _upper(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices above the diagonal of a size × size matrix."""
    return np.triu_indices(size, 1)


def _matrix(
    ids: list[str],
    matrix_of: Callable[[list[str]], np.ndarray],
    exact: list[tuple[str, str, float]],
) -> np.ndarray:
    matrix = np.array(matrix_of(ids), dtype=np.float64)
    index = {ident: n for n, ident in enumerate(ids)}
    for a, b, score in exact:
        matrix[index[a], index[b]] = matrix[index[b], index[a]] = score
    return matrix


def _cluster(
    sim: np.ndarray, threshold: float, linkage: str, weights: np.ndarray | None = None
) -> list[_Node]:
    """Nearest-neighbour chain over `sim`, merging while the linked similarity ≥ threshold
    (`weights`: how many entries each row stands for, for average linkage; default 1 each). A
    cell of −inf never links: no group holds both of its rows."""
    k = len(sim)
    s = sim.copy()
    np.fill_diagonal(s, -np.inf)
    sizes = np.ones(k) if weights is None else np.asarray(weights, dtype=np.float64).copy()
    nodes: list[_Node | None] = [_Node([i]) for i in range(k)]
    open_slots = set(range(k))
    done: list[_Node] = []
    chain: list[int] = []
    while open_slots:
        if not chain:
            chain.append(min(open_slots))
        a = chain[-1]
        row = s[a]
        b = int(np.argmax(row))
        if len(chain) > 1 and row[chain[-2]] >= row[b]:
            b = chain[-2]  # ties go back down the chain, so it always ends
        if len(open_slots) == 1 or row[b] < threshold:
            # nothing reaches the line from here: every group on the chain is final
            for slot in chain:
                node = nodes[slot]
                assert node is not None
                done.append(node)
                open_slots.discard(slot)
                s[slot, :] = -np.inf
                s[:, slot] = -np.inf
            chain.clear()
            continue
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            keep, gone = min(a, b), max(a, b)
            left, right = nodes[keep], nodes[gone]
            assert left is not None and right is not None
            if linkage == "average":
                merged = (sizes[keep] * s[keep] + sizes[gone] * s[gone]) / (
                    sizes[keep] + sizes[gone]
                )
            else:
                merged = np.minimum(s[keep], s[gone])
            s[keep, :] = merged
            s[:, keep] = merged
            s[keep, keep] = -np.inf
            s[gone, :] = -np.inf
            s[:, gone] = -np.inf
            sizes[keep] += sizes[gone]
            nodes[keep] = _Node([*left.leaves, *right.leaves], (left, right))
            nodes[gone] = None
            open_slots.discard(gone)
        else:
            chain.append(b)
    return done


def weighted_groups(
    sim: np.ndarray, weights: np.ndarray, threshold: float, max_size: int
) -> list[list[int]]:
    """Average-linkage groups (row indices, two or more rows) of rows that stand for
    `weights` entries each (`sim`: the mean similarity between two rows' entries; −inf: never
    together), stopped at `threshold`; a group of more than `max_size` rows is split along its
    dendrogram."""
    out: list[list[int]] = []
    for root in _cluster(sim, threshold, "average", weights):
        if len(root.leaves) < 2:
            continue
        pieces = [root.leaves] if len(root.leaves) <= max_size else _split(root, max_size, sim)
        out.extend(sorted(p) for p in pieces if len(p) >= 2)
    return out


def _split(root: _Node, cap: int, sim: np.ndarray) -> list[list[int]]:
    """Pieces of at most `cap` leaves along the dendrogram, small neighbours packed together;
    a piece of one joins the piece with room it is most similar to (on average)."""
    pieces: list[list[int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if len(node.leaves) <= cap:
            pieces.append(node.leaves)
        elif node.children is None:  # no dendrogram (single linkage): balanced runs
            count = -(-len(node.leaves) // cap)
            step = len(node.leaves) / count
            bounds = [round(step * n) for n in range(count + 1)]
            pieces.extend(node.leaves[x:y] for x, y in itertools.pairwise(bounds))
        else:
            stack.extend(reversed(node.children))
    packed: list[list[int]] = []
    for piece in pieces:
        if packed and len(packed[-1]) + len(piece) <= cap:
            packed[-1] = [*packed[-1], *piece]
        else:
            packed.append(list(piece))
    for alone in [p for p in packed if len(p) == 1]:
        room = [p for p in packed if p is not alone and 1 < len(p) < cap]
        if room:
            best = max(room, key=lambda p: float(sim[alone[0], p].mean()))
            best.append(alone[0])
            alone.clear()
    return [p for p in packed if p]


def similarity_source(
    current: Mapping[str, Memory],
    searched: Sequence[Memory],
    method: str,
    embeddings: Embeddings | None = None,
    searched_vectors: Sequence[Vector] | None = None,
) -> Callable[[list[str]], np.ndarray]:
    """All scores among some entries, as the candidate search over `searched` scored them
    (`searched_vectors`: their `memtui_vectors`, when the caller has them already)."""
    if method == "memtui":
        # the vectors as the search weighed them: idf over each user's searched entries
        if searched_vectors is None:
            searched_vectors = memtui_vectors(searched)
        vectors = dict(zip((m.id for m in searched), searched_vectors, strict=True))
        if embeddings is None:
            return lambda ids: vector_matrix([vectors[i] for i in ids])
        embedded = dict(
            zip((m.id for m in searched), entry_vectors(searched, embeddings), strict=True)
        )
        return lambda ids: combined_matrix(
            vector_matrix([vectors[i] for i in ids]), [embedded[i] for i in ids]
        )

    def pairwise(ids: list[str]) -> np.ndarray:
        out = np.eye(len(ids))
        for x, y in itertools.combinations(range(len(ids)), 2):
            score = memory_similarity(current[ids[x]], current[ids[y]], method)
            out[x, y] = out[y, x] = score
        return out

    return pairwise


def active_pairs(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    *,
    embeddings: Embeddings | None = None,
) -> tuple[list[Memory], list[Pair]]:
    """The active entries among `memories`, and their candidate pairs (same user, ≥ threshold,
    highest first): where the clusters, pairs and label views and the insight strategy start."""
    live = [m for m in memories if m.status is Status.ACTIVE]
    return live, candidate_pairs(live, method, threshold, embeddings=embeddings)


def pair_components(
    memories: Sequence[Memory], method: str, threshold: float
) -> list[list[Memory]]:
    """The connected groups (two or more) the active entries' candidate pairs make, in store
    order."""
    live, pairs = active_pairs(memories, method, threshold)
    by_id = {m.id: m for m in live}
    found = components(((p.a, p.b) for p in pairs), [m.id for m in live])
    return [[by_id[i] for i in group] for group in found]


def group_entries(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    *,
    linkage: str = "average",
    min_size: int = 2,
    max_size: int = 8,
    embeddings: Embeddings | None = None,
) -> tuple[list[Pair], list[Group]]:
    """The candidate pairs among the active `memories` (same user, ≥ threshold) and the groups
    `linkage` makes of them: what a person reviews in the clusters view. No group is over
    `max_size`; a piece split from a larger one says so (`split_from`)."""
    live = [m for m in memories if m.status is Status.ACTIVE]
    vectors = memtui_vectors(live) if method == "memtui" else None
    pairs = candidate_pairs(live, method, threshold, embeddings=embeddings, vectors=vectors)
    groups = linkage_groups(
        [(p.a, p.b, p.score) for p in pairs],
        [m.id for m in live],
        similarity_source({m.id: m for m in live}, live, method, embeddings, vectors),
        threshold,
        linkage=linkage,
        min_size=min_size,
        max_size=max_size,
    )
    return pairs, groups
