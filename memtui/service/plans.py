"""Consolidation plans: making one (with local embeddings when asked), improving it with a
model, reading and writing plan files with their seals, checking a plan fits, applying it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from memtui import curate, locations
from memtui.config import llm_settings
from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Plan
from memtui.engine.planner import Cancelled, Progress
from memtui.engine.profiles import Profile
from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.plan_seal import load_key as load_seal_key
from memtui.service.base import ServiceBase, Store, embeddings_folder
from memtui.service.parallel_plan import plan_in_parallel
from memtui.stores import Transaction
from memtui.stores.progress import CommitProgress
from memtui.timeline import check_not_before_entries, check_plan_not_ahead


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """Asking a model to improve a plan: which strategies, and flags over the settings."""

    strategies: Sequence[str] = ()
    url: str | None = None
    model: str | None = None


class PlansMixin(ServiceBase):
    """Plans from making to applying."""

    def plan(
        self,
        store: Store,
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
        last_run = next((tx.at for tx in store.history() if tx.kind == "plan"), None)
        memories = store.memories()
        when = now or self.now()
        check_not_before_entries(memories, when, "--now" if now else "the clock")
        vectors = None
        if embeddings and profile.method == "memtui":
            vectors = self._embeddings(store, memories, progress, cancelled)
        elif embeddings:
            self._notices.append(
                f"memtui: embeddings apply to the memtui method; profile {profile.name} uses "
                f"{profile.method} (try --profile default)"
            )
        return plan_in_parallel(
            memories,
            profile,
            when,
            jobs=jobs,
            store=str(store.path),
            store_format=store.format_name,
            fingerprint=store.fingerprint,
            last_run=last_run,
            progress=progress,
            cancelled=cancelled,
            embeddings=vectors,
        )

    def _embeddings(
        self,
        store: Store,
        memories: Sequence[Memory],
        progress: Progress | None,
        cancelled: Callable[[], bool] | None,
    ) -> Embeddings | None:
        from memtui.embedding import EmbeddingsUnavailable, cached_embeddings, load_embedder

        try:
            embedder = load_embedder()
        except EmbeddingsUnavailable as e:
            if not self._hinted:
                self._hinted = True
                self._notices.append(str(e))
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
        store: Store,
        profile: Profile,
        request: LlmRequest,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> Plan:
        """The plan with the configured model's merges, judgements and insights in it
        (`progress(done, total)` after each request)."""
        from memtui.engine.llm_strategies import DEFAULT_STRATEGIES, improve_plan
        from memtui.llm import LlmClient
        from memtui.stores.llm_cache import FileCache

        strategies = list(request.strategies) or list(
            DEFAULT_STRATEGIES.get(profile.name, ("merge",))
        )
        client = LlmClient(
            llm_settings(self.settings, url=request.url, model=request.model),
            FileCache(locations.data_dir() / "llm-cache"),
        )
        return await improve_plan(
            plan, store.memories(), profile, client, strategies, plan.now, progress=progress
        )

    def improve_plan(self, plan: Plan, store: Store, profile: Profile, request: LlmRequest) -> Plan:
        return asyncio.run(self.improve_plan_async(plan, store, profile, request))

    def llm_model(self) -> tuple[str | None, str | None]:
        """The configured model's name, or None and why there is none (one line)."""
        try:
            return llm_settings(self.settings).model, None
        except MemtuiError as e:
            return None, str(e)

    def read_plan(self, path: str) -> Plan:
        """A plan file, read back; its seals are checked once it meets its store
        (`check_plan_fits`, `apply`)."""
        return curate.read_plan(path)

    def write_plan(self, plan: Plan, path: str, version: int = 2) -> None:
        """Write the plan file: version 2 (compact, the default) or 1 (whole records), its
        wording sealed with this memtui's key."""
        curate.write_plan(plan, path, version, self.seal_key())

    def plan_bytes(self, plan: Plan, version: int = 2, *, indent: bool = True) -> bytes:
        """The plan as a file of that version holds it."""
        return curate.plan_bytes(plan, version, indent=indent, seal_key=self.seal_key())

    def seal_key(self) -> bytes | None:
        """The key that seals the wording of the plans this memtui writes (in the data
        folder; made on first use)."""
        if self._seal_key is None:
            self._seal_key = load_seal_key(locations.data_dir())
        return self._seal_key

    def plan_json_parts(self, plan: Plan, version: int = 1) -> Iterator[bytes]:
        """`plan_bytes(plan, version, indent=False)` in pieces, each whole UTF-8 text (for
        printing a big plan without holding it all twice)."""
        return curate.plan_json_parts(plan, version)

    def check_plan_fits(self, store: Store, plan: Plan) -> None:
        curate.check_plan_fits(store, plan, self.seal_key())

    def apply(
        self,
        store: Store,
        plan: Plan,
        approved: Sequence[str] | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Apply the approved actions (default: all that need no decision) as one
        transaction; refused, with nothing written, when the entries it touches changed.
        `progress` is told the commit's stages with counts."""
        now = self.now()
        check_plan_not_ahead(plan.now, now)
        self.check_plan_fits(store, plan)  # expands a compact plan's entries (done once)
        touched = (m for action in plan.actions for m in action.before)
        check_not_before_entries(touched, plan.now, "the plan's time")
        return curate.apply_plan(
            store, plan, approved, now=now, seal_key=self.seal_key(), progress=progress
        )


def plan_summary(plan: Plan) -> str:
    return curate.plan_summary(plan)
