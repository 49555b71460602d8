"""All pairs of memories scoring at or above a threshold, without comparing all n² pairs where
the method and the threshold allow it. Exactly the pairs (and scores) of `brute_force_pairs`.

- `pi` (overlap coefficient of 2-gram sets) and `tf-cosine` (term frequencies): prefix
  filtering over an inverted index when it is selective (high thresholds): a pair that reaches
  the threshold must share one of the rarest few tokens of a record, so only those are probed;
  the candidates are then scored with the reference functions. At low thresholds, where most
  pairs share common tokens, intersection sizes / dot products are counted for all pairs at
  once with numpy (integer arithmetic, so the scores are bit-identical).
- `memtui` (weighted cosine of L2-normalised vectors, idf per user): prefix filtering with the
  tokens ordered rarest first: a record's prefix ends where the weight left in its suffix
  (its L2 norm) falls below the threshold, so two records reaching the threshold share a prefix
  token. Candidates are scored by the reference `vector_cosine` (an exactly rounded sum), so
  the scores equal brute force bit for bit; at low thresholds numpy counts all dot products and
  the ones near or above the line are re-scored the same way.
- `memtui` with sentence embeddings (engine/embedded.py): the lexical pairs, plus the pairs
  whose cosine reaches the line on its own (numpy blocks, re-scored one by one); every pair
  found is scored max(lexical, rescaled cosine), each part by its reference function.
- embeddings, `jaro-winkler`, `token-set`: blocks of rows scored in C (numpy, rapidfuzz
  `cdist` with a score cutoff) and the survivors re-scored by the reference function.

Pairs never cross users (`user_id`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from rapidfuzz import fuzz, process, utils
from rapidfuzz.distance import JaroWinkler

from memtui.engine.embedded import (
    Embeddings,
    combined,
    cosine_pairs,
    entry_vectors,
    reference_cosine,
)
from memtui.engine.lexical import Vector, lexical_vectors, vector_cosine
from memtui.engine.matrix_pairs import rows_at_least
from memtui.engine.similarity import (
    check_method,
    embedding_cosine,
    memory_similarity,
    pi_grams,
    pi_normalise,
    tf_vector,
)
from memtui.gcpause import gc_paused
from memtui.model import Memory

# prefix filtering pays off while the probed postings stay this many times the record count
_PREFIX_BUDGET = 40
_BLOCK = 512
_MARGIN = 1e-9  # numeric filters keep pairs this close below the threshold for exact re-scoring


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    score: float


@dataclass(frozen=True, slots=True)
class PairTable:
    """Candidate pairs as arrays, in no particular order: `a[k]` < `b[k]` are positions in
    `memories` and `score[k]` their score. A million pairs cost megabytes here, not the
    hundreds a list of `Pair`s takes; `pairs()` builds that list when it is needed."""

    memories: Sequence[Memory]
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.score)

    def pairs(self) -> list[Pair]:
        """The `Pair`s, highest score first, then by position. Sorted by numpy, which lets
        other threads (the UI) run meanwhile; a list sort of a million tuples would hold the
        GIL for a second."""
        order = np.lexsort((self.b, self.a, -self.score))
        ids = [m.id for m in self.memories]
        with gc_paused():
            return [
                Pair(ids[x], ids[y], score)
                for x, y, score in zip(
                    self.a[order].tolist(),
                    self.b[order].tolist(),
                    self.score[order].tolist(),
                    strict=True,
                )
            ]


Progress = Callable[[int, int], None]


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        from memtui.errors import MemtuiError

        raise MemtuiError(f"threshold must be in (0, 1], got {threshold}")


def user_groups(memories: Sequence[Memory]) -> list[list[int]]:
    """Indices of each user's memories (entries without a user form one group)."""
    groups: dict[str | None, list[int]] = defaultdict(list)
    for i, m in enumerate(memories):
        groups[m.user_id].append(i)
    return [g for g in groups.values() if len(g) >= 2]


