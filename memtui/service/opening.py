"""Opening stores: which one `memtui [STORE]` opens, the demo, import and export, and what is
wrong with a store's sidecars (`memtui doctor`)."""

from __future__ import annotations

import os
from pathlib import Path

from memtui import locations
from memtui.config import pg_limits
from memtui.demo import DEFAULT_SIZE as DEFAULT_DEMO_SIZE
from memtui.demo import make_demo_memories
from memtui.demo.claude_code import demo_files as claude_demo_files
from memtui.demo.hermes import demo_files as hermes_demo_files
from memtui.errors import MemtuiError, StoreFormatError
from memtui.service.base import Part, file_store
from memtui.stores import create_native_store, export_store
from memtui.stores.file.backups import BackupShelf
from memtui.stores.file.doctor import repair
from memtui.stores.file.files import atomic_write, read_bytes
from memtui.stores.file.folder_store import FolderStore
from memtui.stores.file.sidecar import check_writable
from memtui.stores.file.store import Store as FileStore
from memtui.stores.postgres import is_postgres_location, open_postgres_store
from memtui.stores.protocol import MemoryStore
from memtui.stores.transfer import ExportReport, is_demo_store

DEMO_MAX_SIZE = 2_000_000


class Stores(Part):
    """Opening, creating, importing, exporting and checking stores."""

    def open(
        self, location: str | Path, *, warn: bool = True, by_user: bool = False
    ) -> MemoryStore:
        """`by_user`: a database table (of every user) without its rows, read a user at a
        time by what asks for them (a plan: service/pg_plan.py)."""
        if is_postgres_location(location):
            return open_postgres_store(
                str(location),
                self.shared.settings.keep_backups,
                pg_limits(self.shared.settings),
                by_user=by_user,
            )
        store = FileStore.open(location, self.shared.settings.keep_backups)
        if warn:
            self.shared.opened.append(store)
        return store

    def sidecar_warnings(self) -> list[str]:
        """One line per problem with the sidecars (ledger, backups) of the stores opened so
        far, each said once; the stores themselves still read and list."""
        lines = []
        for store in dict.fromkeys(self.shared.opened):
            problems = store.problems()
            lines += [f"memtui: warning: {p}" for p in problems[:5]]
            if len(problems) > 5:
                lines.append(f"memtui: warning: and {len(problems) - 5} more problems")
            if problems:
                lines.append(f"memtui: `memtui doctor {store.path}` says more")
        self.shared.opened.clear()
        return lines

    def problems(self, store: MemoryStore) -> list[str]:
        """What is wrong with the store's ledger and backups (`memtui doctor`), each line
        with what to do; the front ends show them, and memtui changes nothing in the store
        until they are repaired. A ledger that lost transactions its backups show is one."""
        return store.problems()

    def findings(self, store: MemoryStore) -> list[str]:
        """What the store's format noticed that needs no repair but a look (a Claude Code
        index line to no file, a memory file the index does not list), one line each."""
        return store.findings() if isinstance(store, FileStore) else []

    def leftovers(self, store: MemoryStore) -> list[str]:
        """What commits that did not happen left behind (aborted intents in the ledger, a
        dead writer's backup), one line each: harmless, reclaimed by `repair`."""
        return store.leftovers() if isinstance(store, FileStore) else []

    def read_only(self, store: MemoryStore) -> str | None:
        """Why memtui can change nothing in `store` now, in a few words (None: it can)."""
        if isinstance(store, FileStore):
            try:
                check_writable(store.file)
            except StoreFormatError:
                return "the file is read-only"
        return None

    def change_place(self, store: MemoryStore) -> str:
        """Where another program's change to `store` happened, as messages say it."""
        return store.place

    def repair(self, store: MemoryStore) -> list[str]:
        """Move damaged ledgers and journal entries aside (backed up first); what was done."""
        return repair(file_store(store, "repair"), self.shared.now())

    def store_to_open(self, store: str | None) -> tuple[str, str | None]:
        """Which store `memtui [STORE]` opens, and a hint for the user when it is a new one:
        the argument, else $MEMTUI_STORE, else the configured default, else pi's store if it
        exists, else memtui's own default store (created empty)."""
        chosen = store or os.environ.get("MEMTUI_STORE") or self.shared.settings.default_store
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
                native, [], now=self.shared.now(), kind="create", reason="memtui's default store"
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
    ) -> MemoryStore:
        """The demo store at `path` (default: memtui's data folder), regenerated when asked or
        missing; an older demo (with any changes made to it) stays in its backups."""
        path = path or locations.demo_store()
        if fresh or size is not None or seed is not None or not path.exists():
            self._replace_demo(path, size or DEFAULT_DEMO_SIZE, 7 if seed is None else seed)
            return self.open(path)
        store = self._demo_store(path)
        self.shared.opened.append(store)
        return store

    def hermes_demo(
        self, folder: Path | None = None, *, fresh: bool, whole: bool = False
    ) -> MemoryStore:
        """The Hermes demo's MEMORY.md (USER.md beside it) in `folder` (default: memtui's data
        folder), written when missing or asked; never over files memtui did not write there.
        `whole`: the folder as one store (both files, users memory and user)."""
        default = locations.hermes_demo()
        folder = folder or default
        files = hermes_demo_files()
        present = [name for name in files if (folder / name).exists()]
        if present and folder.resolve() != default.resolve():
            raise MemtuiError(
                f"{folder / present[0]}: exists; the Hermes demo is written into a folder "
                "without MEMORY.md and USER.md (choose another --out)"
            )
        if fresh or len(present) < len(files):
            folder.mkdir(parents=True, exist_ok=True)
            now = self.shared.now()
            for name, data in files.items():
                path = folder / name
                if path.exists():  # the demo as you left it stays in its backups
                    old = FileStore.open(path, self.shared.settings.keep_backups)
                    old.keep_backup(read_bytes(path), now)
                atomic_write(path, data, mode=0o600)
        return self.open(folder if whole else folder / "MEMORY.md")

    def claude_demo(self, folder: Path | None = None, *, fresh: bool) -> MemoryStore:
        """The Claude Code demo memory folder (default: memtui's data folder), written when
        missing or asked; never into a folder holding files memtui did not write there."""
        default = locations.claude_demo()
        folder = folder or default
        files = claude_demo_files()
        if folder.exists() and any(folder.iterdir()) and folder.resolve() != default.resolve():
            raise MemtuiError(
                f"{folder}: is not empty; the Claude Code demo is written into a new or empty "
                "folder (choose another --out)"
            )
        if fresh or not (folder / "MEMORY.md").exists():
            if (folder / "MEMORY.md").exists():  # the demo as you left it stays in its backups
                old = FileStore.open(folder, self.shared.settings.keep_backups)
                if isinstance(old, FolderStore):
                    old.keep_backup(old.packed_bytes(), self.shared.now())
            for name, data in files.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                atomic_write(folder / name, data, mode=0o644)
            for extra in set(folder.glob("*.md")) - {folder / n for n in files}:
                extra.unlink()
        return self.open(folder)

    def _demo_store(self, path: Path) -> FileStore:
        """The demo store at `path`; refused when that file is another store."""
        old = FileStore.open(path, self.shared.settings.keep_backups)
        if not is_demo_store(old):
            raise MemtuiError(
                f"{path}: exists and is not a memtui demo store; choose another --out"
            )
        return old

    def _replace_demo(self, path: Path, size: int, seed: int) -> None:
        if size < 1 or size > DEMO_MAX_SIZE:
            raise MemtuiError(f"the demo size must be between 1 and {DEMO_MAX_SIZE}")
        now = self.shared.now()
        if path.exists():
            old = self._demo_store(path)
            shelf = BackupShelf(
                old.sidecar / "backups", path.suffix or ".json", self.shared.settings.keep_backups
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
            keep_backups=self.shared.settings.keep_backups,
        )

    def import_store(self, source: MemoryStore, dest: Path) -> MemoryStore:
        return create_native_store(
            dest,
            source.memories(),
            now=self.shared.now(),
            kind="import",
            reason=f"imported {len(source)} entries from {source.path} ({source.format_name})",
            meta={"imported_from": str(source.path), "source_format": source.format_name},
            keep_backups=self.shared.settings.keep_backups,
        )

    def export(self, store: MemoryStore, dest: Path, fmt: str) -> ExportReport:
        return export_store(store, dest, fmt, self.shared.now())
