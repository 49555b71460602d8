"""What the agent changed outside memtui: recording it (on open, and continuously with
`watch`), "since you last looked", and bringing back what it removed or rewrote as one undoable
transaction.

"Looked" means: the TUI opened the store, or `memtui stats` printed it (both say the line).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memtui.errors import ConflictError, MemtuiError, NotFoundError
from memtui.service.base import Part, side_folder
from memtui.stores import Actor, Change, Transaction
from memtui.stores.ledger_outside import (
    AGENT,
    OutsideChange,
    OutsideRecord,
    counts,
    net_changes,
    summary,
)
from memtui.stores.protocol import MemoryStore

__all__ = ["AGENT", "Outside", "OutsideChange", "SinceLooked", "counts", "summary"]

# how often `watch` checks a database, and files whose events may have been missed
POLL_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class SinceLooked:
    looked_at: datetime
    changes: list[OutsideChange]

    @property
    def line(self) -> str:
        """ "since you last looked (2026-…): the agent added 5, changed 2, removed 23"."""
        when = self.looked_at.strftime("%Y-%m-%d %H:%M")
        if not self.changes:
            return f"since you last looked ({when}): the agent changed nothing"
        return f"since you last looked ({when}): {summary(self.changes)}"


class Outside(Part):
    """What the agent changed outside memtui, and bringing it back."""

    def record(self, store: MemoryStore) -> OutsideRecord:
        return OutsideRecord(side_folder(store), str(store.path))

    def catch_up(self, store: MemoryStore) -> Transaction | None:
        """Record, as one outside event, what changed in the store since memtui last saw it
        (memtui's own transactions aside)."""
        return self.record(store).catch_up(store, self.shared.now())

    def events(self, store: MemoryStore, *, archived: bool = False) -> list[Transaction]:
        """The outside events, oldest first."""
        return self.record(store).events(archived=archived)

    def since_looked(self, store: MemoryStore) -> SinceLooked | None:
        """What the agent changed since the person last looked (None: memtui never saw the
        store before; it has now). Records what is new first."""
        record = self.record(store)
        seen = record.looked()
        record.catch_up(store, self.shared.now())
        if seen is None:
            return None
        after = record.looked()
        assert after is not None
        looked_at, looked_event, last_event = after
        if last_event <= looked_event:  # no event since: the archives are not read
            return SinceLooked(looked_at, [])
        events = [e for e in record.events(archived=True) if e.id > looked_event]
        return SinceLooked(looked_at, net_changes(events))

    def look(self, store: MemoryStore) -> SinceLooked | None:
        """`since_looked`, then mark that the person has looked."""
        since = self.since_looked(store)
        self.record(store).mark_looked(self.shared.now())
        return since

    def changes(
        self, store: MemoryStore, *, since: datetime | None = None, looked: bool = False
    ) -> list[OutsideChange]:
        """Each entry the agent changed (first before, last after): since `since`, since the
        last look (`looked`), or over the whole record."""
        record = self.record(store)
        record.catch_up(store, self.shared.now())
        events = record.events(archived=True)
        if since is not None:
            events = [e for e in events if e.at >= since]
        elif looked:
            seen = record.seen()
            events = [e for e in events if seen is None or e.id > seen.looked_event]
        return net_changes(events)

    def restore(
        self, store: MemoryStore, ids: Sequence[str] = (), *, since: datetime | None = None
    ) -> Transaction:
        """Bring back what the agent removed or rewrote — the entries `ids` (each as it was
        before the agent first changed it since you last looked, as `changes` shows it; one it
        did not change since, as before its last change), or every entry it removed or rewrote since
        `since` (as before the first) — as one undoable transaction."""
        record = self.record(store)
        record.catch_up(store, self.shared.now())
        events = record.events(archived=True)
        if since is not None:
            wanted = [
                c for c in net_changes(e for e in events if e.at >= since) if c.before is not None
            ]
            if not wanted:
                raise NotFoundError(
                    f"{store.path}: the agent removed or rewrote nothing since "
                    f"{since.isoformat()}; nothing was written"
                )
        else:
            # as `memtui outside` and the TUI show it: before the agent's first change since
            # you last looked; an entry it did not change since then, before its last change
            seen = record.seen()
            recent = {
                c.id: c
                for c in net_changes(e for e in events if seen is None or e.id > seen.looked_event)
                if c.before is not None
            }
            wanted = [
                recent.get(ident) or self._last_change(store, events, ident)
                for ident in dict.fromkeys(ids)
            ]
        return self.restore_changes(store, wanted)

    def restore_changes(self, store: MemoryStore, wanted: Sequence[OutsideChange]) -> Transaction:
        """Each of `wanted` (changes the agent made) back to its `before`, as one undoable
        transaction; entries already as they were are left alone."""
        record = self.record(store)
        record.catch_up(store, self.shared.now())
        changes = []
        for c in wanted:
            memory = c.before_memory()
            if memory is None:
                raise ConflictError(
                    f"{store.path}: the agent added {c.id}; there is nothing earlier to bring back"
                )
            now = store.find(c.id)
            if now is not None and now == store.visible(memory):
                continue
            changes.append(Change(now, memory, c.before_raw, c.position))
        if not changes:
            raise MemtuiError(f"{store.path}: the store already holds all of that; nothing to do")
        what = ", ".join(c.id for c in changes[:3]) + (
            f" and {len(changes) - 3} more" if len(changes) > 3 else ""
        )
        try:
            return store.commit(
                changes,
                actor=Actor.USER,
                kind="restore",
                reason=f"restored what the agent removed or rewrote: {what}",
                now=self.shared.now(),
                details={"outside": [c.id for c in changes]},
            )
        finally:
            record.catch_up(store, self.shared.now())

    def _last_change(
        self, store: MemoryStore, events: list[Transaction], ident: str
    ) -> OutsideChange:
        for event in reversed(events):
            for c in event.changes:
                if c.id != ident:
                    continue
                if c.before is None:
                    raise ConflictError(
                        f"{store.path}: the agent added {ident} (event {event.id}); there is "
                        "nothing earlier to bring back"
                    )
                return OutsideChange(
                    ident, c.before, c.after, c.before_raw, c.position, event.at, event.id
                )
        raise NotFoundError(
            f"{store.path}: the record holds no outside change to {ident!r} "
            f"(see `memtui outside {store.path}`); nothing was written"
        )

    # -- watching ---------------------------------------------------------------------------

    def watch(
        self,
        stores: Sequence[MemoryStore],
        stop: threading.Event,
        report: Callable[[MemoryStore, Transaction], None],
        *,
        ready: Callable[[], None] = lambda: None,
        poll: float = POLL_SECONDS,
        force_polling: bool | None = None,
    ) -> None:
        """Record every outside change to `stores` until `stop` is set: file stores on their
        folder's file events (checked every `poll` seconds as well, for events a network
        file system does not send), databases every `poll` seconds."""
        folders: set[Path] = set()  # where the file events come from
        names: set[str] = set()  # the store files in them (a folder store: every file)
        for store in stores:
            file = getattr(store, "file", None)
            if isinstance(file, Path):
                folders.add(file if file.is_dir() else file.parent)
                names.add("*" if file.is_dir() else file.name)

        def check(store: MemoryStore, first: bool = False) -> None:
            if not first and not store.changed_on_disk():
                return  # a stat for a file; a database's own change counters
            try:
                store.reload()
            except MemtuiError:
                return  # caught mid-write (a writer without atomic rename): the next event
            event = self.catch_up(store)
            if event is not None:
                report(store, event)

        for store in stores:
            check(store, first=True)
        if not folders:
            ready()
            while not stop.wait(poll):
                for store in stores:
                    check(store)
            return
        import watchfiles

        def wanted(_change: watchfiles.Change, path: str) -> bool:
            return "*" in names or Path(path).name in names

        watching = watchfiles.watch(
            *folders,
            watch_filter=wanted,
            stop_event=stop,
            debounce=200,
            step=20,
            rust_timeout=int(poll * 1000),
            yield_on_timeout=True,
            force_polling=force_polling,
            raise_interrupt=False,
            recursive="*" in names,
        )
        ready()
        # on each batch of events, and every `poll` seconds without one (databases, and a
        # file whose event was missed), every store is checked
        for _batch in watching:
            for store in stores:
                check(store)
            if stop.is_set():
                break