def candidate_pairs(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    *,
    progress: Progress | None = None,
    embeddings: Embeddings | None = None,
    vectors: Sequence[Vector] | None = None,
) -> list[Pair]:
    """Every pair of memories of the same user scoring ≥ threshold, highest first
    (`embeddings`: the `memtui` method combined with these sentence embeddings; `vectors`: the
    memories' `memtui_vectors`, when the caller has them already)."""
    return candidate_table(
        memories, method, threshold, progress=progress, embeddings=embeddings, vectors=vectors
    ).pairs()


def candidate_table(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    *,
    progress: Progress | None = None,
    embeddings: Embeddings | None = None,
    vectors: Sequence[Vector] | None = None,
) -> PairTable:
    """The pairs of `candidate_pairs` as arrays, for the callers that need no `Pair`s."""
    check_method(method)
    _check_threshold(threshold)
    if method == "memtui" and vectors is None:
        vectors = memtui_vectors(memories)
    with gc_paused():
        return _candidate_table(memories, method, threshold, progress, embeddings, vectors)


def _candidate_table(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    progress: Progress | None,
    embeddings: Embeddings | None,
    vectors: Sequence[Vector] | None,
) -> PairTable:
    found: list[Columns] = []
    groups = user_groups(memories)
    total = sum(len(g) for g in groups)
    done = 0
    for group in groups:
        members = [memories[i] for i in group]
        if method == "pi":
            x, y, score = _overlap_pairs(
                [pi_grams(pi_normalise(m.content)) for m in members], threshold
            )
        else:
            found_here: Iterable[tuple[int, int, float]]
            if vectors is not None:
                words = [vectors[i] for i in group]
                found_here = (
                    _lexical_pairs(words, threshold)
                    if embeddings is None
                    else _embedded_pairs(members, words, embeddings, threshold)
                )
            else:
                found_here = _group_pairs(members, method, threshold)
            x, y, score = _columns(list(found_here))
        index = np.asarray(group, dtype=np.int64)
        found.append((index[x], index[y], score))
        done += len(group)
        if progress is not None:
            progress(done, total)
    return _table(memories, found)


def brute_force_pairs(
    memories: Sequence[Memory],
    method: str,
    threshold: float,
    embeddings: Embeddings | None = None,
) -> list[Pair]:
    """The reference: every pair of the same user, scored one by one."""
    check_method(method)
    _check_threshold(threshold)
    found = []
    for group in user_groups(memories):
        if method == "memtui":
            vectors = lexical_vectors([memories[i].content for i in group])
            embedded = (
                entry_vectors([memories[i] for i in group], embeddings) if embeddings else None
            )
            for x in range(len(group)):
                for y in range(x + 1, len(group)):
                    score = vector_cosine(vectors[x], vectors[y])
                    if embedded is not None:
                        score = combined(score, reference_cosine(embedded[x], embedded[y]))
                    if score >= threshold:
                        found.append((group[x], group[y], score))
            continue
        for x, i in enumerate(group):
            for j in group[x + 1 :]:
                score = memory_similarity(memories[i], memories[j], method)
                if score >= threshold:
                    found.append((i, j, score))
    return _table(memories, [_columns(found)]).pairs()


Columns = tuple[np.ndarray, np.ndarray, np.ndarray]


def _columns(found: Sequence[tuple[int, int, float]]) -> Columns:
    """(x, y, score) triples as three arrays."""
    count = len(found)
    return (
        np.fromiter((t[0] for t in found), dtype=np.int64, count=count),
        np.fromiter((t[1] for t in found), dtype=np.int64, count=count),
        np.fromiter((t[2] for t in found), dtype=np.float64, count=count),
    )


def _table(memories: Sequence[Memory], parts: Sequence[Columns]) -> PairTable:
    if not parts:
        return PairTable(memories, *_columns([]))
    a, b, score = (np.concatenate([part[k] for part in parts]) for k in range(3))
    return PairTable(memories, a, b, score)


def _group_pairs(
    members: list[Memory], method: str, threshold: float
) -> Iterable[tuple[int, int, float]]:
    if method == "tf-cosine":
        return _tf_cosine_pairs(members, threshold)
    if method == "jaro-winkler":
        texts = [m.content.lower() for m in members]
        return _cdist_pairs(texts, JaroWinkler.normalized_similarity, threshold, 1.0)
    texts = [utils.default_process(m.content) for m in members]
    return _cdist_pairs(texts, fuzz.token_set_ratio, threshold, 100.0)


