"""Consolidation plans: making one (with local embeddings when asked), improving it with a
model, reading and writing plan files with their seals, checking a plan fits, applying it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memtui import locations, planfile
from memtui.config import llm_settings
from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Action, Plan
from memtui.engine.planner import Cancelled, Progress
from memtui.engine.profiles import Profile
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import Memory, Status
from memtui.planfile.checks import ReadsRowsById, check_made_for
from memtui.service.base import Part, embeddings_folder
from memtui.service.parallel_plan import plan_in_parallel
from memtui.service.pg_plan import ReadByUser, plan_by_user
from memtui.service.plan_apply import (
    ReadyToApply,
    check_entries_not_ahead,
    commit_ready,
    ready,
    ready_from_file,
)
from memtui.service.plan_notes import plan_notes, profile_for
from memtui.service.plan_stream import StreamedPlan, plan_streamed
from memtui.stores import Transaction
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore
from memtui.timeline import check_not_before_entries, check_plan_not_ahead
from memtui.views import counted, entry_count


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """Asking a model to improve a plan: which strategies, and flags over the settings."""

    strategies: Sequence[str] = ()
    url: str | None = None
    model: str | None = None


STREAM_FROM = 50_000
"""Entries from which a plan is streamed: below, holding the whole plan costs less than
100 MB (bench/plan_memory_bench.py: about 3.5 KB an entry whole, 1.8 streamed) and the
whole path is 20-50 % less CPU (bench/plan_scale_bench.py)."""


@dataclass(frozen=True, slots=True)
class _Inputs:
    profile: Profile  # as the store's format can hold it (plan_notes.profile_for)
    memories: Sequence[Memory]
    when: datetime
    last_run: datetime | None
    vectors: Embeddings | None


class Plans(Part):
    """Plans from making to applying."""

    _seal_key: bytes | None = None

    def plan(
        self,
        store: MemoryStore,
        profile: Profile,
        *,
        now: datetime | None = None,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        embeddings: bool = False,
        jobs: int | None = 1,
    ) -> Plan:
        """The consolidation plan for the store as it is (nothing is written), planned by
        `jobs` processes user by user (None: as many as pay, service/parallel_plan.py). With
        `embeddings`, the `memtui` method adds local sentence embeddings (computed here, in
        the caller's thread, and cached beside the store); without the embed extra the plan is
        lexical and `notices()` says once how to get it. `params["similarity"]` says which."""
        got = self._inputs(store, profile, now, progress, cancelled, embeddings)
        plan = plan_in_parallel(
            got.memories,
            got.profile,
            got.when,
            jobs=jobs,
            **_about(store, got, progress, cancelled),
        )
        plan.warnings += plan_notes(store, plan)
        return plan

    def streams(self, store: MemoryStore) -> bool:
        """Whether `memtui plan` streams this store's plan to its file and `--json` (the same
        bytes, in less memory, at some more CPU): from `STREAM_FROM` entries, and not where the
        format adds notes from the whole plan (a Claude Code index, Hermes' caps)."""
        big = len(store) >= STREAM_FROM or isinstance(store, ReadByUser)
        return big and not store.traits.plan_notes

    def plan_stream(
        self,
        store: MemoryStore,
        profile: Profile,
        *,
        now: datetime | None = None,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        embeddings: bool = False,
        jobs: int | None = 1,
    ) -> StreamedPlan:
        """`plan`, its actions streamed user by user (service/plan_stream.py): for writing
        and printing a big plan without holding it (`write_stream`); a table read user by
        user is planned so (service/pg_plan.py)."""
        if isinstance(store, ReadByUser):
            return plan_by_user(self, store, profile, now, progress, cancelled)
        got = self._inputs(store, profile, now, progress, cancelled, embeddings)
        return plan_streamed(
            got.memories,
            got.profile,
            got.when,
            jobs=jobs,
            **_about(store, got, progress, cancelled),
        )

    def write_stream(
        self,
        plan: StreamedPlan,
        out: str | None,
        version: int = 2,
        *,
        json_out: Callable[[bytes], None] | None = None,
        json_version: int = 1,
        each: Callable[[Action], None] | None = None,
    ) -> None:
        """The streamed plan's actions, once: to the plan file `out` (as `write_plan` writes
        it), to `json_out` (as `plan_json_parts` gives it) and to `each`. The users are
        planned as their actions are written; the plan's head and totals are complete when
        this returns."""
        with gc_paused():  # the records it makes are freed by their counts, not by the collector
            planfile.write_streamed(
                plan.head,
                lambda: plan.summary,
                plan.actions,
                out,
                version,
                seal_key=self.seal_key() if out is not None else None,
                json_out=json_out,
                json_version=json_version,
                each=each,
                by_user=plan.by_user,
                prints=plan.prints,
                hints=plan.hints,
            )

    def _inputs(
        self,
        store: MemoryStore,
        profile: Profile,
        now: datetime | None,
        progress: Progress | None,
        cancelled: Callable[[], bool] | None,
        embeddings: bool,
    ) -> _Inputs:
        last_run = next((tx.at for tx in store.history() if tx.kind == "plan"), None)
        profile = profile_for(profile, store.traits)
        memories = store.memories()
        when = now or self.shared.now()
        check_not_before_entries(memories, when, "--now" if now else "the clock")
        vectors = None
        if embeddings and profile.method == "memtui":
            vectors = self._embeddings(store, memories, progress, cancelled)
        elif embeddings:
            self.shared.notices.append(
                f"memtui: embeddings apply to the memtui method; profile {profile.name} uses "
                f"{profile.method} (try --profile default)"
            )
        return _Inputs(profile, memories, when, last_run, vectors)

    def _embeddings(
        self,
        store: MemoryStore,
        memories: Sequence[Memory],
        progress: Progress | None,
        cancelled: Callable[[], bool] | None,
    ) -> Embeddings | None:
        from memtui.embedding import EmbeddingsUnavailable, cached_embeddings, load_embedder

        try:
            embedder = load_embedder()
        except EmbeddingsUnavailable as e:
            if not self.shared.hinted:
                self.shared.hinted = True
                self.shared.notices.append(str(e))
            return None
        # records that carry their own embeddings (Go) are compared with those
        chosen = [m for m in memories if m.status is Status.ACTIVE and not m.embedding]

        def step(done: int, total: int) -> None:
            if cancelled is not None and cancelled():
                raise Cancelled("planning cancelled")
            if progress is not None:
                progress("embeddings", done / max(1, total))

        step(0, 1)
        vectors = cached_embeddings(
            embedder, [m.content for m in chosen], embeddings_folder(store), progress=step
        )
        return Embeddings(embedder.name, dict(zip((m.id for m in chosen), vectors, strict=True)))

    async def improve_plan_async(
        self,
        plan: Plan,
        store: MemoryStore,
        profile: Profile,
        request: LlmRequest,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> Plan:
        """The plan with the configured model's merges, judgements and insights in it
        (`progress(done, total)` after each request)."""
        from memtui.engine.llm_strategies import DEFAULT_STRATEGIES, improve_plan
        from memtui.llm import LlmClient
        from memtui.stores.sidecars.llm_cache import FileCache

        strategies = list(request.strategies) or list(
            DEFAULT_STRATEGIES.get(profile.name, ("merge",))
        )
        client = LlmClient(
            llm_settings(self.shared.settings, url=request.url, model=request.model),
            FileCache(locations.data_dir() / "llm-cache"),
        )
        improved = await improve_plan(
            plan,
            store.memories(),
            profile,
            client,
            strategies,
            plan.now,
            ids=store.traits.ids,
            insight_status=store.traits.insight_status,
            progress=progress,
        )
        notes = set(plan_notes(store, plan))
        improved.warnings = [w for w in improved.warnings if w not in notes]
        improved.warnings += plan_notes(store, improved)
        return improved

    def improve_plan(
        self, plan: Plan, store: MemoryStore, profile: Profile, request: LlmRequest
    ) -> Plan:
        return asyncio.run(self.improve_plan_async(plan, store, profile, request))

    def llm_model(self) -> tuple[str | None, str | None]:
        """The configured model's name, or None and why there is none (one line)."""
        try:
            return llm_settings(self.shared.settings).model, None
        except MemtuiError as e:
            return None, str(e)

    def check_plan_file(self, path: str) -> None:
        """Refused in one line when there is no file at `path` (said before anything else is
        asked; `load_plan` checks the rest)."""
        if not os.path.lexists(os.path.expanduser(path)):
            raise MemtuiError(f"{path}: no such plan file")

    def load_plan(self, path: str, store: MemoryStore) -> Plan:
        """The plan file at `path`, complete and checked against `store` as it is now (made
        from it, each action within its kind's rules, its wording as memtui sealed it)."""
        return planfile.load(path, store, self.seal_key())

    def write_plan(self, plan: Plan, path: str, version: int = 2) -> None:
        """Write the plan file: version 2 (compact, the default) or 1 (whole records), its
        wording sealed with this memtui's key."""
        planfile.write(plan, path, version, self.seal_key())

    def plan_bytes(self, plan: Plan, version: int = 2, *, indent: bool = True) -> bytes:
        """The plan as a file of that version holds it."""
        return planfile.to_bytes(plan, version, indent=indent, seal_key=self.seal_key())

    def seal_key(self) -> bytes | None:
        """The key that seals the wording of the plans this memtui writes (in the data
        folder; made on first use)."""
        if self._seal_key is None:
            self._seal_key = planfile.load_key(locations.data_dir())
        return self._seal_key

    def plan_json_parts(self, plan: Plan, version: int = 1) -> Iterator[bytes]:
        """`plan_bytes(plan, version, indent=False)` in pieces, each whole UTF-8 text (for
        printing a big plan without holding it all twice)."""
        return planfile.json_parts(plan, version)

    def visible(self, store: MemoryStore) -> int:
        """How many entries the store shows (a table read by id counts its rows where they
        are)."""
        if isinstance(store, ReadsRowsById):
            return store.visible_count()
        return sum(1 for m in store.memories() if m.visible)

    def apply(
        self,
        store: MemoryStore,
        plan: Plan,
        approved: Sequence[str] | None = None,
        progress: CommitProgress | None = None,
        *,
        release: bool = False,
    ) -> Transaction:
        """Apply the approved actions (default: all that need no decision) as one
        transaction: a plan made in memory, or one `load_plan` read and checked. Refused, with
        nothing written, when the entries it touches changed. `progress` is told the commit's
        stages with counts. `release`: the caller is done with the plan, whose actions are
        let go once its changes are made (a whole-store plan's actions and records weigh as
        much as the commit: 200k entries, 1,365 MB at the peak against 1,054)."""
        now = self.shared.now()
        check_plan_not_ahead(plan.now, now)
        check_entries_not_ahead(plan)
        return apply_plan(store, plan, approved, now=now, progress=progress, release=release)

    def ready_from_file(
        self,
        path: str,
        store: MemoryStore,
        only: Sequence[str] | None = None,
        skip: Collection[str] = (),
    ) -> ReadyToApply:
        """The plan file at `path`, checked against `store` as `load_plan` checks it, with
        its actions `only` (default: all that need no decision) but `skip` made ready to
        commit (`commit_ready`); read a user at a time where it can be."""
        return ready_from_file(path, store, self.seal_key(), only, skip)

    def commit_ready(
        self, store: MemoryStore, made: ReadyToApply, progress: CommitProgress | None = None
    ) -> Transaction:
        """What `ready_from_file` made ready, as one transaction now."""
        return commit_ready(store, made, now=self.shared.now(), progress=progress)


def apply_plan(
    store: MemoryStore,
    plan: Plan,
    approved: Sequence[str] | None,
    *,
    now: datetime,
    progress: CommitProgress | None = None,
    release: bool = False,
) -> Transaction:
    """The approved actions' changes as one transaction at `now`: a plan made in memory, or
    one `load_plan` read and checked. `release`: the plan's actions are let go (emptied)
    before the commit."""
    check_made_for(store, plan)
    chosen = list(approved) if approved is not None else plan.default_approved()
    made = ready(plan, chosen, release=release)
    return commit_ready(store, made, now=now, progress=progress)


def plan_summary(plan: Plan | StreamedPlan, warnings_most: int | None = None) -> str:
    """The plan in a line or a few: its warnings (the first `warnings_most`, then how many
    more), what it does, what waits for a decision (a streamed plan's once its actions have all
    come)."""
    if isinstance(plan, Plan):
        plan = StreamedPlan.of(plan)
    counts = ", ".join(f"{kind} {n}" for kind, n in plan.summary.items()) or "nothing to do"
    touched, waiting = plan.totals.touched, plan.totals.waiting
    plan = plan.head
    shown = plan.warnings if warnings_most is None else plan.warnings[:warnings_most]
    head = "".join(f"{line}\n" for line in shown)
    if len(shown) < len(plan.warnings):
        more = counted(len(plan.warnings) - len(shown), "more warning")
        head += f"… and {more} (the plan lists them all)\n"
    head += f"{plan.profile} plan for {plan.store}: {counts} ({entry_count(touched)} touched)"
    if waiting:
        head += f"; {waiting} {'needs' if waiting == 1 else 'need'} a decision (marked ?)"
    if plan.health:
        head += "\nhealth: " + ", ".join(f"{k} {v}" for k, v in plan.health.items())
    return head


def _about(
    store: MemoryStore,
    got: _Inputs,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> dict[str, Any]:
    """What a plan of `store` is told besides its entries, profile and time (the same for a
    whole plan and a streamed one)."""
    return {
        "store": str(store.path),
        "store_format": store.format_name,
        "ids": store.traits.ids,
        "fingerprint": store.fingerprint,
        "last_run": got.last_run,
        "progress": progress,
        "cancelled": cancelled,
        "embeddings": got.vectors,
    }
