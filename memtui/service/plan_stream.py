"""Plans streamed user by user: each user is planned (in this process or in workers,
service/parallel_plan.py), held by the wholesale guard and counted, and spooled to an unnamed
temporary file; then the parts are read back one action at a time and joined in the order of
the whole-store plan (engine/planner.py `join_stream`). The plan's actions are never all in
memory at once; what its file says before them (its warnings) and after them (summary, health)
comes from the users' counts.

The spool keeps the identity of the records the actions share (an action's record that a
later action starts from is the same object, which a version-2 file relies on): the store's
own entries travel as their place in it, and a record two actions of a user share is sent
once and named after that.
"""

from __future__ import annotations

import dataclasses
import operator
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from memtui.engine.embedded import Embeddings
from memtui.engine.kinds import KINDS
from memtui.engine.plan import Action, Plan
from memtui.engine.planner import (
    Progress,
    Seeds,
    StoreWide,
    UserPlan,
    UserSummary,
    by_user,
    finish_user,
    in_key_order,
    join_stream,
    plan_user,
    store_wide,
    stream_head,
    streams_by_user,
)
from memtui.engine.profiles import Profile
from memtui.gcpause import gc_paused
from memtui.model import Memory, memory_values
from memtui.service.parallel_plan import Work, can_fork, default_jobs, each_part, plan_in_parallel
from memtui.traits import OWN_IDS, IdStyle

CHUNK = 64
"""Actions per spooled piece (a user's stream holds one piece at a time)."""


@dataclass(slots=True)
class StreamedPlan:
    """A plan whose actions come one at a time, once (`actions`); `head` is the plan without
    them (store, params, warnings, health)."""

    head: Plan
    summary: dict[str, int]
    touched: int
    waiting: int
    actions: Iterator[Action]
    kept: Callable[[Memory], bool] | None = None
    """Whether a later action may hold this very record (None: any may; planfile's
    `CompactRecords`)."""

    @classmethod
    def of(cls, plan: Plan) -> StreamedPlan:
        """A plan made whole, as a stream."""
        return cls(
            dataclasses.replace(plan, actions=[]),
            plan.summary,
            len({t for a in plan.actions for t in a.targets}),
            sum(a.needs_decision for a in plan.actions),
            iter(plan.actions),
        )


def plan_streamed(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    *,
    jobs: int | None = 1,
    store: str = "",
    store_format: str = "native",
    ids: IdStyle = OWN_IDS,
    fingerprint: str = "",
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    last_run: datetime | None = None,
    embeddings: Embeddings | None = None,
) -> StreamedPlan:
    """The plan of `plan_in_parallel`, streamed (a store of one user, or a profile planned
    whole, is planned whole and then streamed)."""
    users = by_user(memories)
    if len(users) < 2 or not streams_by_user(profile):
        plan = plan_in_parallel(
            memories,
            profile,
            now,
            jobs=jobs,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            progress=progress,
            cancelled=cancelled,
            last_run=last_run,
            embeddings=embeddings,
        )
        return StreamedPlan.of(plan)
    if jobs is None:
        jobs = default_jobs(len(memories), len(users))
    with gc_paused():
        wide = store_wide(memories, profile)
        if jobs > 1 and can_fork():
            work = Work(memories, users, profile, now, wide, ids, embeddings)
            parts: Iterator[UserPlan] = each_part(work, jobs, progress, cancelled)
        else:
            parts = _one_by_one(users, profile, now, wide, ids, embeddings, progress, cancelled)
        spool = _Spool(memories)
        summaries: list[UserSummary] = []
        for entries, part in zip(users, parts, strict=True):
            summaries.append(finish_user(part, entries, profile, wide))
            spool.add(in_key_order(part))
            del part
        head = stream_head(
            memories,
            profile,
            now,
            wide,
            summaries,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            last_run=last_run,
            embeddings=embeddings,
        )
    return StreamedPlan(
        head,
        _summary(summaries),
        sum(s.touched for s in summaries),
        sum(s.waiting for s in summaries),
        join_stream(spool.parts(), ids, now, wide),
        spool.kept,
    )


