"""A PostgreSQL table's plan, one user at a time (`plan_table`): never the whole table in memory.

In one snapshot of the table (`PgTable.snapshot`): a first pass in id order, without the rows'
content, finds what the store-wide steps need (each user's first active row for the wholesale
guard, whether any use was recorded for the decay model, the health figures); the rows that
supersede most others come from one query; then the rows come a user at a time (sorted by the
server), each user is planned, held by the guard, spooled (service/plan_stream.py's pieces)
and dropped; the parts are read back in the table's order of users, so the plan is the one
the whole loaded table gives, byte for byte. A row's place in the table is its id's rank:
the rules only compare places, so the id itself stands for it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from memtui.closing import Closing
from memtui.engine.decay import DecayModel, decay_for, decay_for_store, never_used
from memtui.engine.ids import TakenIds
from memtui.engine.planner import (
    Cancelled,
    Progress,
    Seeds,
    StoreWide,
    UserSummary,
    finish_head,
    join_in_order,
    plan_user,
    steps_for,
    stream_head,
    streams_by_user,
)
from memtui.engine.profiles import Profile
from memtui.engine.rules.health import HEALTH
from memtui.engine.rules.weight import effective_weight
from memtui.gcpause import gc_paused
from memtui.model import Memory, Status
from memtui.service.base import Part
from memtui.service.plan_notes import profile_for
from memtui.service.plan_spool import Decoder
from memtui.service.plan_stream import (
    StreamedPlan,
    Totals,
    decoded,
    encoded_part,
    plan_streamed,
)
from memtui.stores.protocol import MemoryStore
from memtui.timeline import check_not_before_entries
from memtui.traits import IdStyle

if TYPE_CHECKING:
    from memtui.engine.plan import Action
    from memtui.stores.postgres.table import PgTable, TableSnapshot


@runtime_checkable
class ReadByUser(Protocol):
    """A store whose rows are read a user at a time, never all at once (`PgTable`)."""

    def snapshot(self) -> AbstractContextManager[TableSnapshot]: ...


class _IdRank(Mapping[str, int]):
    """A row's place in the table's id order, as far as comparing places goes: its id."""

    def __getitem__(self, ident: str) -> int:
        return int(ident)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class _Wide:
    """What the first pass (every row in id order, no content) finds."""

    def __init__(self, profile: Profile, now: datetime) -> None:
        self.now = now
        self.used = False
        self.first_active: dict[str | None, int] = {}
        self.health = HEALTH in steps_for(profile)
        # the health's weights under each decay model the store may get (decay_for_store)
        self.models = [decay_for(profile), self._unused(profile)]
        self.weights = [0.0, 0.0]
        self.active = self.proposed = 0

    @staticmethod
    def _unused(profile: Profile) -> DecayModel | None:
        return decay_for_store(profile, ())

    def see(self, place: int, m: Memory) -> None:
        if not self.used and not never_used((m,)):
            self.used = True
        if m.status is Status.ACTIVE:
            self.first_active.setdefault(m.user_id, place)
            if self.health:
                self.active += 1
                for n, model in enumerate(self.models):
                    self.weights[n] += effective_weight(m, self.now, model)
        elif m.status is Status.PROPOSED:
            self.proposed += 1

    def tap(self, rows: Iterator[Memory]) -> Iterator[Memory]:
        for place, m in enumerate(rows):
            self.see(place, m)
            yield m

    def decay(self, profile: Profile) -> DecayModel | None:
        return decay_for(profile) if self.used else self._unused(profile)

    def figures(
        self, decay: DecayModel | None, kinds: Mapping[str, int], last_run: datetime | None
    ) -> dict[str, Any]:
        """`engine/rules/health.py` `health_figures`, from the pass's sums."""
        total = self.weights[self.models.index(decay)]
        return {
            "active": self.active,
            "proposed": self.proposed,
            "average_weight": round(total / self.active, 4) if self.active else 0.0,
            "duplicate_candidates": kinds.get("merge", 0),
            "stale_candidates": kinds.get("deprecate", 0),
            "last_run": last_run.isoformat() if last_run else None,
        }


