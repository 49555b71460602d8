"""Plans streamed user by user: each user is planned (in this process or in workers,
service/parallel_plan.py), held by the wholesale guard and counted, and spooled to an unnamed
temporary file; then the parts are read back one action at a time and joined in the order of
the whole-store plan (engine/planner.py `join_stream`). The plan's actions are never all in
memory at once; what its file says before them (its warnings) and after them (summary, health)
comes from the users' counts.

Each user's part is encoded where it was planned (a worker, or this process) into the
spool's pieces (service/plan_spool.py: the store's entries as their place, a record the
user's actions share sent once, a changed record as its changes), so the parent only writes
the bytes and reads them back once.
"""

from __future__ import annotations

import dataclasses
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    merged_order,
    plan_user,
    store_wide,
    stream_head,
    streams_by_user,
)
from memtui.engine.profiles import Profile
from memtui.engine.rules.run import Place
from memtui.gcpause import gc_paused
from memtui.model import Memory
from memtui.planfile.compact import RowHints
from memtui.service.parallel_plan import can_fork, default_jobs, each_result, plan_in_parallel
from memtui.service.plan_spool import Decoder, Hints, dumps, encode, loads, places
from memtui.traits import OWN_IDS, IdStyle

Stop = Callable[[], bool] | None
Spooled = tuple[UserSummary, list[Place], list[bytes]]
"""A user's part as the spool takes it: its counts, its actions' keys, their pieces."""
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
    prints: Mapping[int, str] | None = None
    """The fingerprints of the store's entries the actions start from, by identity, as the
    actions come (`CompactRecords`)."""
    hints: Callable[[Action], Any] | None = None
    """Each action's `RowHints`, as it comes (`CompactRecords`)."""

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
        place = places(memories)

        def spooled(entries: list[Memory], stop: Stop = None) -> Spooled:
            part = plan_user(
                entries, profile, now, wide, ids=ids, embeddings=embeddings, cancelled=stop
            )
            return spooled_part(part, entries, profile, wide, place, now)

        if jobs > 1 and can_fork():
            parts = each_result(users, jobs, spooled, progress, cancelled)
        else:
            parts = _one_by_one(users, spooled, progress, cancelled)
        spool = Spool(memories, place)
        summaries: list[UserSummary] = []
        keys: list[list[Place]] = []
        for summary, mine, pieces in parts:
            summaries.append(summary)
            keys.append(mine)
            spool.add(pieces)
        order = array("H" if len(users) < 1 << 16 else "L", merged_order(keys))
        del keys
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
        kinds_total(summaries),
        sum(s.touched for s in summaries),
        sum(s.waiting for s in summaries),
        join_stream(spool.parts(), ids, now, wide, order),
        spool.kept,
        spool.prints,
        spool.latest,
    )


def kinds_total(summaries: Sequence[UserSummary]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for s in summaries:
        total.update(s.kinds)
    return {kind: total[kind] for kind in KINDS if total[kind]}


def _one_by_one(
    users: list[list[Memory]],
    spooled: Callable[[list[Memory], Stop], Spooled],
    progress: Progress | None,
    cancelled: Stop,
) -> Iterator[Spooled]:
    for done, entries in enumerate(users):
        if progress is not None:
            progress(f"users {done}/{len(users)}", done / len(users))
        yield spooled(entries, cancelled)
    if progress is not None:
        progress(f"users {len(users)}/{len(users)}", 1.0)


def spooled_part(
    part: UserPlan,
    entries: list[Memory],
    profile: Profile,
    wide: StoreWide,
    place: Mapping[int, int],
    now: datetime | None = None,
) -> Spooled:
    """One user's part held by the guard and counted, its actions' keys in key order, and
    those actions as the spool's pieces (where the user was planned: a worker, or this
    process), with their `RowHints` when the plan's `now` is given."""
    summary = finish_user(part, entries, profile, wide)
    records = in_key_order(part)
    hints = None if now is None else RowHints(now, profile.to_dict())
    encoded = encode((a for _, a, _ in records), place, hints)
    pieces = [
        dumps([(e, seeds) for (_, _, seeds), e in zip(piece, coded, strict=True)])
        for at in range(0, len(records), CHUNK)
        for piece, coded in [(records[at : at + CHUNK], encoded[at : at + CHUNK])]
    ]
    return summary, [key for key, _, _ in records], pieces


Record = tuple[Any, Action, Seeds]


class Spool:
    """Users' parts in an unnamed temporary file (their pieces as `spooled_part` made them), read
    back a piece at a time per user."""

    def __init__(self, memories: Sequence[Memory], place: Mapping[int, int]) -> None:
        self.memories = memories
        self.place = place
        # unnamed, so gone with the process; closed when the stream is
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="memtui-plan-")  # noqa: SIM115
        self.pieces: list[list[tuple[int, int]]] = []  # per user: where each piece lies
        self.held: set[int] = set()  # the shared records read back (alive until the end)
        self.prints: dict[int, str] = {}  # the store entries' fingerprints read back
        self.latest = Hints()

    def add(self, pieces: list[bytes]) -> None:
        """One user's pieces (key order)."""
        spans = []
        for piece in pieces:
            start = self.file.tell()
            self.file.write(piece)
            spans.append((start, start + len(piece)))
        self.pieces.append(spans)

    def kept(self, memory: Memory) -> bool:
        """Whether a later action may hold this very record."""
        return id(memory) in self.place or id(memory) in self.held

    def parts(self) -> list[Iterator[Record]]:
        return [self._read(spans) for spans in self.pieces]

    def _read(self, spans: list[tuple[int, int]]) -> Iterator[Record]:
        decoder = Decoder(self.memories, self.held, self.prints, self.latest)
        for start, end in spans:
            self.file.seek(start)
            piece = loads(self.file.read(end - start))
            actions = decoder.actions(e for e, _ in piece)
            for (_, seeds), action in zip(piece, actions, strict=True):
                yield (), action, seeds