# -- overlap coefficient (pi) -----------------------------------------------------------------


def _needed(size: int, threshold: float) -> int:
    """The fewest shared tokens c with c / size ≥ threshold, in float arithmetic."""
    c = max(1, math.floor(threshold * size) - 1)
    while c / size < threshold:
        c += 1
    return c


def _overlap_pairs(sets: list[frozenset[int]], threshold: float) -> Columns:
    live = [i for i, s in enumerate(sets) if s]
    df = Counter(token for i in live for token in sets[i])
    order = {token: (n, token) for token, n in df.items()}
    postings: dict[int, list[int]] = defaultdict(list)
    for i in live:
        for token in sets[i]:
            postings[token].append(i)
    prefixes = {}
    volume = 0
    for i in live:
        size = len(sets[i])
        tokens = sorted(sets[i], key=order.__getitem__)
        prefix = tokens[: size - _needed(size, threshold) + 1]
        prefixes[i] = prefix
        volume += sum(df[t] for t in prefix)
    if volume > _PREFIX_BUDGET * len(live) + 50_000:
        return _overlap_pairs_counted(sets, live, threshold)
    out = []
    for x in live:
        sx = sets[x]
        size_x = len(sx)
        seen: set[int] = set()
        for token in prefixes[x]:
            seen.update(postings[token])
        for y in seen:
            size_y = len(sets[y])
            # x is the smaller side (ties: the lower index), whose prefix was probed
            if size_y < size_x or (size_y == size_x and y <= x):
                continue
            score = len(sx & sets[y]) / size_x
            if score >= threshold:
                out.append((x, y, score) if x < y else (y, x, score))
    return _columns(out)


def _overlap_pairs_counted(
    sets: list[frozenset[int]], live: list[int], threshold: float
) -> Columns:
    vocabulary = {token: n for n, token in enumerate({t for i in live for t in sets[i]})}
    postings: dict[int, list[int]] = defaultdict(list)
    for i in live:
        for token in sets[i]:
            postings[vocabulary[token]].append(i)
    arrays = {t: np.asarray(p, dtype=np.int64) for t, p in postings.items()}
    sizes = np.asarray([len(s) for s in sets], dtype=np.int64)
    n = len(sets)
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    for x in live:
        gathered = np.concatenate([arrays[vocabulary[t]] for t in sets[x]])
        gathered = gathered[gathered > x]
        if not gathered.size:
            continue
        counts = np.bincount(gathered, minlength=n)
        partners = np.nonzero(counts)[0]
        score = counts[partners] / np.minimum(sizes[x], sizes[partners])
        keep = score >= threshold
        ys.append(partners[keep])
        scores.append(score[keep])
        xs.append(np.full(len(ys[-1]), x, dtype=np.int64))
    if not xs:
        return _columns([])
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(scores)


# -- cosine (tf, embeddings) ------------------------------------------------------------------


def _tf_cosine_pairs(members: list[Memory], threshold: float) -> list[tuple[int, int, float]]:
    by_dim: dict[int, list[int]] = defaultdict(list)
    for i, m in enumerate(members):
        if m.embedding:
            by_dim[len(m.embedding)].append(i)
    dim_of = {i: d for d, idx in by_dim.items() if len(idx) >= 2 for i in idx}
    vectors = [tf_vector(m.content) for m in members]

    def both_embedded(x: int, y: int) -> bool:
        d = dim_of.get(x)
        return d is not None and dim_of.get(y) == d

    out = [(x, y, s) for x, y, s in _tf_pairs(vectors, threshold) if not both_embedded(x, y)]
    for dim_members in by_dim.values():
        if len(dim_members) >= 2:
            out.extend(_embedding_pairs(members, dim_members, threshold))
    return out


def _tf_pairs(vectors: list[Counter[str]], threshold: float) -> list[tuple[int, int, float]]:
    live = [i for i, v in enumerate(vectors) if v]
    found = _prefix_pairs(vectors, threshold, integral=True)
    if found is None:
        return _tf_pairs_counted(vectors, live, threshold)
    return found


