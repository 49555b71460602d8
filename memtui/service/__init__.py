"""The application layer both front ends call: every operation a user can ask for, once.

A `Service` is built from the settings (read once) and a clock. The CLI parses arguments and
prints; the TUI shows and asks; neither builds engine or store objects itself, so a rule (pi's
content cap, which profile a store gets, what an edit may change) lives here and behaves the
same in both.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any, TypeAlias, cast

import orjson

from memtui import curate, locations
from memtui.config import (
    Settings,
    llm_settings,
    load_user_settings,
    resolve_profile,
    save_setting,
)
from memtui.curate import History, Lineage, record_of
from memtui.demo import DEFAULT_SIZE as DEFAULT_DEMO_SIZE
from memtui.demo import make_demo_memories
from memtui.engine.calibration import (
    DEFAULT_TARGET_PRECISION,
    EMBED_METHOD,
    MethodCalibration,
    calibrate,
    labels_shortfall,
    score_embedded_pairs,
    score_text_pairs,
)
from memtui.engine.candidates import Pair
from memtui.engine.decay import MODELS as DECAY_MODELS
from memtui.engine.decay import DecayModel, decay_for, model
from memtui.engine.embedded import Embeddings
from memtui.engine.grouping import Group, active_pairs, group_entries
from memtui.engine.ids import TakenIds
from memtui.engine.plan import KINDS, Action, Plan, closure
from memtui.engine.planner import Cancelled, Progress, make_plan
from memtui.engine.profiles import PROFILE_NAMES, Profile, profile_for_format
from memtui.engine.similarity import METHODS, text_similarity
from memtui.engine.wording import clauses
from memtui.errors import MemtuiError
from memtui.model import HIDDEN_STATUSES, Memory, Source, Status
from memtui.plan_seal import load_key as load_seal_key
from memtui.stores import (
    EXPORT_FORMATS,
    Actor,
    Backup,
    Change,
    MemoryStore,
    Transaction,
    create_native_store,
    export_store,
)
from memtui.stores.backups import BackupShelf
from memtui.stores.compaction import Compaction, compact_store
from memtui.stores.doctor import repair
from memtui.stores.files import atomic_write, read_bytes
from memtui.stores.labels import Label, LabelFile, make_label
from memtui.stores.pi_format import PI_CONTENT_CAP, PI_TYPES
from memtui.stores.postgres import is_postgres_location, open_postgres_store
from memtui.stores.progress import CommitProgress
from memtui.stores.store import Store as FileStore
from memtui.stores.transfer import ExportReport
from memtui.times import parse_iso_or_none

DEMO_MAX_SIZE = 2_000_000
# what `calibrate` can measure: every method, and `memtui` with local embeddings (the extra)
CALIBRATION_METHODS = (*METHODS, EMBED_METHOD)

LABEL_BAND = 0.2  # how far from the merge line a pair is worth labelling

Store: TypeAlias = MemoryStore
"""What the front ends hold: any store (a file, a database table)."""
__all__ = [
    "CALIBRATION_METHODS",
    "DECAY_MODELS",
    "DEFAULT_DEMO_SIZE",
    "DEFAULT_TARGET_PRECISION",
    "DEMO_MAX_SIZE",
    "EXPORT_FORMATS",
    "KINDS",
    "METHODS",
    "PROFILE_NAMES",
    "Action",
    "Backup",
    "Calibration",
    "Cancelled",
    "CommitProgress",
    "DecayModel",
    "EntryEdit",
    "Group",
    "History",
    "Label",
    "LabelPair",
    "Lineage",
    "LlmRequest",
    "Pair",
    "Plan",
    "Profile",
    "Service",
    "Settings",
    "Store",
    "Transaction",
    "clock_from_env",
    "closure",
]


def clock_from_env() -> datetime:
    """The clock, or `$MEMTUI_NOW` (RFC 3339) for reproducible runs."""
    fixed = os.environ.get("MEMTUI_NOW")
    return parse_time(fixed, "MEMTUI_NOW") if fixed else datetime.now(UTC)


def parse_time(text: str, what: str) -> datetime:
    """A user-given RFC 3339 time, or a one-line error naming `what`."""
    when = parse_iso_or_none(text)
    if when is None:
        raise MemtuiError(f"{what} {text!r} is not an RFC 3339 time")
    return when


@dataclass(frozen=True, slots=True)
class EntryEdit:
    """What a person changes in one entry; None leaves a field as it is."""

    content: str | None = None
    importance: float | None = None
    tags: tuple[str, ...] | None = None
    status: Status | None = None
    category: str | None = None

    def fields(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """Asking a model to improve a plan: which strategies, and flags over the settings."""

    strategies: Sequence[str] = ()
    url: str | None = None
    model: str | None = None


class Service:
    def __init__(
        self, settings: Settings | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.settings = settings if settings is not None else Settings()
        self._clock = clock or clock_from_env
        self._opened: list[FileStore] = []  # whose sidecar problems are worth a warning
        self._notices: list[str] = []
        self._hinted = False  # the embed extra's install hint is said once
        self._seal_key: bytes | None = None

    @classmethod
    def from_config(cls, flag: str | None = None) -> Service:
        """Settings read once from `--config`, else `$MEMTUI_CONFIG`, else the default place."""
        return cls(load_user_settings(flag))

    def now(self) -> datetime:
        return self._clock()

    # -- stores -------------------------------------------------------------------------------

    def open(self, location: str | Path, *, warn: bool = True) -> Store:
        if is_postgres_location(location):
            return open_postgres_store(str(location), self.settings.keep_backups)
        store = FileStore.open(location, self.settings.keep_backups)
        if warn:
            self._opened.append(store)
        return store

    def sidecar_warnings(self) -> list[str]:
        """One line per problem with the sidecars (ledger, backups) of the stores opened so
        far, each said once; the stores themselves still read and list."""
        lines = []
        for store in dict.fromkeys(self._opened):
            problems = store.problems()
            lines += [f"memtui: warning: {p}" for p in problems[:5]]
            if len(problems) > 5:
                lines.append(f"memtui: warning: and {len(problems) - 5} more problems")
            if problems:
                lines.append(f"memtui: `memtui doctor {store.path}` says more")
        self._opened.clear()
        return lines

    def notices(self) -> list[str]:
        """One-line notes for the user gathered since the last call (e.g. how to get
        embeddings), each said once."""
        out, self._notices = self._notices, []
        return out

    def log_error(self, text: str) -> Path | None:
        """Append a bug's traceback to the error log; where it went, or None if it could not
        be written (the front end still says the bug in one line)."""
        path = locations.error_log()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as log:
                log.write(f"--- {datetime.now(UTC).isoformat(timespec='seconds')}\n{text}")
        except OSError:
            return None
        return path

    def problems(self, store: Store) -> list[str]:
        """What is wrong with the store's ledger and backups (`memtui doctor`)."""
        return store.problems()

    def repair(self, store: Store) -> list[str]:
        """Move damaged ledgers and journal entries aside (backed up first); what was done."""
        return repair(_file_store(store, "repair"), self.now())

    def store_to_open(self, store: str | None) -> tuple[str, str | None]:
        """Which store `memtui [STORE]` opens, and a hint for the user when it is a new one:
        the argument, else $MEMTUI_STORE, else the configured default, else pi's store if it
        exists, else memtui's own default store (created empty)."""
        chosen = store or os.environ.get("MEMTUI_STORE") or self.settings.default_store
        if chosen and is_postgres_location(chosen):
            return chosen, None
        if chosen:
            return str(Path(chosen).expanduser()), None
        pi = locations.pi_store()
        if pi.exists():
            return str(pi), None
        native = locations.default_native_store()
        if not native.exists():
            native.parent.mkdir(parents=True, exist_ok=True)
            create_native_store(
                native, [], now=self.now(), kind="create", reason="memtui's default store"
            )
        hint = "Your memtui store is empty. Run `memtui demo` to explore a realistic one."
        return str(native), hint

    def shown_location(self, location: str) -> str:
        """A store location as messages may show it: a database URL without its password."""
        if is_postgres_location(location):
            from memtui.stores.postgres.location import PgLocation

            return str(PgLocation.parse(location).display)
        return location

    def demo(
        self, path: Path | None = None, *, size: int | None, seed: int | None, fresh: bool
    ) -> Store:
        """The demo store at `path` (default: memtui's data folder), regenerated when asked or
        missing; an older demo (with any changes made to it) stays in its backups."""
        path = path or locations.demo_store()
        if fresh or size is not None or seed is not None or not path.exists():
            self._replace_demo(path, size or DEFAULT_DEMO_SIZE, 7 if seed is None else seed)
            return self.open(path)
        store = self._demo_store(path)
        self._opened.append(store)
        return store

    def _demo_store(self, path: Path) -> FileStore:
        """The demo store at `path`; refused when that file is another store."""
        old = FileStore.open(path, self.settings.keep_backups)
        meta = old.document().header.get("meta", {})
        if old.format_name != "native" or not isinstance(meta, dict) or not meta.get("demo"):
            raise MemtuiError(
                f"{path}: exists and is not a memtui demo store; choose another --out"
            )
        return old

    def _replace_demo(self, path: Path, size: int, seed: int) -> None:
        if size < 1 or size > DEMO_MAX_SIZE:
            raise MemtuiError(f"the demo size must be between 1 and {DEMO_MAX_SIZE}")
        now = self.now()
        if path.exists():
            old = self._demo_store(path)
            shelf = BackupShelf(
                old.sidecar / "backups", path.suffix or ".json", self.settings.keep_backups
            )
            shelf.add(read_bytes(path), now, 0)
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        create_native_store(
            path,
            make_demo_memories(size, seed, now),
            now=now,
            kind="demo",
            reason=f"demo store: {size} generated entries (seed {seed})",
            meta={"demo": True, "seed": seed},
            keep_backups=self.settings.keep_backups,
        )

    def import_store(self, source: Store, dest: Path) -> Store:
        return create_native_store(
            dest,
            source.memories(),
            now=self.now(),
            kind="import",
            reason=f"imported {len(source)} entries from {source.path} ({source.format_name})",
            meta={"imported_from": str(source.path), "source_format": source.format_name},
            keep_backups=self.settings.keep_backups,
        )

    def export(self, store: Store, dest: Path, fmt: str) -> ExportReport:
        return export_store(store, dest, fmt, self.now())

    # -- changing one entry -------------------------------------------------------------------

    def edited(self, store: Store, memory_id: str, edit: EntryEdit) -> Memory | None:
        """What the entry would become (nothing is written), or None when nothing would
        change; refused, with the reason, where the store's format cannot hold it (pi caps
        content at 500 characters, has six types and holds active entries only)."""
        before = store.get(memory_id)
        changes = edit.fields()
        if edit.content is not None:
            self._check_content(store, edit.content)
        if edit.importance is not None:
            self._check_importance(edit.importance)
        if edit.category is not None:
            self._check_category(store, edit.category)
        if edit.status is not None and edit.status is not before.status:
            self._check_status_fits(store, edit.status)
        if not any(getattr(before, k) != v for k, v in changes.items()):
            return None
        return before.with_(**changes, updated_at=self.now())

    def edit(
        self, store: Store, memory_id: str, edit: EntryEdit, reason: str | None = None
    ) -> Transaction | None:
        """Change one entry as one transaction; None when nothing would change. The store's
        format rules apply (see `edited`; the Go system's version moves forward in the store
        layer)."""
        before = store.get(memory_id)
        after = self.edited(store, memory_id, edit)
        if after is None:
            return None
        changed = sorted(k for k in edit.fields() if getattr(before, k) != getattr(after, k))
        return store.commit(
            [Change(before, after)],
            actor=Actor.USER,
            kind="edit",
            reason=reason or "edited by hand: " + ", ".join(changed),
            now=after.updated_at or self.now(),
        )

    def status_refusal(self, store: Store, memory: Memory, status: Status) -> str | None:
        """Why `memory` cannot take `status` in this store (one line), or None if it can."""
        if memory.status is status:
            return f"{memory.id} is already {status.value}"
        if memory.status in HIDDEN_STATUSES and memory.status is not Status.DELETED:
            return f"{memory.id} is {memory.status.value}; restore it first (l, then r)"
        if status in (Status.MERGED, Status.SUPERSEDED):
            return f"an entry becomes {status.value} by a merge or a supersede, not by hand"
        try:
            self._check_status_fits(store, status)
        except MemtuiError as e:
            return str(e)
        return None

    def set_status(
        self, store: Store, memory_id: str, status: Status, reason: str | None = None
    ) -> Transaction:
        """Archive, delete (soft: restorable) or bring back one entry, as one transaction. On a
        pi store a deleted entry leaves the file and lives in the ledger."""
        before = store.get(memory_id)
        refusal = self.status_refusal(store, before, status)
        if refusal:
            raise MemtuiError(refusal)
        now = self.now()
        verb = {Status.ARCHIVED: "archived", Status.DELETED: "deleted"}.get(
            status, f"{before.status.value} → {status.value}"
        )
        return store.commit(
            [Change(before, before.with_(status=status, updated_at=now))],
            actor=Actor.USER,
            kind="status",
            reason=reason or f"{verb} by hand",
            now=now,
        )

    def new_memory(
        self,
        store: Store,
        content: str,
        *,
        category: str = "fact",
        importance: float = 0.8,
        tags: Sequence[str] = (),
        user_id: str | None = None,
    ) -> Memory:
        """A new entry written by the user (nothing is written yet); refused, with the reason,
        where the store's format cannot hold it."""
        self._check_content(store, content)
        self._check_importance(importance)
        self._check_category(store, category)
        now = self.now()
        return Memory(
            id=store.new_id(now),
            content=content,
            category=category,
            importance=importance,
            source=Source.USER,
            tags=tuple(tags),
            created_at=now,
            last_accessed_at=now,
            updated_at=now,
            user_id=user_id or None,
        )

    def add_memory(self, store: Store, memory: Memory, reason: str | None = None) -> Transaction:
        """Add `memory` (from `new_memory`) as one transaction; undo removes it."""
        self._check_content(store, memory.content)
        if store.find(memory.id) is not None:
            raise MemtuiError(f"{store.path}: an entry with id {memory.id!r} exists already")
        return store.commit(
            [Change(None, memory)],
            actor=Actor.USER,
            kind="add",
            reason=reason or "added by hand",
            now=memory.created_at or self.now(),
        )

    def _check_content(self, store: Store, content: str) -> None:
        if not content.strip():
            raise MemtuiError("the content must not be empty")
        if store.format_name == "pi" and len(content) > PI_CONTENT_CAP:
            raise MemtuiError(
                f"the content is {len(content)} characters; pi stores cap content at "
                f"{PI_CONTENT_CAP}"
            )

    def _check_status_fits(self, store: Store, status: Status) -> None:
        if store.format_name == "pi" and status not in (Status.ACTIVE, Status.DELETED):
            raise MemtuiError(
                f"pi stores hold active entries only; {status.value} cannot be kept in the file "
                "(delete it instead: it leaves the file and stays in memtui's ledger)"
            )

    def _check_importance(self, importance: float) -> None:
        if not 0.0 <= importance <= 1.0:
            raise MemtuiError(f"the importance must be between 0 and 1, got {importance}")

    def _check_category(self, store: Store, category: str) -> None:
        if not category.strip():
            raise MemtuiError("the category must not be empty")
        if store.format_name == "pi" and category not in PI_TYPES:
            raise MemtuiError(
                f"pi stores hold these types only: {', '.join(sorted(PI_TYPES))}; not {category!r}"
            )

    def categories(self, store: Store) -> list[str]:
        """The categories an entry of this store may take (pi: its six types), or those its
        entries use, for the user to pick from."""
        if store.format_name == "pi":
            return sorted(PI_TYPES)
        return sorted({m.category for m in store.memories()} | {"fact"})

    def preview_merge(
        self, store: Store, ids: Sequence[str], *, strategy: str = "rule", content: str | None
    ) -> tuple[Memory, list[Memory]]:
        """The merged entry and the retired members as `merge` would write them; the new id
        costs O(1) once the store's ids are indexed (`taken_ids`)."""
        return curate.preview_merge(
            store,
            ids,
            strategy=strategy,
            content=content,
            now=self.now(),
            taken=self.taken_ids(store),
        )

    _taken_cache: tuple[int, str, TakenIds] | None = None

    def taken_ids(self, store: Store) -> TakenIds:
        """The store's ids, indexed once per store and version: read again only after a
        commit or a reload changed the store (its fingerprint)."""
        cached = self._taken_cache
        if cached is not None and cached[0] == id(store) and cached[1] == store.fingerprint:
            return cached[2]
        taken = TakenIds.of(m.id for m in store.memories())
        self._taken_cache = (id(store), store.fingerprint, taken)
        return taken

    def merge(
        self,
        store: Store,
        ids: Sequence[str],
        *,
        strategy: str = "rule",
        content: str | None,
        new_id: str | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Merge `ids` into one new entry (one transaction); `new_id`: the id the person saw in
        the preview, kept when free; `progress` is told its stages."""
        return curate.merge_by_hand(
            store,
            ids,
            strategy=strategy,
            content=content,
            now=self.now(),
            new_id=new_id,
            progress=progress,
        )

    def supersede(self, store: Store, old_id: str, new_id: str, reason: str = "") -> Transaction:
        return curate.supersede(store, old_id, new_id, reason=reason, now=self.now())

    def restore(self, store: Store, memory_id: str) -> Transaction:
        return curate.restore(store, memory_id, now=self.now())

    def lineage(self, store: Store, memory_id: str) -> Lineage:
        return curate.lineage(store, memory_id)

    def history(self, store: Store) -> History:
        """Every image the ledger holds of each entry."""
        return History.of(store)

    def record(self, store: Store, memory_id: str, history: History | None = None) -> Memory | None:
        """The entry as the store holds it, or as the ledger last saw it."""
        return record_of(store, memory_id, history)

    # -- undo and rollback --------------------------------------------------------------------

    def undo(
        self, store: Store, tx_id: int | None = None, progress: CommitProgress | None = None
    ) -> Transaction:
        """Revert a transaction (default: the newest not undone) as a new one; `progress` is
        told its stages (checking, preparing, backup, ledger, writing) with counts."""
        return store.undo(tx_id, now=self.now(), actor=Actor.USER, progress=progress)

    def rollback(
        self, store: Store, backup: str, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make the store what backup `backup` holds, as one undoable transaction; `progress`
        is told its stages."""
        return store.rollback(backup, now=self.now(), actor=Actor.USER, progress=progress)

    def rollback_from_copy(
        self, store: Store, source: Path, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make a PostgreSQL store what `memtui backup`'s copy `source` holds, as one undoable
        transaction; refused when `source` is not a copy of that table."""
        restore = getattr(store, "rollback_from_copy", None)
        if store.format_name != "postgres" or restore is None:
            raise MemtuiError(
                f"{store.path} is a file store: roll back to one of its backups by name "
                "(see `memtui backups`)"
            )
        return cast(
            Transaction, restore(source, now=self.now(), actor=Actor.USER, progress=progress)
        )

    def backups(self, store: Store) -> list[Backup]:
        return store.backups()

    def copy_table(self, store: Store, dest: Path) -> int:
        """A PostgreSQL store's whole table to a JSON Lines file (the Go records); file stores
        keep whole-file backups already."""
        dump = getattr(store, "dump", None)
        if store.format_name != "postgres" or dump is None:
            raise MemtuiError(
                f"{store.path} is a file store: its backups are whole files already "
                "(see `memtui backups`)"
            )
        return int(dump(dest))

    def compact(
        self, store: Store, *, keep: int | None = None, days: float | None = None
    ) -> Compaction:
        """Rewrite a native store's journal with changed fields only; with `keep` or `days`,
        move older transactions out of the store file into its sidecar (no longer undoable)."""
        return compact_store(_file_store(store, "compact"), keep=keep, days=days, now=self.now())

    # -- profiles, similarity, decay ----------------------------------------------------------

    def profile(self, store: Store, name: str | None = None) -> Profile:
        """The store's profile (or `name`) with the settings' `[profiles.NAME]` overrides: the
        same resolution for every command and screen."""
        return resolve_profile(self.settings, _profile_format(store), name)

    def default_profile_name(self, store: Store) -> str:
        return profile_for_format(_profile_format(store))

    def clusters(
        self, memories: Sequence[Memory], method: str, threshold: float, profile: Profile
    ) -> tuple[list[Pair], list[Group]]:
        """Pairs of active entries at or above the threshold, and the groups a person reviews:
        average linkage (a chain of unrelated entries never shows as one group), none over the
        profile's cap (an oversized group is shown in pieces that say so)."""
        return group_entries(
            memories,
            method,
            threshold,
            linkage="average",
            min_size=2,
            max_size=profile.cluster_max,
        )

    def pairs(
        self, store: Store, method: str | None = None, threshold: float | None = None
    ) -> tuple[list[Pair], str, float]:
        """Pairs of active entries of one user at or above the threshold, highest first,
        with the method and threshold used (the profile's when not given)."""
        profile = self.profile(store)
        method = method or profile.method
        if threshold is None:
            threshold = profile.merge_threshold or 0.8
        return active_pairs(store.memories(), method, threshold)[1], method, threshold

    def similarity(self, a: str, b: str, method: str) -> float:
        return text_similarity(a, b, method)

    def decay_model(self, profile: Profile, name: str | None = None) -> DecayModel:
        """The profile's decay model, or the one named (at its own default rate)."""
        return decay_for(profile, name) or model("longterm", profile.decay_rate)

    # -- plans --------------------------------------------------------------------------------

    def plan(
        self,
        store: Store,
        profile: Profile,
        *,
        now: datetime | None = None,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        embeddings: bool = False,
    ) -> Plan:
        """The consolidation plan for the store as it is (nothing is written). With
        `embeddings`, the `memtui` method adds local sentence embeddings (computed here, in
        the caller's thread, and cached beside the store); without the embed extra the plan is
        lexical and `notices()` says once how to get it. `params["similarity"]` says which."""
        last_run = next((tx.at for tx in store.history() if tx.kind == "plan"), None)
        memories = store.memories()
        vectors = None
        if embeddings and profile.method == "memtui":
            vectors = self._embeddings(store, memories, progress, cancelled)
        elif embeddings:
            self._notices.append(
                f"memtui: embeddings apply to the memtui method; profile {profile.name} uses "
                f"{profile.method} (try --profile default)"
            )
        return make_plan(
            memories,
            profile,
            now or self.now(),
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
            embedder, [m.content for m in chosen], _side_folder(store) / "embeddings", progress=step
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

    # -- labels and calibration ---------------------------------------------------------------

    def _labels_file(self, store: Store) -> LabelFile:
        return LabelFile(_side_folder(store) / "labels.jsonl")

    def labels(self, store: Store) -> list[Label]:
        return self._labels_file(store).read()

    def export_labels(self, labels: Sequence[Label], dest: Path) -> None:
        if dest.exists():
            raise MemtuiError(f"{dest}: exists; not overwriting it")
        if not dest.parent.is_dir():
            raise MemtuiError(f"{dest}: its folder does not exist; nothing was exported")
        LabelFile(dest).add(labels)

    def label(self, store: Store, ids: Sequence[str], same: bool) -> Label:
        """Record that these entries are (or are not) one memory; kept beside the store."""
        history = self.history(store)
        members = []
        for ident in ids:
            found = self.record(store, ident, history)
            if found is None:
                store.get(ident)  # the one-line "no memory with id" error
            else:
                members.append(found)
        label = make_label(members, same, self.now())
        self._labels_file(store).add([label])
        return label

    def unlabel(self, store: Store, label: Label) -> bool:
        """Take back `label` (the newest line that holds it); an earlier verdict on the same
        entries counts again. False when the file no longer holds it."""
        path = self._labels_file(store).path
        if not path.exists():
            return False
        lines = read_bytes(path).splitlines(keepends=True)
        wanted = label.to_dict()
        for n in range(len(lines) - 1, -1, -1):
            try:
                found = orjson.loads(lines[n]) == wanted
            except orjson.JSONDecodeError:
                found = False
            if found:
                del lines[n]
                atomic_write(path, b"".join(lines), mode=0o600)
                return True
        return False

    def label_counts(self, store: Store) -> tuple[int, int]:
        """How many pairs the store's labels decide, and how many of them are one memory."""
        decided = _decided_pairs(self.labels(store))
        return len(decided), sum(decided.values())

    def calibration_shortfall(self, store: Store) -> str | None:
        """What labels are still missing before a calibration curve means something (one
        line), or None when there are enough."""
        return labels_shortfall(*self.label_counts(store))

    def pairs_to_label(
        self, store: Store, limit: int = 200, *, band: float = LABEL_BAND
    ) -> list[LabelPair]:
        """Pairs worth a person's verdict: live entries of one user, not yet labelled, scoring
        within `band` of the profile's merge line under its method (where a verdict moves the
        threshold most). Alternately above and below the line, nearest first; no entry in two
        pairs one after the other where another pair can go between. Deterministic."""
        profile = self.profile(store)
        method = profile.method
        line = profile.merge_threshold or 0.8
        decided = _decided_pairs(self.labels(store))
        low, high = max(0.01, line - band), min(1.0, line + band)
        above: list[tuple[float, str, str, float]] = []
        below: list[tuple[float, str, str, float]] = []
        active, pairs = active_pairs(store.memories(), method, low)
        by_id = {m.id: m for m in active}
        for p in pairs:
            a, b = sorted((p.a, p.b))
            if p.score > high or (a, b) in decided or by_id[a].user_id != by_id[b].user_id:
                continue
            side = above if p.score >= line else below
            side.append((abs(p.score - line), a, b, p.score))
        above.sort()
        below.sort()
        chosen: list[tuple[str, str, float]] = []
        sides = (above, below)
        turn = 0
        while (above or below) and len(chosen) < limit:
            last = set(chosen[-1][:2]) if chosen else set()
            order = [sides[turn], sides[1 - turn]]
            picked = _first_apart(order, last)
            _, a, b, score = picked
            chosen.append((a, b, score))
            turn = 0 if score < line else 1
        return [
            LabelPair(
                by_id[a],
                by_id[b],
                method,
                line,
                {
                    m: score
                    if m == method
                    else text_similarity(by_id[a].content, by_id[b].content, m)
                    for m in METHODS
                },
            )
            for a, b, score in chosen
        ]

    def wording_provenance(self, text: str, members: Sequence[Memory]) -> dict[str, Any]:
        """Which member each clause of a merged `text` came from, in the shape of a plan's
        `details["provenance"]` (base, spans, added, left_out); a clause found in no member
        (the person's own words) is in no span."""
        return _attribute(text, members)

    def calibrate(
        self,
        store: Store,
        methods: Sequence[str] | None = None,
        target_precision: float = DEFAULT_TARGET_PRECISION,
    ) -> Calibration:
        """Precision, recall and F1 per threshold for each method from the store's labels."""
        if not 0.0 < target_precision <= 1.0:
            raise MemtuiError(f"the precision target must be in (0, 1], got {target_precision}")
        labels = self.labels(store)
        texts = {i: t for label in labels for i, t in zip(label.ids, label.texts, strict=True)}
        decided = _decided_pairs(labels)
        if not decided:
            raise MemtuiError(
                f"{store.path}: no labelled pairs yet; label some with `memtui label` "
                "(or y/n in the clusters view)"
            )
        pairs = [(texts[a], texts[b]) for a, b in decided]
        verdicts = list(decided.values())
        results = []
        for method in methods or METHODS:
            if method == EMBED_METHOD:
                scores = self._embedded_pair_scores(store, pairs)
            elif method in METHODS:
                scores = score_text_pairs(pairs, method)
            else:
                known = ", ".join(CALIBRATION_METHODS)
                raise MemtuiError(f"unknown method {method!r} (use {known})")
            scored = list(zip(scores, verdicts, strict=True))
            results.append(calibrate(method, scored, target_precision))
        return Calibration(
            str(store.path),
            self.profile(store).name,
            len(verdicts),
            sum(verdicts),
            target_precision,
            results,
        )

    def _embedded_pair_scores(self, store: Store, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The `memtui+embed` score of labelled text pairs (vectors cached beside the store)."""
        from memtui.embedding import EmbeddingsUnavailable, cached_embeddings, load_embedder

        try:
            embedder = load_embedder()
        except EmbeddingsUnavailable as e:
            raise MemtuiError(str(e)) from None
        texts = sorted({t for pair in pairs for t in pair})
        rows = cached_embeddings(embedder, texts, _side_folder(store) / "embeddings")
        return score_embedded_pairs(pairs, dict(zip(texts, rows, strict=True)), embedder.name)

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

    def save_setting(self, table: str, key: str, value: str, path: Path | None = None) -> None:
        """Write one setting to the config file (default: the one in use), keeping the rest of
        it as it is."""
        save_setting(path or self.settings.path or locations.config_file(), table, key, value)

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
        return curate.apply_plan(
            store, plan, approved, now=self.now(), seal_key=self.seal_key(), progress=progress
        )


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a store's labels say about each method's thresholds (`memtui calibrate`)."""

    store: str
    profile: str
    pairs: int
    positives: int
    target_precision: float
    methods: list[MethodCalibration]

    @property
    def shortfall(self) -> str | None:
        """Why there is no recommendation yet: too few labels for a curve to mean something."""
        return labels_shortfall(self.pairs, self.positives)

    @property
    def best(self) -> MethodCalibration | None:
        if self.shortfall is not None:
            return None
        fit = [m for m in self.methods if m.recommended is not None]
        return max(fit, key=lambda m: m.recommended.f1 if m.recommended else 0.0, default=None)

    def config_lines(self) -> str | None:
        best = self.best
        if best is None or best.recommended is None:
            return None
        # memtui+embed is the memtui method planned with `--embed`
        embed = best.method == EMBED_METHOD
        lines = (
            f'[profiles.{self.profile}]\nmethod = "{"memtui" if embed else best.method}"\n'
            f"merge_threshold = {best.recommended.threshold:g}"
        )
        return lines + ("\n# plan with --embed to use embeddings" if embed else "")

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "store": self.store,
            "profile": self.profile,
            "labels": {
                "pairs": self.pairs,
                "same": self.positives,
                "different": self.pairs - self.positives,
            },
            "target_precision": self.target_precision,
            "shortfall": self.shortfall,
            "methods": [m.to_dict() for m in self.methods],
            "recommendation": None
            if best is None or best.recommended is None
            else {
                "method": best.method,
                "threshold": best.recommended.threshold,
                "config": self.config_lines(),
            },
        }


@dataclass(frozen=True, slots=True)
class LabelPair:
    """Two live entries to label, with the score of each method (`method` is the profile's,
    `line` its merge line)."""

    a: Memory
    b: Memory
    method: str
    line: float
    scores: dict[str, float]

    @property
    def score(self) -> float:
        return self.scores[self.method]


def _decided_pairs(labels: Sequence[Label]) -> dict[tuple[str, str], bool]:
    """Each labelled pair's verdict (ids sorted), the newest label winning."""
    decided: dict[tuple[str, str], bool] = {}
    for label in sorted(labels, key=lambda lb: lb.at):
        for a, b, same in label.pairs():
            decided[(a, b)] = same
    return decided


def _first_apart(
    queues: Sequence[list[tuple[float, str, str, float]]], last: set[str]
) -> tuple[float, str, str, float]:
    """Take the first pair, in queue order, that shares no entry with `last`; else the
    first pair at all."""
    for queue in queues:
        for n, item in enumerate(queue):
            if not last & {item[1], item[2]}:
                return queue.pop(n)
    return next(q for q in queues if q).pop(0)


def _attribute(text: str, members: Sequence[Memory]) -> dict[str, Any]:
    base = max(members, key=lambda m: (text.startswith(m.content.strip()), len(m.content)))
    spans: list[list[Any]] = []
    added: list[dict[str, Any]] = []
    start = 0
    for clause in clauses(text):
        at = text.find(clause, start)
        if at < 0:
            continue
        start = at + len(clause)
        owner = next((m for m in (base, *members) if clause in m.content), None)
        if owner is None:
            continue
        if spans and spans[-1][2] == owner.id and owner.id == base.id:
            spans[-1][1] = start  # the base's clauses, one stretch
            continue
        spans.append([at, start, owner.id])
        if owner.id != base.id:
            added.append({"member": owner.id, "clause": clause, "words": []})
    return {"base": base.id, "spans": spans, "added": added, "left_out": []}


def _file_store(store: Store, what: str) -> FileStore:
    if isinstance(store, FileStore):
        return store
    raise MemtuiError(f"{store.path}: {what} works on store files, not on a database")


def _side_folder(store: Store) -> Path:
    """Where memtui keeps its own files about `store` (embeddings, labels): beside a store
    file, in memtui's data folder for a database."""
    if store.sidecar is not None:
        return store.sidecar
    return locations.data_dir() / "stores" / sha256(str(store.path).encode()).hexdigest()[:16]


def _profile_format(store: Store) -> str:
    """The format whose profile a store plans with (the Go system's table as its export)."""
    return "longterm" if store.format_name == "postgres" else store.format_name


def plan_summary(plan: Plan) -> str:
    return curate.plan_summary(plan)