def _summary(summaries: Sequence[UserSummary]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for s in summaries:
        total.update(s.kinds)
    return {kind: total[kind] for kind in KINDS if total[kind]}


def _one_by_one(
    users: list[list[Memory]],
    profile: Profile,
    now: datetime,
    wide: StoreWide,
    ids: IdStyle,
    embeddings: Embeddings | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> Iterator[UserPlan]:
    for done, entries in enumerate(users):
        if progress is not None:
            progress(f"users {done}/{len(users)}", done / len(users))
        yield plan_user(
            entries, profile, now, wide, ids=ids, embeddings=embeddings, cancelled=cancelled
        )
    if progress is not None:
        progress(f"users {len(users)}/{len(users)}", 1.0)


Record = tuple[Any, Action, Seeds]
_ACTION = ("id", "kind", "targets", "rule", "scores", "reason", "depends_on")
_ACTION_MORE = ("needs_decision", "actor", "details")
_ACTION_VALUES = operator.attrgetter(*_ACTION, *_ACTION_MORE)


class _Spool:
    """Users' parts in an unnamed temporary file, read back a piece at a time per user. A
    record travels as its place in the store, as the serial of one a user's actions share
    (sent whole the first time), or as its fields."""

    def __init__(self, memories: Sequence[Memory]) -> None:
        self.memories = memories
        self.place = {id(m): n for n, m in enumerate(memories)}
        # unnamed, so gone with the process; closed when the stream is
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="memtui-plan-")  # noqa: SIM115
        self.pieces: list[list[tuple[int, int]]] = []  # per user: where each piece lies
        self.held: set[int] = set()  # the shared records read back (alive until the end)

    def add(self, records: list[Record]) -> None:
        """One user's records (key order)."""
        uses: dict[int, int] = {}
        for _, action, _ in records:
            for ident in {id(m) for m in (*action.before, *action.after)}:
                uses[ident] = uses.get(ident, 0) + 1
        place = self.place
        shared = {i for i, n in uses.items() if n > 1 and i not in place}
        sent: dict[int, int] = {}

        def ref(m: Memory) -> Any:
            at = place.get(id(m))
            if at is not None:
                return at
            serial = sent.get(id(m))
            if serial is not None:
                return serial, None
            if id(m) in shared:
                serial = sent[id(m)] = len(sent)
                return serial, memory_values(m)
            return memory_values(m)

        spans = []
        for at in range(0, len(records), CHUNK):
            piece = [
                (
                    key,
                    _ACTION_VALUES(a),
                    [ref(m) for m in a.before],
                    [ref(m) for m in a.after],
                    seeds,
                )
                for key, a, seeds in records[at : at + CHUNK]
            ]
            start = self.file.tell()
            pickle.dump(piece, self.file, pickle.HIGHEST_PROTOCOL)
            spans.append((start, self.file.tell()))
        self.pieces.append(spans)

    def kept(self, memory: Memory) -> bool:
        """Whether a later action may hold this very record."""
        return id(memory) in self.place or id(memory) in self.held

    def parts(self) -> list[Iterator[Record]]:
        return [self._read(spans) for spans in self.pieces]

    def _read(self, spans: list[tuple[int, int]]) -> Iterator[Record]:
        known: dict[int, Memory] = {}
        memories, held = self.memories, self.held

        def record(ref: Any) -> Memory:
            if isinstance(ref, int):
                return memories[ref]
            if isinstance(ref[0], int) and len(ref) == 2:
                serial, values = ref
                if values is None:
                    return known[serial]
                m = known[serial] = Memory(*values)
                held.add(id(m))
                return m
            return Memory(*ref)

        for start, end in spans:
            self.file.seek(start)
            for key, values, before, after, seeds in pickle.loads(self.file.read(end - start)):
                ident, kind, targets, rule, scores, reason, deps, decide, actor, details = values
                action = Action(
                    ident,
                    kind,
                    targets,
                    [record(r) for r in before],
                    [record(r) for r in after],
                    rule,
                    scores,
                    reason,
                    deps,
                    decide,
                    actor,
                    details,
                )
                yield key, action, seeds
