"""Planning users in parallel worker processes: the engine plans each user on their own
(engine/planner.py `plan_user`) and joins the parts in the order a whole-store plan has
(`join_users`), so the plan is byte-identical to a one-process plan.

`jobs`: how many processes plan at once; 1 plans the store whole in this process. None picks:
the usable cores (at most `MOST_JOBS`), but one process for a store of one user or under
`SMALL_STORE` entries (starting workers and sending their parts back costs more than they
save there), and one where processes cannot be forked (the workers read the store from the
parent's memory, copied on write, instead of being sent it).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from itertools import islice
from typing import Any, TypeVar

from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Plan
from memtui.engine.planner import (
    Cancelled,
    Progress,
    UserPlan,
    by_user,
    join_users,
    make_plan,
    plan_user,
    plans_by_user,
    store_wide,
)
from memtui.engine.profiles import Profile
from memtui.engine.rules.run import Place
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import Memory
from memtui.service.plan_spool import Decoder, encode, places
from memtui.traits import OWN_IDS, IdStyle

SMALL_STORE = 50_000
"""Entries below which one process plans by default: service/plans.py `STREAM_FROM`, where
plans start to be streamed. A streamed plan pays for encoding the users' parts whatever the
processes, so workers cost no more CPU there (100k entries: 15.8 CPU s with 2, 16.0 with 1);
a plan made whole costs more with them (30k: 5.1 against 3.1 longterm, 9.3 against 7.2
default; bench/plan_jobs_bench.py)."""
MOST_JOBS = 4
"""The most processes picked by default: the parent joins and writes the plan alone, so more
workers than that save little and each holds a user's working set."""
CHUNKS_PER_JOB = 4
"""Each worker takes at least about this many runs of users, so one large user does not hold
up the others (and runs of at most about 64 users, so a run's results are few to hold)."""
_STOP_WAIT = 5.0  # seconds a terminated worker has to end before it is killed
AHEAD = 2
"""Runs of users planned ahead of the one being read: the workers need not wait for the
reader, and what waits to be read stays a few runs."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_jobs(entries: int, users: int) -> int:
    if users < 2 or entries < SMALL_STORE or not can_fork():
        return 1
    return max(1, min(usable_cores(), users, MOST_JOBS))


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
        place = places(memories)

        def part_of(entries: list[Memory]) -> tuple[list[Any], list[Place], list[Any]]:
            part = plan_user(entries, profile, now, wide, ids=ids, embeddings=embeddings)
            return encode(part.actions, place), part.keys, part.seeds

        parts = [
            UserPlan(list(Decoder(memories, set()).actions(actions)), keys, seeds)
            for actions, keys, seeds in each_result(users, jobs, part_of, progress, cancelled)
        ]
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


T = TypeVar("T")

# what the forked workers run and on what (set before the pool forks, so never sent to them)
_EACH: Callable[[list[Memory]], Any] | None = None
_USERS: list[list[Memory]] = []
_CHUNKS: list[tuple[int, int]] = []


def each_result(
    users: list[list[Memory]],
    jobs: int,
    each: Callable[[list[Memory]], T],
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> Iterator[T]:
    """`each(entries)` of every user, made by `jobs` worker processes, in user order as they
    finish. The workers read the users from this process's memory (forked, copied on write);
    only the results travel, pickled."""
    global _EACH, _USERS, _CHUNKS
    _CHUNKS = _chunks([len(u) for u in users], max(jobs * CHUNKS_PER_JOB, len(users) // 64))
    _EACH, _USERS = each, users
    done = 0
    gc.freeze()  # the store's objects stay out of the workers' collections (copy on write)
    pool = ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start
    )
    finished = False
    waiting: deque[Future[bytes]] = deque()
    chunks = iter(range(len(_CHUNKS)))
    # a few runs ahead of the one awaited, not all: the results wait here until read
    waiting.extend(pool.submit(_run_chunk, c) for c in islice(chunks, jobs + AHEAD))
    workers = _workers(pool)  # kept: the pool forgets them once one has died
    try:
        while waiting:
            found = waiting.popleft().result()
            waiting.extend(pool.submit(_run_chunk, c) for c in islice(chunks, 1))
            results: list[T] = pickle.loads(found)
            del found
            for result in results:
                done += 1
                yield result
                if cancelled is not None and cancelled():
                    raise Cancelled("planning cancelled")
                if progress is not None:
                    progress(f"users {done}/{len(users)}", done / len(users))
        finished = True
    except BrokenProcessPool:
        raise MemtuiError(
            f"a planning worker process ended before its users were planned{_how(workers)}; "
            "nothing was written (too little memory? try --jobs 1)"
        ) from None
    finally:
        if not finished:
            _stop(workers, pool)  # no worker goes on planning users nobody waits for
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
        _EACH, _USERS, _CHUNKS = None, [], []


def _workers(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    # the executor keeps its processes by pid; no public way to name or stop them
    return list((getattr(pool, "_processes", None) or {}).values())


def _how(workers: list[multiprocessing.process.BaseProcess]) -> str:
    for process in workers:
        process.join(1.0)  # the pool ends the others; their codes settle
    # the executor's thread may reap a worker between our wait and our look (our waitpid then
    # finds no child): its code reaches the shared process object a moment later
    for _ in range(40):
        if all(p.exitcode is not None for p in workers):
            break
        time.sleep(0.05)
    codes = [p.exitcode for p in workers if p.exitcode]
    if not codes:
        return ""
    # the pool ends the other workers with SIGTERM once one is gone: name the first cause
    code = next((c for c in codes if c != -signal.SIGTERM), codes[0])
    if code < 0:
        try:
            return f" (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f" (killed by signal {-code})"
    return f" (exit status {code})"


def _stop(workers: list[multiprocessing.process.BaseProcess], pool: ProcessPoolExecutor) -> None:
    """End the workers, and let the executor's reader go: a worker ended while it sent a
    result leaves half a message in the result pipe, which the executor's thread then waits
    to finish for ever (and `shutdown` with it), since this process holds the pipe's other
    end. Once no worker is left, closing that end ends the wait (the pool is broken then)."""
    for process in workers:
        if process.is_alive():
            process.terminate()
    for process in workers:
        process.join(_STOP_WAIT)
        if process.is_alive():
            process.kill()
            process.join()
    # the executor keeps the pipe's writing end here; no public way to close it
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()


def _worker_start() -> None:
    # the parent answers an interrupt (memtui/interrupts.py); a worker just ends when told
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _run_chunk(chunk: int) -> bytes:
    each = _EACH
    assert each is not None
    start, end = _CHUNKS[chunk]
    with gc_paused():
        return pickle.dumps([each(u) for u in _USERS[start:end]], pickle.HIGHEST_PROTOCOL)


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