def plan_table(
    table: PgTable,
    profile: Profile,
    now: datetime,
    *,
    now_given: bool = False,
    ids: IdStyle,
    last_run: datetime | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> StreamedPlan:
    """The table's plan as `plan_streamed` makes it of the whole loaded table."""
    with table.snapshot() as snap:
        if len(snap.users) < 2 or not streams_by_user(profile):
            memories = snap.whole()
            check_not_before_entries(memories, now, "--now" if now_given else "the clock")
            return plan_streamed(
                memories,
                profile,
                now,
                store=str(table.path),
                store_format=table.format_name,
                ids=ids,
                fingerprint=snap.fingerprint,
                progress=progress,
                cancelled=cancelled,
                last_run=last_run,
            )
        return _by_user(snap, table, profile, now, now_given, ids, last_run, progress, cancelled)


def _by_user(
    snap: TableSnapshot,
    table: PgTable,
    profile: Profile,
    now: datetime,
    now_given: bool,
    ids: IdStyle,
    last_run: datetime | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> StreamedPlan:
    def report(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("planning cancelled")
        if progress is not None:
            progress(name, fraction)

    report("reading", 0.0)
    seen = _Wide(profile, now)
    check_not_before_entries(seen.tap(snap.light()), now, "--now" if now_given else "the clock")
    decay = seen.decay(profile)
    wide = StoreWide(
        decay,
        frozenset(snap.most_successors(profile.protect_top)),
        TakenIds(frozenset(), snap.top_id),  # new ids: the next number or a stamped one
        _IdRank(),
        seen.first_active,
    )
    order = {u.user: n for n, u in enumerate(sorted(snap.users, key=lambda u: u.first_id))}
    # the users come by name and the plan has them in the table's order: spooled till then,
    # in an unnamed file (gone with the process)
    spool = tempfile.TemporaryFile(prefix="memtui-plan-")  # noqa: SIM115
    spans: list[list[tuple[int, int]]] = []
    summaries: list[UserSummary] = []
    places: list[int] = []
    with gc_paused():
        for done, entries in enumerate(snap.by_user()):
            report(f"users {done}/{len(snap.users)}", done / len(snap.users))
            part = plan_user(entries, profile, now, wide, ids=ids, cancelled=cancelled)
            summary, pieces = encoded_part(part, entries, profile, wide, {})
            summaries.append(summary)
            spans.append([_spooled(spool, piece) for piece in pieces])
            places.append(order[str(entries[0].user_id)])
            del part, entries, pieces
        report(f"users {len(snap.users)}/{len(snap.users)}", 1.0)
    head = stream_head(
        (),
        profile,
        now,
        wide,
        store=str(table.path),
        store_format=table.format_name,
        ids=ids,
        fingerprint=snap.fingerprint,
    )
    finish_head(head, (), profile, now, wide, summaries, last_run)
    totals = Totals()
    totals.add(summaries)
    if seen.health:
        head.health = seen.figures(decay, totals.summary, last_run)
    ranked = sorted(range(len(spans)), key=places.__getitem__)
    # every record travels as its fields (no store list here)
    parts = _spooled_parts(spool, [spans[n] for n in ranked])
    return StreamedPlan(head, join_in_order(parts, ids, now, wide.taken), totals, True)


def _spooled_parts(
    spool: IO[bytes], spans: list[list[tuple[int, int]]]
) -> Iterator[Iterator[tuple[Action, Seeds]]]:
    """Each user's part read back from the spool, in order; the spool closed when the
    reader closes them, read or not."""
    parts = (decoded(Decoder((), set()), _read(spool, user)) for user in spans)
    return Closing(parts, spool)


def _spooled(spool: IO[bytes], piece: bytes) -> tuple[int, int]:
    start = spool.tell()
    spool.write(piece)
    return start, start + len(piece)


def _read(spool: IO[bytes], spans: list[tuple[int, int]]) -> Iterator[bytes]:
    for start, end in spans:
        spool.seek(start)
        yield spool.read(end - start)


def plan_by_user(
    plans: Part,
    store: MemoryStore,
    profile: Profile,
    now: datetime | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> StreamedPlan:
    """`Plans.plan_stream` of a store read user by user (no embeddings: they need every row)."""
    last_run = next((tx.at for tx in store.history() if tx.kind == "plan"), None)
    return plan_table(
        cast("PgTable", store),
        profile_for(profile, store.traits),
        now or plans.shared.now(),
        now_given=now is not None,
        ids=store.traits.ids,
        last_run=last_run,
        progress=progress,
        cancelled=cancelled,
    )
