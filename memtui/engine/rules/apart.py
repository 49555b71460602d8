"""memtui's guards for its merge tiers: what keeps two entries out of one group (numbers
that disagree, different subjects, days or frames), and the dates said for a merge's wording."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memtui.engine.dates import dates_apart, episodes_differ, resolved
from memtui.engine.frames import frames_apart, frames_differ
from memtui.engine.grouping import similarity_source
from memtui.engine.lexical import numbers_in
from memtui.engine.rules.run import Builder
from memtui.engine.subjects import subjects_apart, subjects_differ
from memtui.model import Memory


def dated(members: Sequence[Memory]) -> list[Memory]:
    """The members with their relative time words said as dates (engine/dates.py)."""
    return [
        m if (text := resolved(m.content, m.created_at)) == m.content else m.with_(content=text)
        for m in members
    ]


def apart(
    b: Builder, stated: Mapping[str, frozenset[str]], x: str, y: str, *, frames: bool
) -> bool:
    """Two entries that must not join: numbers that disagree, different subjects, time words
    that point to different days, or (`frames`: the subject tier) one frame with another value
    (engine/frames.py; in the first tier it costs restatements on the old labelled set)."""
    if _disagree(stated, x, y):
        return True
    a, c = b.current[x], b.current[y]
    return (
        subjects_differ(a.content, c.content)
        or episodes_differ(a.content, a.created_at, c.content, c.created_at)
        or (frames and frames_differ(a.content, c.content))
    )


def never_together(
    b: Builder,
    scores: Callable[[list[str]], np.ndarray],
    stated: Mapping[str, frozenset[str]],
    *,
    frames: bool,
) -> Callable[[list[str]], np.ndarray]:
    """Scores with −inf between entries that must not join (`apart`), so that no linkage
    puts them in one group: numbers that disagree are offered as conflicts instead."""

    partners: dict[str, list[str]] = {}  # the clashing pairs by entry, found once
    for one, other in b.clashing:
        partners.setdefault(one, []).append(other)

    def guarded(ids: list[str]) -> np.ndarray:
        matrix = np.array(scores(ids), dtype=np.float64)
        memories = [b.current[i] for i in ids]
        texts = [m.content for m in memories]
        never = subjects_apart(texts) | dates_apart(texts, [m.created_at for m in memories])
        if frames:
            never |= frames_apart(texts)
        with_numbers = [(n, i) for n, i in enumerate(ids) if i in stated]
        for x, (n, a) in enumerate(with_numbers):
            for m, c in with_numbers[x + 1 :]:
                if _disagree(stated, a, c):
                    never[n, m] = never[m, n] = True
        if partners:
            where = {ident: row for row, ident in enumerate(ids)}
            for i, one in enumerate(ids):
                for other in partners.get(one, ()):
                    j = where.get(other)
                    if j is not None:
                        never[i, j] = never[j, i] = True
        matrix[never] = -np.inf
        return matrix

    return guarded


def numbers_stated(b: Builder) -> dict[str, frozenset[str]]:
    if b.numbers is None:
        b.numbers = {m.id: found for m in b.eligible if (found := numbers_in(m.content))}
    return b.numbers


def _disagree(stated: Mapping[str, frozenset[str]], a: str, b: str) -> bool:
    """Each entry states a number the other does not ("I am 13" / "I am 24"): two facts that
    may contradict each other, not one memory said twice; a refinement that adds a number
    ("2 cats" / "2 cats and 1 dog") does not disagree."""
    na, nb = stated.get(a), stated.get(b)
    return bool(na and nb and na - nb and nb - na)


def similarity_matrix(b: Builder, method: str) -> Callable[[list[str]], np.ndarray]:
    """All scores among some eligible entries, as the candidate search scored them."""
    vectors = b.vectors if method == "memtui" else None
    return similarity_source(b.current, b.eligible, method, b.embeddings, vectors)