def _tf_pairs_counted(
    vectors: list[Counter[str]], live: list[int], threshold: float
) -> list[tuple[int, int, float]]:
    vocabulary: dict[str, int] = {}
    postings: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i in live:
        for token, count in vectors[i].items():
            postings[vocabulary.setdefault(token, len(vocabulary))].append((i, count))
    ids = {t: np.asarray([p[0] for p in ps], dtype=np.int64) for t, ps in postings.items()}
    weights = {t: np.asarray([p[1] for p in ps], dtype=np.float64) for t, ps in postings.items()}
    norms = np.zeros(len(vectors), dtype=np.float64)
    for i in live:
        norms[i] = math.sqrt(sum(n * n for n in vectors[i].values()))
    n = len(vectors)
    out: list[tuple[int, int, float]] = []
    for x in live:
        parts = [(vocabulary[t], c) for t, c in vectors[x].items()]
        gathered = np.concatenate([ids[t] for t, _ in parts])
        products = np.concatenate([weights[t] * c for t, c in parts])
        keep = gathered > x
        if not keep.any():
            continue
        # integer products and sums: exact in float64, so the division matches the reference
        dots = np.bincount(gathered[keep], weights=products[keep], minlength=n)
        ys = np.nonzero(dots)[0]
        scores = dots[ys] / (norms[x] * norms[ys])
        chosen = scores >= threshold
        out.extend(
            zip([x] * int(chosen.sum()), ys[chosen].tolist(), scores[chosen].tolist(), strict=True)
        )
    return out


def memtui_vectors(memories: Sequence[Memory]) -> list[Vector]:
    """Each memory's `memtui` vector, the idf over its user's entries (as the search uses)."""
    out: list[Vector] = [{} for _ in memories]
    groups: dict[str | None, list[int]] = defaultdict(list)
    for i, m in enumerate(memories):
        groups[m.user_id].append(i)
    for group in groups.values():
        for i, vector in zip(
            group, lexical_vectors([memories[i].content for i in group]), strict=True
        ):
            out[i] = vector
    return out


def _embedded_pairs(
    members: list[Memory], lexical: list[Vector], embeddings: Embeddings, threshold: float
) -> list[tuple[int, int, float]]:
    """Pairs that reach the line on their words or on their meaning, scored on both."""
    embedded = entry_vectors(members, embeddings)
    by_words = {(x, y): score for x, y, score in _lexical_pairs(lexical, threshold)}
    by_meaning = cosine_pairs(embedded, threshold)
    out = []
    for x, y in sorted(by_words.keys() | by_meaning.keys()):
        # each part is scored by its reference function (once: the searches did most)
        words = by_words.get((x, y))
        if words is None:
            words = vector_cosine(lexical[x], lexical[y])
        meaning = by_meaning.get((x, y))
        if meaning is None:
            meaning = reference_cosine(embedded[x], embedded[y])
        score = combined(words, meaning)
        if score >= threshold:
            out.append((x, y, score))
    return out


def _lexical_pairs(vectors: list[Vector], threshold: float) -> list[tuple[int, int, float]]:
    live = [i for i, v in enumerate(vectors) if v]
    near = _prefix_pairs(vectors, threshold, integral=False)
    if near is None:
        return _lexical_pairs_counted(vectors, live, threshold)
    out = []
    for x, y, _ in near:
        score = vector_cosine(vectors[x], vectors[y])
        if score >= threshold:
            out.append((x, y, score))
    return out


