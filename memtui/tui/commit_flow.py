"""How every change reaches the store: asked first (`confirm_commit`, `confirm_change`), then
committed in a thread worker while the screen stays live; undo, redo, rollback and restore are
asked the same way. `MemtuiApp` is built on it."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App
from textual.message import Message
from textual.timer import Timer

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import History, Service
from memtui.stores.file.backups import Backup
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.messages import CommitFailed, CommitStage, Committed, HistoryReady
from memtui.tui.modals import ConfirmScreen, ReasonConfirmScreen, WorkingScreen
from memtui.tui.screen_hooks import FollowsCommits
from memtui.tui.widgets.lineage import LineageScreen
from memtui.views import entry_count, shorten

if TYPE_CHECKING:
    from memtui.tui.screens.home import HomeScreen

WORKING_AFTER = 0.25  # seconds before a running commit shows the working screen

# what the store's commit stages (stores/progress.py) are called on the working screen
STAGE_NAMES = {
    "checking": "checking the entries",
    "preparing": "preparing the changes",
    "backup": "keeping a backup",
    "ledger": "recording it in the ledger",
    "writing": "writing the store",
}


class CommitProgressed(Message):
    """A running commit reached `done` of `total` in `stage` (posted from its worker)."""

    def __init__(self, stage: str, done: int, total: int) -> None:
        super().__init__()
        self.stage = stage
        self.done = done
        self.total = total


class CommitFlow(App[None]):
    """Confirm, commit in a worker, report; the part of the app that changes the store."""

    service: Service
    store: MemoryStore | None

    def __init__(self) -> None:
        super().__init__()
        self.committing: str | None = None  # what a running commit writes ("applying 5 actions")
        self.commit_stage = ""
        self.commit_counts: tuple[int, int] | None = None  # the running stage's done, total
        self.commits_settled = 0  # commits that ended, either way (tests wait on it)
        self.outside_change = False
        self.read_only: str | None = None
        self._working_timer: Timer | None = None
        self._commit_started = 0.0

    @property
    def home(self) -> HomeScreen:
        raise NotImplementedError

    def update_status(self) -> None:
        self.home.update_status()

    def check_store(self) -> None:
        """Ask the store (off the UI thread) whether another program changed it: the banner
        says what its fingerprint says, never what a message guessed."""

    # -- asking ---------------------------------------------------------------------------------

    def confirm_commit(
        self,
        title: str,
        body: Text,
        job: Callable[[MemoryStore], Transaction],
        note: Callable[[Transaction], str],
        *,
        close: bool = False,
        working: str = "saving the change",
    ) -> None:
        """Every change goes this way: say what will happen, `y` commits it in a worker (one
        transaction), `n` or `escape` does nothing. `working` says what a commit that takes a
        moment is doing ("applying 20,000 actions")."""
        if self._busy():
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.start_commit(job, note, close, working)

        self.push_screen(ConfirmScreen(title, body), answered)

    def confirm_change(
        self,
        title: str,
        body: Text,
        job: Callable[[MemoryStore, str | None], Transaction],
        note: Callable[[Transaction], str],
        *,
        close: bool = False,
        working: str = "saving the change",
    ) -> None:
        """`confirm_commit` with an optional reason for the ledger, typed in the question."""
        if self._busy():
            return

        def answered(reason: str | None) -> None:
            if reason is not None:
                self.start_commit(partial(_with_reason, job, reason or None), note, close, working)

        self.push_screen(ReasonConfirmScreen(title, body), answered)

    def _busy(self) -> bool:
        if self.committing is None:
            return False
        self.notify(f"memtui is {self.committing}; wait for it to end.", severity="warning")
        return True

    # -- committing -----------------------------------------------------------------------------

    def start_commit(
        self,
        job: Callable[[MemoryStore], Transaction],
        note: Callable[[Transaction], str],
        close: bool,
        working: str,
    ) -> None:
        """Run the commit in a worker; one that takes more than a moment shows what it does,
        its stage and the time it has taken, and the screen stays live."""
        self.committing = working
        self.commit_stage = "starting"
        self.commit_counts = None
        self._commit_started = time.monotonic()
        self._working_timer = self.set_timer(WORKING_AFTER, partial(self._show_working, working))
        self.run_commit(job, note, close)

    def _show_working(self, working: str) -> None:
        self._working_timer = None
        if self.committing == working and not isinstance(self.screen, WorkingScreen):
            what = working[:1].upper() + working[1:]
            screen = WorkingScreen(what, self.commit_stage, self.commit_counts)
            screen.started = self._commit_started
            self.push_screen(screen)

    def _end_commit(self) -> None:
        self.commits_settled += 1
        self.committing = None
        if self._working_timer is not None:
            self._working_timer.stop()
            self._working_timer = None
        if isinstance(self.screen, WorkingScreen):
            self.pop_screen()

    @work(thread=True, exclusive=True, group="commit", exit_on_error=False)
    def run_commit(
        self,
        job: Callable[[MemoryStore], Transaction],
        note: Callable[[Transaction], str],
        close: bool,
    ) -> None:
        store = self.store
        if store is None:
            self.post_message(CommitFailed("the store is not open"))
            return
        self.post_message(CommitStage("writing: a backup, the store file, the ledger"))
        try:
            tx = job(store)
        except MemtuiError as e:
            self.post_message(CommitFailed(str(e)))
            return
        self.post_message(CommitStage("written; reading the ledger again"))
        self.post_message(Committed(tx, note(tx), close))
        self.post_history(self.build_history(store))

    def build_history(self, store: MemoryStore) -> History | str:
        """The ledger's images for the detail pane (or why the ledger cannot be read); the
        store's ids indexed too (here, off the UI thread), so a merge preview allocates its
        id at once."""
        self.service.merges.taken_ids(store)
        try:
            return self.service.history.of(store)
        except MemtuiError as e:
            return f"the ledger cannot be read: {e}"

    def post_history(self, history: History | str) -> None:
        if isinstance(history, str):
            self.post_message(CommitFailed(history))
        else:
            self.post_message(HistoryReady(history))

    def commit_progress(self, stage: str, done: int, total: int) -> None:
        """Where the running commit is: called by the store on the commit's worker thread."""
        self.post_message(CommitProgressed(stage, done, total))

    def on_commit_stage(self, message: CommitStage) -> None:
        self.commit_stage = message.stage
        self.commit_counts = None
        for screen in self.screen_stack:
            if isinstance(screen, WorkingScreen):
                screen.set_stage(message.stage)

    def on_commit_progressed(self, message: CommitProgressed) -> None:
        if self.committing is None:
            return  # a late report of a commit that ended
        self.commit_stage = STAGE_NAMES.get(message.stage, message.stage)
        self.commit_counts = (message.done, message.total)
        for screen in self.screen_stack:
            if isinstance(screen, WorkingScreen):
                screen.set_progress(self.commit_stage, message.done, message.total)

    def on_committed(self, message: Committed) -> None:
        self._end_commit()
        # the commit read the store as it is (a rebase included): nothing outside is pending
        self.outside_change = False
        self.check_store()
        if message.close and len(self.screen_stack) > 1:
            self.pop_screen()
        for screen in self.screen_stack[1:]:
            if isinstance(screen, FollowsCommits):
                screen.store_changed()
        store = self.store
        if store is not None:
            self.home.committed(message.transaction, store)
        self.notify(message.note, title="Done")

    def on_commit_failed(self, message: CommitFailed) -> None:
        if self.committing is not None:
            self._end_commit()
        else:
            self.commits_settled += 1
        self.notify(
            one_line(message.problem), title="Nothing was changed", severity="error", timeout=10
        )
        self.check_store()

    # -- undo, rollback, restore ----------------------------------------------------------------

    def action_undo(self) -> None:
        store = self.store
        if store is None:
            self.notify("The store is not open.", severity="warning")
            return
        undone = store.undone()
        target = next(
            (t for t in store.history() if t.id not in undone and t.undoes is None and t.changes),
            None,
        )
        if target is None:
            self.notify("Nothing to undo.", severity="warning")
            return
        self.request_undo(target)

    def request_undo(self, tx: Transaction) -> None:
        store = self.store
        if store is None:
            return
        if tx.id in store.undone():
            self.notify(f"#{tx.id} is already undone.", severity="warning")
            return
        try:
            later = self.service.history.later_changes(store, tx.id)
        except MemtuiError as e:
            self.notify(one_line(str(e)), title="Not undone", severity="warning")
            return
        if later:
            self.request_undo_with_later(tx, later)
            return
        verb = "Redo" if tx.undoes is not None else "Undo"
        body = Text(f"{verb} #{tx.id} ({tx.kind}): ", style="bold")
        body.append(one_line(tx.reason))
        body.append(
            f"\n\n{_undo_effect(tx)} This is itself a transaction, with a backup, and can be "
            "undone."
        )

        def job(store: MemoryStore) -> Transaction:
            return self.service.history.undo(store, tx.id, progress=self.commit_progress)

        self.confirm_commit(
            f"{verb}?",
            body,
            job,
            lambda t: f"{verb} done: transaction {t.id} reverts #{tx.id}.",
            working=f"{verb.lower()}ing #{tx.id} ({entry_count(len(tx.changes))})",
        )

    def request_undo_with_later(self, tx: Transaction, later: list[Transaction]) -> None:
        """`tx` cannot be undone alone (later transactions changed its entries since): name
        them and offer undoing them all together, as one transaction."""
        group = [*later, tx]
        names = _ids(group)
        body = Text(f"#{tx.id} cannot be undone alone: ", style="bold")
        body.append(
            f"{_ids(later)} changed the same entries since, and undoing #{tx.id} alone would "
            "overwrite them.\n\n"
        )
        for t in group:
            body.append(f"#{t.id} {t.kind}: ", style="bold")
            body.append(shorten(one_line(t.reason), 70) + "\n")
        body.append(
            f"\nUndo {names} together: every entry they touched goes back to how it was before "
            f"#{tx.id}. One transaction, with a backup; it can be undone."
        )

        def job(store: MemoryStore) -> Transaction:
            return self.service.history.undo_with_later(store, tx.id, progress=self.commit_progress)

        self.confirm_commit(
            f"Undo {names} together?",
            body,
            job,
            lambda t: f"Undo done: transaction {t.id} reverts {names}.",
            working=f"undoing {names}",
        )

    def request_rollback(self, backup: Backup) -> None:
        body = Text(f"Roll back to {backup.name}", style="bold")
        body.append(
            "\n\nThe store's entries become what that backup holds, as one new transaction "
            "(the current file is backed up first); it can be undone."
        )

        def job(store: MemoryStore) -> Transaction:
            return self.service.history.rollback(store, backup.name, progress=self.commit_progress)

        self.confirm_commit(
            "Roll back?",
            body,
            job,
            lambda t: f"Rolled back to {backup.name} (transaction {t.id}).",
            working=f"rolling back to {backup.name}",
        )

    def request_restore(self, memory: Memory) -> None:
        body = Text("Bring back ")
        body.append(one_line(memory.id), style="bold")
        body.append(
            f" ({memory.status.value}). If it was merged, every member of that merge comes "
            "back and the merged entry is removed. One transaction, kept in the ledger, "
            "with a backup; it can be undone."
        )

        def job(store: MemoryStore) -> Transaction:
            return self.service.merges.restore(store, memory.id)

        self.confirm_commit(
            "Restore?",
            body,
            job,
            lambda tx: f"Restored: {tx.reason}. Transaction {tx.id}; u undoes it.",
            close=isinstance(self.screen, LineageScreen),
        )


def _with_reason(
    job: Callable[[MemoryStore, str | None], Transaction], reason: str | None, store: MemoryStore
) -> Transaction:
    return job(store, reason)


def _ids(txs: list[Transaction]) -> str:
    names = [f"#{t.id}" for t in txs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _undo_effect(tx: Transaction) -> str:
    """What undoing `tx` does to the entries: those it changed or removed come back as they
    were, those it created go."""
    created = sum(1 for c in tx.changes if c.before is None)
    back = len(tx.changes) - created
    parts = []
    if back:
        parts.append(
            f"{entry_count(back)} {'goes' if back == 1 else 'go'} back to how "
            f"{'it was' if back == 1 else 'they were'} before it"
        )
    if created:
        parts.append(
            f"the {entry_count(created)} it created {'is' if created == 1 else 'are'} removed"
        )
    said = "; ".join(parts)
    return said[:1].upper() + said[1:] + "."
