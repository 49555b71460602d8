"""Plans streamed user by user: the users are planned in turn (in this process, or in worker
processes, service/parallel_plan.py), each held by the wholesale guard and counted, and their
actions go to the plan's file and to `--json` as each user's are ready, renumbered and their
new ids drawn again (engine/planner.py `join_in_order`). The plan's actions are never all in
memory at once: what its file says before them is known before planning, what it says after
them (warnings, summary, health) comes from the users' counts once every user is planned.

In workers, each user's part is encoded where it was planned into pieces (service/plan_spool.py:
the store's entries as their place, a record the user's actions share sent once, a changed
record as its changes, the bulk rows' hints), and decoded here as it is written.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memtui.engine.embedded import Embeddings
from memtui.engine.kinds import KINDS
from memtui.engine.plan import Action, Plan
from memtui.engine.planner import (
    Ordered,
    Progress,
    Seeds,
    StoreWide,
    UserPlan,
    UserSummary,
    by_user,
    finish_head,
    finish_user,
    in_key_order,
    join_in_order,
    plan_user,
    store_wide,
    stream_head,
    streams_by_user,
)
from memtui.engine.profiles import Profile
from memtui.model import Memory
from memtui.planfile.compact import RowHints
from memtui.service.parallel_plan import can_fork, default_jobs, each_result, plan_in_parallel
from memtui.service.plan_spool import Decoder, Hints, dumps, encode, loads, places
from memtui.traits import OWN_IDS, IdStyle

Stop = Callable[[], bool] | None
Encoded = tuple[UserSummary, list[bytes]]
"""A user's part as a worker sends it: its counts, its actions' pieces (`encoded_part`)."""
CHUNK = 64
"""Actions per encoded piece (a user's part is decoded a piece at a time)."""


@dataclass(slots=True)
class Totals:
    """What a plan's actions add up to (a streamed plan's, once they have all come)."""

    summary: dict[str, int] = field(default_factory=dict)
    touched: int = 0
    waiting: int = 0
    complete: bool = False
    """Set once every user's actions are counted: a summary asked before is refused."""

    def add(self, summaries: Iterable[UserSummary]) -> None:
        summaries = list(summaries)
        self.complete = True
        self.summary = kinds_total(summaries)
        self.touched = sum(s.touched for s in summaries)
        self.waiting = sum(s.waiting for s in summaries)


@dataclass(slots=True)
class StreamedPlan:
    """A plan whose actions come one at a time, once (`actions`): `head` is the plan without
    them (store, params), and its warnings and health, like the `totals`, are complete once
    the actions have all come."""

    head: Plan
    actions: Iterator[Action]
    totals: Totals
    by_user: bool = False
    """The actions come user after user (planfile's `CompactRecords`)."""
    prints: Mapping[int, str] | None = None
    """The fingerprints of the store's entries the actions start from, by identity, as the
    actions come (`CompactRecords`)."""
    hints: Callable[[Action], Any] | None = None
    """Each action's `RowHints`, as it comes (`CompactRecords`)."""

    @property
    def summary(self) -> dict[str, int]:
        if not self.totals.complete:  # it would say "nothing to do"
            raise RuntimeError("a streamed plan's summary is known once its actions have come")
        return self.totals.summary

    @classmethod
    def of(cls, plan: Plan) -> StreamedPlan:
        """A plan made whole, as a stream."""
        totals = Totals(
            plan.summary,
            len({t for a in plan.actions for t in a.targets}),
            sum(a.needs_decision for a in plan.actions),
            complete=True,
        )
        return cls(dataclasses.replace(plan, actions=[]), iter(plan.actions), totals)


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
    """The plan of `plan_in_parallel`, streamed: the users are planned as its actions are
    asked for (a store of one user, or a profile planned whole, is planned whole here and
    then streamed)."""
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
    wide = store_wide(memories, profile)
    head = stream_head(
        memories,
        profile,
        now,
        wide,
        store=store,
        store_format=store_format,
        ids=ids,
        fingerprint=fingerprint,
        embeddings=embeddings,
    )
    totals = Totals()
    summaries: list[UserSummary] = []

    def plan_one(entries: list[Memory], stop: Stop = None) -> UserPlan:
        return plan_user(
            entries, profile, now, wide, ids=ids, embeddings=embeddings, cancelled=stop
        )

    def finished() -> None:
        finish_head(head, memories, profile, now, wide, summaries, last_run)
        totals.add(summaries)

    if jobs > 1 and can_fork():
        place = places(memories)
        prints: dict[int, str] = {}
        hints = Hints()

        def encoded(entries: list[Memory], stop: Stop = None) -> Encoded:
            return encoded_part(plan_one(entries, stop), entries, profile, wide, place, now)

        results = each_result(users, jobs, encoded, progress, cancelled)
        parts = _decoded(results, memories, summaries, prints, hints)
        return StreamedPlan(
            head,
            join_in_order(_then(parts, finished), ids, now, wide.taken),
            totals,
            True,
            prints,
            hints,
        )

    def planned() -> Iterator[Ordered]:
        for done, entries in enumerate(users):
            if progress is not None:
                progress(f"users {done}/{len(users)}", done / len(users))
            part = plan_one(entries, cancelled)
            summaries.append(finish_user(part, entries, profile, wide))
            yield in_key_order(part)
        if progress is not None:
            progress(f"users {len(users)}/{len(users)}", 1.0)

    return StreamedPlan(
        head, join_in_order(_then(planned(), finished), ids, now, wide.taken), totals, True
    )


def _then(parts: Iterator[Ordered], done: Callable[[], None]) -> Iterator[Ordered]:
    yield from parts
    done()


def kinds_total(summaries: Sequence[UserSummary]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for s in summaries:
        total.update(s.kinds)
    return {kind: total[kind] for kind in KINDS if total[kind]}


def encoded_part(
    part: UserPlan,
    entries: list[Memory],
    profile: Profile,
    wide: StoreWide,
    place: Mapping[int, int],
    now: datetime | None = None,
) -> Encoded:
    """One user's part held by the guard and counted, and its actions in plan order as
    pieces (where the user was planned: a worker, or this process), with their `RowHints`
    when the plan's `now` is given."""
    summary = finish_user(part, entries, profile, wide)
    records = in_key_order(part)
    hints = None if now is None else RowHints(now, profile.to_dict())
    coded = encode((a for a, _ in records), place, hints)
    pieces = [
        dumps([(e, seeds) for (_, seeds), e in zip(piece, mine, strict=True)])
        for at in range(0, len(records), CHUNK)
        for piece, mine in [(records[at : at + CHUNK], coded[at : at + CHUNK])]
    ]
    return summary, pieces


def decoded(decoder: Decoder, pieces: Iterable[bytes]) -> Iterator[tuple[Action, Seeds]]:
    """A user's pieces (`encoded_part`) back as actions, a piece at a time."""
    for data in pieces:
        piece = loads(data)
        actions = decoder.actions(e for e, _ in piece)
        for (_, seeds), action in zip(piece, actions, strict=True):
            yield action, seeds


def _decoded(
    results: Iterator[Encoded],
    memories: Sequence[Memory],
    summaries: list[UserSummary],
    prints: dict[int, str],
    hints: Hints,
) -> Iterator[Ordered]:
    for summary, pieces in results:
        summaries.append(summary)
        prints.clear()  # the last user's: no later action starts from their entries
        yield decoded(Decoder(memories, set(), prints, hints), pieces)