def _lexical_pairs_counted(
    vectors: list[Vector], live: list[int], threshold: float
) -> list[tuple[int, int, float]]:
    vocabulary: dict[str, int] = {}
    postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for i in live:
        for token, weight in vectors[i].items():
            postings[vocabulary.setdefault(token, len(vocabulary))].append((i, weight))
    ids = {t: np.asarray([p[0] for p in ps], dtype=np.int64) for t, ps in postings.items()}
    weights = {t: np.asarray([p[1] for p in ps], dtype=np.float64) for t, ps in postings.items()}
    n = len(vectors)
    out = []
    for x in live:
        parts = [(vocabulary[t], w) for t, w in vectors[x].items()]
        gathered = np.concatenate([ids[t] for t, _ in parts])
        products = np.concatenate([weights[t] * w for t, w in parts])
        keep = gathered > x
        if not keep.any():
            continue
        dots = np.bincount(gathered[keep], weights=products[keep], minlength=n)
        for y in np.nonzero(dots >= threshold - 1e-6)[0].tolist():
            score = vector_cosine(vectors[x], vectors[y])
            if score >= threshold:
                out.append((x, y, score))
    return out


def _embedding_pairs(
    members: list[Memory], chosen: list[int], threshold: float
) -> list[tuple[int, int, float]]:
    matrix = np.asarray([members[i].embedding for i in chosen], dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = np.inf
    unit = matrix / norms[:, None]
    out = []
    for x, y in rows_at_least(unit, threshold - _MARGIN):
        a, b = members[chosen[x]], members[chosen[y]]
        score = embedding_cosine(a.embedding or (), b.embedding or ())
        if score >= threshold:
            out.append((chosen[x], chosen[y], score))
    return out


# -- rapidfuzz scorers ------------------------------------------------------------------------


def _cdist_pairs(
    texts: list[str], scorer: Callable[..., float], threshold: float, scale: float
) -> list[tuple[int, int, float]]:
    """cdist's batch scores can differ from the scorer's in the last bit: they only select
    candidates (with a margin), which the scorer itself then scores."""
    out = []
    cutoff = max(0.0, (threshold - 1e-6) * scale)
    for start in range(0, len(texts), _BLOCK):
        block = process.cdist(
            texts[start : start + _BLOCK],
            texts[start:],
            scorer=scorer,
            score_cutoff=cutoff,
            dtype=np.float64,
            workers=-1,
        )
        rows, cols = np.nonzero(block >= cutoff if cutoff > 0 else block >= 0)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if c > r:
                x, y = start + r, start + c
                score = scorer(texts[x], texts[y]) / scale
                if score >= threshold:
                    out.append((x, y, score))
    return out


# -- prefix filtering over flat arrays (tf-cosine, memtui) ------------------------------------


@dataclass(frozen=True, slots=True)
class _Flat:
    """A group's sparse vectors as arrays, one slot per (record, token), record by record."""

    docs: np.ndarray
    tokens: np.ndarray
    weights: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    vocabulary: list[str]


def _flatten(vectors: Sequence[Mapping[str, float]]) -> _Flat:
    words = list(chain.from_iterable(vectors))
    vocabulary = {t: n for n, t in enumerate(dict.fromkeys(words))}
    sizes = np.fromiter(map(len, vectors), dtype=np.int64, count=len(vectors))
    return _Flat(
        np.repeat(np.arange(len(vectors), dtype=np.int64), sizes),
        np.fromiter(map(vocabulary.__getitem__, words), dtype=np.int64, count=len(words)),
        np.fromiter(
            chain.from_iterable(v.values() for v in vectors), dtype=np.float64, count=len(words)
        ),
        np.cumsum(sizes) - sizes,
        sizes,
        list(vocabulary),
    )


def _prefix_pairs(
    vectors: Sequence[Mapping[str, float]], threshold: float, *, integral: bool
) -> list[tuple[int, int, float]] | None:
    """The pairs whose cosine reaches the threshold, by prefix filtering on arrays, or None
    when the prefixes are not selective (the caller counts all dot products instead).

    `integral` (tf counts): the dot products are sums of integer products, exact in float64,
    so the scores are the reference's bit for bit. Otherwise (normalised float weights) the
    pairs within a rounding margin of the line are returned with approximate scores, for the
    caller to re-score exactly."""
    flat = _flatten(vectors)
    n = len(vectors)
    if not len(flat.tokens):
        return []
    v = len(flat.vocabulary)
    df = np.bincount(flat.tokens, minlength=v)
    rank = np.empty(v, dtype=np.int64)
    rank[np.argsort(np.asarray(flat.vocabulary, dtype=object), kind="stable")] = np.arange(v)
    # each record's tokens rarest first (ties: by the token's text), as `_tf_pairs` ordered them
    order = np.lexsort((rank[flat.tokens], df[flat.tokens], flat.docs))
    squares = flat.weights[order] ** 2
    docs = flat.docs[order]
    norms2 = np.bincount(flat.docs, weights=flat.weights**2, minlength=n)
    before = np.cumsum(squares) - squares
    before -= before[flat.starts[docs]]  # the weight already taken from this record
    rest = norms2[docs] - before
    floor = max(0.0, threshold - _MARGIN) ** 2
    in_prefix = rest >= (floor * norms2[docs] if integral else floor)
    pairs = _prefix_candidates(docs[in_prefix], flat.tokens[order][in_prefix], n)
    if pairs is None:
        return None
    return _scored(flat, pairs, n, threshold, norms2, integral)


def _prefix_candidates(docs: np.ndarray, tokens: np.ndarray, n: int) -> np.ndarray | None:
    """Each pair of records sharing a prefix token once (as lower * n + higher), or None over
    the budget."""
    order = np.argsort(tokens, kind="stable")
    tokens, docs = tokens[order], docs[order]
    size = len(tokens)
    starts = np.flatnonzero(np.r_[True, tokens[1:] != tokens[:-1]])
    runs = np.diff(np.r_[starts, size])
    volume = int((runs * runs).sum())
    if volume > _PREFIX_BUDGET * n + 50_000:
        return None
    partners = np.repeat(starts + runs, runs) - np.arange(size) - 1
    total = int(partners.sum())
    left = np.repeat(np.arange(size), partners)
    right = left + 1 + np.arange(total) - np.repeat(np.cumsum(partners) - partners, partners)
    a, b = docs[left], docs[right]
    return np.unique(np.minimum(a, b) * n + np.maximum(a, b))


_CHUNK = 1 << 21  # (pair, token) slots scored at once
_DENSE_CELLS = 1 << 22  # a group's record × token table up to this size is looked up directly


def _scored(
    flat: _Flat,
    keys: np.ndarray,
    n: int,
    threshold: float,
    norms2: np.ndarray,
    integral: bool,
) -> list[tuple[int, int, float]]:
    v = max(1, len(flat.vocabulary))
    slot_keys = flat.docs * v + flat.tokens
    dense = None
    if n * v <= _DENSE_CELLS:
        dense = np.zeros(n * v, dtype=np.float64)
        dense[slot_keys] = flat.weights
    else:
        by_key = np.argsort(slot_keys)
        sorted_keys, sorted_weights = slot_keys[by_key], flat.weights[by_key]
    xs, ys = keys // n, keys % n
    # walk the shorter record's tokens and look each up in the other record
    short = np.where(flat.lengths[xs] <= flat.lengths[ys], xs, ys)
    other = np.where(short == xs, ys, xs)
    sizes = flat.lengths[short]
    ends = np.cumsum(sizes)
    out: list[tuple[int, int, float]] = []
    line = threshold if integral else threshold - 1e-6
    start = 0
    while start < len(keys):
        stop = int(np.searchsorted(ends, ends[start] - sizes[start] + _CHUNK, side="right"))
        stop = max(stop, start + 1)
        part = slice(start, stop)
        counts = sizes[part]
        owner = np.repeat(np.arange(stop - start), counts)
        offsets = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        slots = flat.starts[short[part]][owner] + offsets
        wanted = other[part][owner] * v + flat.tokens[slots]
        if dense is not None:
            products = flat.weights[slots] * dense[wanted]
        else:
            at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
            hit = sorted_keys[at] == wanted
            products = np.where(hit, flat.weights[slots] * sorted_weights[at], 0.0)
        dots = np.bincount(owner, weights=products, minlength=stop - start)
        x, y = xs[part], ys[part]
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = dots / (np.sqrt(norms2[x]) * np.sqrt(norms2[y])) if integral else dots
        keep = (scores >= line) & (dots != 0)
        out.extend(zip(x[keep].tolist(), y[keep].tolist(), scores[keep].tolist(), strict=True))
        start = stop
    return out
