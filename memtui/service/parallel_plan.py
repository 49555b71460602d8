"""Planning users in parallel worker processes: the engine plans each user on their own
(engine/planner.py `plan_user`) and joins the parts in the order a whole-store plan has
(`join_users`), so the plan is byte-identical to a one-process plan.

`jobs`: how many processes plan at once; 1 plans the store whole in this process. None picks:
the usable cores, but one process for a store of one user or under `SMALL_STORE` entries
(starting workers and sending their parts back costs more than they save there), and one
where processes cannot be forked (the workers read the store from the parent's memory, copied
on write, instead of being sent it).
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Plan
from memtui.engine.planner import (
    Cancelled,
    Progress,
    StoreWide,
    UserPlan,
    by_user,
    join_users,
    make_plan,
    plan_user,
    plans_by_user,
    store_wide,
)
from memtui.engine.profiles import Profile
from memtui.gcpause import gc_paused
from memtui.model import Memory
from memtui.traits import OWN_IDS, IdStyle

SMALL_STORE = 20_000
"""Entries below which one process plans (measured: bench/plan_jobs_bench.py)."""
CHUNKS_PER_JOB = 4
"""Each worker takes about this many runs of users, so one large user does not hold up the
others."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_jobs(entries: int, users: int) -> int:
    if users < 2 or entries < SMALL_STORE or not can_fork():
        return 1
    return max(1, min(usable_cores(), users))


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def plan_in_parallel(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    *,
    jobs: int | None = None,
    store: str = "",
    store_format: str = "native",
    ids: IdStyle = OWN_IDS,
    fingerprint: str = "",
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    last_run: datetime | None = None,
    embeddings: Embeddings | None = None,
) -> Plan:
    """The plan of `make_plan`, made by `jobs` processes (one user's working set each)."""
    users = by_user(memories)
    if jobs is None:
        jobs = default_jobs(len(memories), len(users))

    def whole() -> Plan:
        return make_plan(
            memories,
            profile,
            now,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            progress=progress,
            cancelled=cancelled,
            last_run=last_run,
            embeddings=embeddings,
        )

    if jobs <= 1 or len(users) < 2 or not plans_by_user(profile) or not can_fork():
        return whole()
    with gc_paused():
        wide = store_wide(memories, profile)
        work = Work(memories, users, profile, now, wide, ids, embeddings)
        parts = _parts(work, jobs, progress, cancelled)
        return join_users(
            parts,
            memories,
            profile,
            now,
            wide,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            last_run=last_run,
            embeddings=embeddings,
        )


@dataclass(frozen=True, slots=True)
class Work:
    """What the workers plan (read from the parent's memory, never sent)."""

    memories: Sequence[Memory]
    users: list[list[Memory]]
    profile: Profile
    now: datetime
    wide: StoreWide
    ids: IdStyle
    embeddings: Embeddings | None


# what the forked workers read (set before the pool forks, so never sent to them)
_WORK: Work | None = None
_CHUNKS: list[tuple[int, int]] = []


def _parts(
    work: Work,
    jobs: int,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> list[UserPlan]:
    return list(each_part(work, jobs, progress, cancelled))


def each_part(
    work: Work,
    jobs: int,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> Iterator[UserPlan]:
    """Each user's part in user order, as the workers finish them."""
    global _WORK, _CHUNKS
    _CHUNKS = _chunks([len(u) for u in work.users], jobs * CHUNKS_PER_JOB)
    _WORK = work
    done = 0
    try:
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_start) as pool:
            for found in pool.imap(_plan_chunk, range(len(_CHUNKS))):
                parts = _received(found, work.memories)
                done += len(parts)
                yield from parts
                if cancelled is not None and cancelled():
                    raise Cancelled("planning cancelled")  # leaving the pool ends the workers
                if progress is not None:
                    total = len(work.users)
                    progress(f"users {done}/{total}", done / total)
            pool.close()
            pool.join()
    finally:
        _WORK, _CHUNKS = None, []


def _worker_start() -> None:
    # the parent answers an interrupt (memtui/interrupts.py); a worker just ends when told
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _plan_chunk(chunk: int) -> bytes:
    work = _WORK
    assert work is not None
    start, end = _CHUNKS[chunk]
    with gc_paused():
        parts = [
            plan_user(
                entries,
                work.profile,
                work.now,
                work.wide,
                ids=work.ids,
                embeddings=work.embeddings,
            )
            for entries in work.users[start:end]
        ]
        return _sent(parts, work.memories)


def _sent(parts: list[UserPlan], memories: Sequence[Memory]) -> bytes:
    """The parts as bytes, the store's own entries as their place in it: the parent has them
    (a worker forked from it), so only what the actions made travels."""
    place = {id(m): n for n, m in enumerate(memories)}
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = lambda obj: place.get(id(obj))  # type: ignore[method-assign]
    pickler.dump(parts)
    return out.getvalue()


def _received(data: bytes, memories: Sequence[Memory]) -> list[UserPlan]:
    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = memories.__getitem__  # type: ignore[method-assign]
    parts: list[UserPlan] = unpickler.load()
    return parts


def _chunks(sizes: Sequence[int], count: int) -> list[tuple[int, int]]:
    """Runs of consecutive users (start, end), about `count` of them and of even entries."""
    total = sum(sizes)
    share = max(1, total // max(1, count))
    out: list[tuple[int, int]] = []
    start, held = 0, 0
    for n, size in enumerate(sizes):
        held += size
        if held >= share:
            out.append((start, n + 1))
            start, held = n + 1, 0
    if start < len(sizes):
        out.append((start, len(sizes)))
    return out
