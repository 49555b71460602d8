"""The memtui app: the memory table (home), the detail pane, lineage, help, themes and the
command palette. Every store access runs in a thread worker that posts a typed message."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.dom import DOMNode
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Static
from textual.worker import Worker, WorkerState

from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.service import Backup, History, Service, Settings, Store, Transaction
from memtui.textsafe import one_line
from memtui.tui.calibration_screen import CalibrationScreen
from memtui.tui.clusters_screen import ClustersScreen
from memtui.tui.commands import MemtuiCommands, PaletteCommand
from memtui.tui.decay_screen import DecayScreen
from memtui.tui.detail import DetailPane
from memtui.tui.entry_form import EntryFormScreen
from memtui.tui.failures import GuardedHandlers, formatted, one_line_report
from memtui.tui.history_screen import HistoryScreen
from memtui.tui.host import MemtuiHost, host
from memtui.tui.label_screen import LabelScreen
from memtui.tui.lineage import LineageScreen
from memtui.tui.memory_table import MemoryTable
from memtui.tui.merge_screen import MergeScreen
from memtui.tui.messages import (
    CommitFailed,
    CommitStage,
    Committed,
    HaystackReady,
    HistoryReady,
    LineageReady,
    OutsideChange,
    StoreFailed,
    StoreReady,
)
from memtui.tui.plan_screen import PlanScreen
from memtui.tui.screens import (
    ConfirmScreen,
    FilterScreen,
    HelpScreen,
    ReasonConfirmScreen,
    WorkingScreen,
)
from memtui.tui.table_model import COLUMNS, QuickFilters, TableModel, build_haystack
from memtui.tui.themes import DEFAULT_THEME, load_themes
from memtui.views import entries, shorten


class MemtuiApp(GuardedHandlers, App[None]):
    TITLE = "memtui"
    CSS_PATH = "memtui.tcss"
    COMMANDS: ClassVar = {MemtuiCommands}  # Textual's system commands included
    ENABLE_COMMAND_PALETTE = True
    start_screen: str | None = None  # "label": `memtui label STORE` opens on it
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Leave memtui"),
        Binding(
            "question_mark", "help", "Help", id="app.help", tooltip="Every key and what it does"
        ),
        Binding(
            "u",
            "undo",
            "Undo",
            show=False,
            id="store.undo",
            tooltip="Undo the newest transaction (asks first)",
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            show=False,
            id="store.reload",
            tooltip="Read the store again (after an outside change)",
        ),
    ]

    def __init__(
        self,
        store_path: str,
        settings: Settings | None = None,
        *,
        now: datetime | None = None,
        watch_interval: float = 3.0,
        config_path: Path | None = None,
        hint: str | None = None,
        service: Service | None = None,
    ) -> None:
        super().__init__()
        self.store_path = store_path
        self.settings = settings or Settings()
        self.service = service or Service(self.settings, clock=self.now)
        self.shown_location = self.service.shown_location(store_path)  # never a password
        self.fixed_now = now
        self.watch_interval = watch_interval
        self.config_path = config_path
        self.hint = hint
        self.store: Store | None = None
        self.history: History | None = None
        self.model = TableModel([], self.now())
        self.outside_change = False
        self.load_problem: str | None = None
        self.theme_problems: list[str] = []
        self.detail_choice: bool | None = None  # None: by terminal width
        self.commits_settled = 0  # commits that ended, either way (tests wait on it)
        self.exit_code = 0  # 1 once the store failed to open: the process says so
        self.errors_reported = 0  # exceptions shown as one line (the monkey test reads it)
        self._fatal_line = ""
        self._saved_theme = ""  # the theme the config file holds (or memtui started with)
        self._detail_timer: Timer | None = None
        self._frozen = False  # gc.freeze() once, after the first load
        self._switch_interval = sys.getswitchinterval()
        self.committing: str | None = None  # what a running commit writes ("applying 5 actions")
        self._working_timer: Timer | None = None
        self.commit_stage = ""
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)

    def now(self) -> datetime:
        return self.fixed_now or datetime.now(UTC)

    async def _on_key(self, event: events.Key) -> None:
        # (Textual calls App._on_key after this one unless the default is prevented)
        focused = self.focused
        if isinstance(focused, Input) and event.is_printable:
            # an input stops the text it takes: this key was queued for another widget before
            # a key (`/`) moved focus to the input, so it is the input's text, not a command
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))

    # -- leaving ------------------------------------------------------------------------------

    def _unsaved(self, screens: list[Screen[object]]) -> list[str]:
        found = []
        for screen in screens:
            unsaved = getattr(screen, "unsaved", None)
            what = unsaved() if unsaved is not None else None
            if what:
                found.append(what)
        return found

    def leave_screen(self, screen: Screen[Any]) -> None:
        """Close `screen`; when it holds work not yet applied or saved, ask first."""

        def leave(yes: bool | None = True) -> None:
            if yes and self.screen is screen:
                self.pop_screen()

        lost = self._unsaved([screen])
        if not lost:
            leave()
            return
        body = Text("Leaving drops " + "; ".join(lost) + ".")
        self.push_screen(ConfirmScreen("Leave without saving?", body), leave)

    async def action_quit(self) -> None:
        if isinstance(self.screen, (ConfirmScreen, ReasonConfirmScreen)):
            return  # a question is open: y or n first
        if self.committing is not None:
            self.notify(
                f"memtui is {self.committing}; q again once it is done.", severity="warning"
            )
            return
        lost = self._unsaved(self.screen_stack)
        if not lost:
            self.exit(return_code=self.exit_code)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit(return_code=self.exit_code)

        body = Text("Quitting drops " + "; ".join(lost) + ".")
        self.push_screen(ConfirmScreen("Quit without saving?", body), answered)

    # -- bugs ---------------------------------------------------------------------------------

    def report_error(self, error: BaseException) -> None:
        """An exception escaped a handler that can go on: one line on screen, the traceback
        in the log."""
        self.errors_reported += 1
        line = one_line_report(error, self.service.log_error(formatted(error)))
        self.notify(line, title="Bug", severity="error", timeout=30, markup=False)

    async def _dispatch_action(self, namespace: DOMNode, action_name: str, params: Any) -> bool:
        try:
            return await super()._dispatch_action(namespace, action_name, params)
        except Exception as error:
            self.report_error(error)
            return True

    def _handle_exception(self, error: Exception) -> None:
        # Textual ends the app here (the loop that raised cannot go on): say it in one line
        self._fatal_line = one_line_report(error, self.service.log_error(formatted(error)))
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        self.bell()
        self._exit_renderables.append(Text(self._fatal_line))
        self._close_messages_no_wait()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "commit" and event.state is WorkerState.ERROR:
            self._end_commit()  # a commit that raised has ended too

    @property
    def home(self) -> Screen[object]:
        """The memory table's screen, whatever is on top of it."""
        return self.screen_stack[0]

    # -- layout -------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return HomeScreen()

    def fit_detail(self) -> None:
        if self.detail_choice is None:
            self.home.query_one(DetailPane).display = self.size.width >= 100

    def action_toggle_detail(self) -> None:
        pane = self.home.query_one(DetailPane)
        self.detail_choice = not pane.display
        pane.display = self.detail_choice
        if pane.display:
            self._show_detail(self.home.query_one(MemoryTable).current)

    def on_mount(self) -> None:
        # workers (planning, loading) share the GIL with the UI: hand it over more often while
        # the app runs (given back when it ends)
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(0.001)
        themes, problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        self.theme_problems = [f"{p.file}: {p.problem}" for p in problems]
        wanted = self.settings.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self.theme = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            self.theme_problems.append(f"theme {wanted!r} is unknown; using {self.theme}")
        self._saved_theme = self.theme
        for problem in self.theme_problems:
            self.notify(problem, title="Theme", severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.sub_title = self.shown_location
        if self.watch_interval > 0:
            self.set_interval(self.watch_interval, self.check_outside)

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)

    def home_ready(self) -> None:
        """The table screen is on: read the store."""
        self.home.query_one("#table").display = False
        self.fit_detail()
        self.load_store(reloaded=False)
        self.update_status()

    # -- workers ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="store", exit_on_error=False)
    def load_store(self, reloaded: bool) -> None:
        try:
            store = self.service.open(self.store_path)
        except MemtuiError as e:
            self.post_message(StoreFailed(self.shown_location, str(e)))
            return
        memories = store.memories()
        self.post_message(StoreReady(store, memories, reloaded))
        # what `/` searches, ready before the first keystroke
        self.post_message(HaystackReady(memories, build_haystack(memories)))
        self.read_history(store)

    def read_history(self, store: Store) -> None:
        try:
            self.post_message(HistoryReady(self.service.history(store)))
        except MemtuiError as e:
            self.post_message(CommitFailed(f"the ledger cannot be read: {e}"))

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def check_outside(self) -> None:
        store = self.store
        if store is not None and not self.outside_change and store.changed_on_disk():
            self.post_message(OutsideChange())

    @work(thread=True, exclusive=True, group="lineage", exit_on_error=False)
    def load_lineage(self, memory_id: str) -> None:
        store = self.store
        if store is None:
            return
        try:
            self.post_message(LineageReady(self.service.lineage(store, memory_id)))
        except MemtuiError as e:
            self.post_message(CommitFailed(str(e)))

    def confirm_commit(
        self,
        title: str,
        body: Text,
        job: Callable[[Store], Transaction],
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
        job: Callable[[Store, str | None], Transaction],
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

    def start_commit(
        self,
        job: Callable[[Store], Transaction],
        note: Callable[[Transaction], str],
        close: bool,
        working: str,
    ) -> None:
        """Run the commit in a worker; one that takes more than a moment shows what it does,
        its stage and the time it has taken, and the screen stays live."""
        self.committing = working
        self.commit_stage = "starting"
        self._working_timer = self.set_timer(0.25, partial(self._show_working, working))
        self.run_commit(job, note, close)

    def _show_working(self, working: str) -> None:
        self._working_timer = None
        if self.committing == working and not isinstance(self.screen, WorkingScreen):
            self.push_screen(WorkingScreen(working[:1].upper() + working[1:], self.commit_stage))

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
        self, job: Callable[[Store], Transaction], note: Callable[[Transaction], str], close: bool
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
        self.read_history(store)

    # -- messages -----------------------------------------------------------------------------

    @on(StoreReady)
    def _store_ready(self, message: StoreReady) -> None:
        self.store = message.store
        self.outside_change = False
        self.load_problem = None
        self.exit_code = 0
        self.model.now = self.now()
        self._show_entries(message.memories)
        self.home.query_one("#message").display = False
        self.home.query_one(MemoryTable).display = True
        self.sub_title = f"{message.store.path} · {message.store.format_name}"
        if not message.reloaded:
            self.home.query_one(MemoryTable).focus()
            if self.start_screen == "label":
                self.action_label()
            if len(message.store) == 0:
                self.notify(
                    self.hint or "This store is empty. `memtui demo` opens a realistic one.",
                    title="Empty store",
                    timeout=10,
                )
        else:
            self.notify(f"Reloaded {len(message.store):,} entries.", title="Store")
        self.update_status()

    def _show_entries(self, memories: list[Memory]) -> None:
        """New entries in the table, the cursor kept on the entry it was on."""
        table = self.home.query_one(MemoryTable)
        keep = table.current.id if table.current else None
        self.model.load(memories)
        table.refresh_view(keep)

    @on(HaystackReady)
    def _haystack_ready(self, message: HaystackReady) -> None:
        self.model.offer_haystack(message.memories, message.haystack)
        if not self._frozen:
            # the first store's records live as long as the app: one freeze keeps the cyclic
            # collector's full passes off them (bench/tui_bench.py); later loads are not frozen
            gc.freeze()
            self._frozen = True

    @on(StoreFailed)
    def _store_failed(self, message: StoreFailed) -> None:
        self.load_problem = message.problem
        text = Text("memtui could not open the store\n\n", style="bold")
        text.append(one_line(message.problem))
        text.append(
            "\n\nNothing was changed. Fix the file (or pick another) and press ctrl+r, "
            "or q to quit.",
            style="dim",
        )
        widget = self.home.query_one("#message", Static)
        widget.update(text)
        widget.display = True
        self.home.query_one(MemoryTable).display = False
        self.home.query_one("#filter", Input).display = False
        self.home.set_focus(None)  # keys go to the screen: q quits, ctrl+r reloads
        self.exit_code = 1
        self.update_status()

    @on(HistoryReady)
    def _history_ready(self, message: HistoryReady) -> None:
        self.history = message.history
        self._show_detail(self.home.query_one(MemoryTable).current)

    @on(OutsideChange)
    def _outside_change(self) -> None:
        if self.outside_change:
            return
        self.outside_change = True
        self.notify(
            "Another program changed the store. Press ctrl+r to reload; memtui will not "
            "overwrite that change.",
            title="Changed on disk",
            severity="warning",
            timeout=8,
        )
        self.update_status()

    @on(LineageReady)
    def _lineage_ready(self, message: LineageReady) -> None:
        self.push_screen(LineageScreen(message.chain))

    @on(CommitStage)
    def _commit_stage(self, message: CommitStage) -> None:
        self.commit_stage = message.stage
        for screen in self.screen_stack:
            if isinstance(screen, WorkingScreen):
                screen.set_stage(message.stage)

    @on(Committed)
    def _committed(self, message: Committed) -> None:
        self._end_commit()
        if message.close and len(self.screen_stack) > 1:
            self.pop_screen()
        for screen in self.screen_stack[1:]:
            changed = getattr(screen, "store_changed", None)
            if changed is not None:
                changed()
        # marks were for a change to these entries: once changed, they are spent
        self.model.marked -= set(message.transaction.memory_ids)
        store = self.store
        if store is not None:
            self._show_entries(store.memories())
        self.notify(message.note, title="Done")
        self.update_status()

    @on(CommitFailed)
    def _commit_failed(self, message: CommitFailed) -> None:
        if self.committing is not None:
            self._end_commit()
        else:
            self.commits_settled += 1
        self.notify(
            one_line(message.problem), title="Nothing was changed", severity="error", timeout=10
        )
        if "changed since" in message.problem:
            self.outside_change = True
            self.update_status()

    @on(MemoryTable.Highlighted)
    def _highlighted(self, message: MemoryTable.Highlighted) -> None:
        # while the cursor flies (page-down held), the table repaints at once and the detail
        # pane follows when it stops
        if self._detail_timer is not None:
            self._detail_timer.stop()
        memory = message.memory
        self._detail_timer = self.set_timer(0.12, lambda: self._show_detail(memory))

    @on(MemoryTable.ViewChanged)
    def _view_changed(self) -> None:
        self.update_status()

    def _show_detail(self, memory: Memory | None) -> None:
        if not self.screen_stack:  # a timer that fires while the app closes
            return
        pane = self.home.query_one(DetailPane)
        if pane.display:
            pane.show(memory, self.now(), self.history)

    # -- filter -------------------------------------------------------------------------------

    def action_filter(self) -> None:
        if self._needs_store() is None:
            return
        box = self.home.query_one("#filter", Input)
        box.display = True
        # now, not after the keys already queued: they are the filter's text
        self.home.set_focus(box)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        table = self.home.query_one(MemoryTable)
        keep = table.current.id if table.current else None
        self.model.set_query(event.value)
        table.refresh_view(keep)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.home.query_one(MemoryTable).focus()

    def action_clear_filter(self) -> None:
        """escape: the filter first, then every mark."""
        box = self.home.query_one("#filter", Input)
        if box.display or self.model.query:
            box.value = ""
            box.display = False
            self.home.query_one(MemoryTable).focus()
        elif self.model.marked:
            count = len(self.model.marked)
            self.model.marked.clear()
            self.home.query_one(MemoryTable).refresh_view()
            self.notify(f"{count:,} marks cleared.", timeout=3)

    def action_quick_filters(self) -> None:
        def chosen(filters: QuickFilters | None) -> None:
            if filters is not None:
                self.apply_filters(filters)

        self.push_screen(FilterScreen(self.model), chosen)

    def apply_filters(self, filters: QuickFilters) -> None:
        table = self.home.query_one(MemoryTable)
        keep = table.current.id if table.current else None
        self.model.set_filters(filters)
        table.refresh_view(keep)

    def action_toggle_hidden(self) -> None:
        f = self.model.filters
        self.apply_filters(
            QuickFilters(f.statuses, f.user, f.category, f.source, not f.show_hidden)
        )
        shown = "shown" if self.model.filters.show_hidden else "hidden"
        self.notify(f"Merged, superseded and deleted entries are {shown}.", timeout=3)

    # -- entry actions ------------------------------------------------------------------------

    def action_lineage(self) -> None:
        memory = self.home.query_one(MemoryTable).current
        if memory is None:
            self.notify("No entry highlighted.", severity="warning")
            return
        self.load_lineage(memory.id)

    def request_restore(self, memory: Memory) -> None:
        body = Text("Bring back ")
        body.append(one_line(memory.id), style="bold")
        body.append(
            f" ({memory.status.value}). If it was merged, every member of that merge comes "
            "back and the merged entry is removed. One transaction, kept in the ledger, "
            "with a backup; it can be undone."
        )

        def job(store: Store) -> Transaction:
            return self.service.restore(store, memory.id)

        self.confirm_commit(
            "Restore?",
            body,
            job,
            lambda tx: f"Restored: {tx.reason}. Transaction {tx.id}; u undoes it.",
            close=isinstance(self.screen, LineageScreen),
        )

    # -- one entry by hand ----------------------------------------------------------------------

    def _highlighted_entry(self) -> Memory | None:
        if self._needs_store() is None:
            return None
        memory = self.home.query_one(MemoryTable).current
        if memory is None:
            self.notify("No entry highlighted.", severity="warning")
        return memory

    def action_edit(self) -> None:
        store, memory = self.store, self._highlighted_entry()
        if store is None or memory is None:
            return
        current = store.find(memory.id)
        if current is None:
            self.notify(f"{memory.id} is no longer in the store.", severity="warning")
            return
        self.push_screen(EntryFormScreen(store, self.service, current))

    def action_add(self) -> None:
        store = self._needs_store()
        if store is None:
            return
        highlighted = self.home.query_one(MemoryTable).current
        user = highlighted.user_id if highlighted is not None else None
        self.push_screen(EntryFormScreen(store, self.service, None, user=user))

    def action_archive(self) -> None:
        """Archive the entry; on an archived one, make it active again."""
        memory = self._highlighted_entry()
        if memory is not None:
            back = memory.status is Status.ARCHIVED
            self.request_status(memory, Status.ACTIVE if back else Status.ARCHIVED)

    def action_delete(self) -> None:
        memory = self._highlighted_entry()
        if memory is not None:
            self.request_status(memory, Status.DELETED)

    def request_status(self, memory: Memory, status: Status) -> None:
        """Archive, delete or bring back one entry: refused at once, with the reason, where the
        store's format cannot hold it; else asked, with an optional reason."""
        store = self.store
        if store is None:
            return
        current = store.find(memory.id) or memory
        refusal = self.service.status_refusal(store, current, status)
        if refusal:
            self.notify(one_line(refusal), title="Not changed", severity="warning", timeout=8)
            return
        verb = {Status.ARCHIVED: "Archive", Status.DELETED: "Delete"}.get(status, "Unarchive")
        body = Text()
        body.append(f"{verb} {one_line(current.id)}", style="bold")
        body.append(f" ({current.status.value} → {status.value}):\n")
        body.append(shorten(one_line(current.content), 240) + "\n\n")
        if status is Status.DELETED and store.format_name == "pi":
            body.append(
                "pi stores hold active entries only: the entry leaves the file and lives on "
                "in memtui's ledger, from where u (or `memtui restore`) brings it back. "
            )
        elif status is Status.DELETED:
            body.append(
                "A soft delete: the entry stays, hidden (. shows it); l then r restores it. "
            )
        elif status is Status.ARCHIVED:
            body.append("It stays in the store, out of the agent's way; a again unarchives it. ")
        body.append("One transaction with a backup; u undoes it.", style="dim")

        def job(store: Store, reason: str | None) -> Transaction:
            return self.service.set_status(store, current.id, status, reason)

        self.confirm_change(
            f"{verb}?",
            body,
            job,
            lambda tx: f"{verb}d {current.id} (transaction {tx.id}); u undoes it.",
        )

    # -- curating -----------------------------------------------------------------------------

    def _needs_store(self) -> Store | None:
        if self.store is None:
            self.notify("The store is not open.", severity="warning")
        return self.store

    def action_merge(self) -> None:
        store = self._needs_store()
        if store is None:
            return
        marked = [m for m in self.model.memories if m.id in self.model.marked]
        if len(marked) < 2:
            self.notify("Mark two or more entries with space, then press m.", severity="warning")
            return
        self.open_merge(marked, hidden=self.model.marked_hidden())

    def open_merge(self, members: list[Memory], hidden: int = 0) -> None:
        """The merge screen with exactly these entries; `hidden` of them are not on screen."""
        users = sorted({str(m.user_id) for m in members})
        if len(users) > 1:
            self.notify(
                f"Cannot merge entries of different users ({', '.join(users)}): memories "
                "of one user never mix with another's.",
                title="Not merged",
                severity="error",
                timeout=8,
            )
            return
        store = self.store
        if store is None:
            return
        # as the store has them now: a list on screen may predate a merge
        now_in_store = [store.find(m.id) for m in members]
        retired = [
            m.id for m, cur in zip(members, now_in_store, strict=True) if not cur or not cur.visible
        ]
        if retired:
            self.notify(
                one_line(
                    f"{', '.join(retired)} is already merged or superseded; restore it first."
                ),
                title="Not merged",
                severity="warning",
            )
            return
        members = [m for m in now_in_store if m is not None]
        self.push_screen(MergeScreen(store, members, self.service, hidden=hidden))

    def action_plan(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(PlanScreen(store, self.service))

    def action_clusters(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(ClustersScreen(store, self.service))

    def action_label(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(LabelScreen(store, self.service))

    def action_calibration(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(CalibrationScreen(store, self.service))

    def action_decay(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(
                DecayScreen(
                    store,
                    self.home.query_one(MemoryTable).current,
                    self.service,
                )
            )

    def action_history(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.push_screen(HistoryScreen(store))

    def action_undo(self) -> None:
        store = self._needs_store()
        if store is None:
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
        verb = "Redo" if tx.undoes is not None else "Undo"
        body = Text(f"{verb} #{tx.id} ({tx.kind}): ", style="bold")
        body.append(one_line(tx.reason))
        body.append(
            f"\n\n{len(tx.changes)} entries go back to how they were before it. This is "
            "itself a transaction, with a backup, and can be undone."
        )

        def job(store: Store) -> Transaction:
            return self.service.undo(store, tx.id)

        self.confirm_commit(
            f"{verb}?",
            body,
            job,
            lambda t: f"{verb} done: transaction {t.id} reverts #{tx.id}.",
            working=f"{verb.lower()}ing #{tx.id} ({entries(len(tx.changes))})",
        )

    def request_rollback(self, backup: Backup) -> None:
        body = Text(f"Roll back to {backup.name}", style="bold")
        body.append(
            "\n\nThe store's entries become what that backup holds, as one new transaction "
            "(the current file is backed up first); it can be undone."
        )

        def job(store: Store) -> Transaction:
            return self.service.rollback(store, backup.name)

        self.confirm_commit(
            "Roll back?",
            body,
            job,
            lambda t: f"Rolled back to {backup.name} (transaction {t.id}).",
            working=f"rolling back to {backup.name}",
        )

    def action_nothing_prepared(self) -> None:
        self.notify(
            "Nothing is prepared to save here: mark entries (space) and press m to merge, "
            "p to review a plan, u to undo.",
            severity="warning",
        )

    def action_reload(self) -> None:
        self.load_store(reloaded=True)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_sections()))

    def help_sections(self) -> list[tuple[str, list[tuple[str, str, str]]]]:
        keymap = self._keymap

        def rows(bindings: list[BindingType]) -> list[tuple[str, str, str]]:
            out = []
            for binding in bindings:
                assert isinstance(binding, Binding)
                keys = keymap.get(binding.id or "", binding.key).split(",")
                shown = ", ".join(self.get_key_display(Binding(k.strip(), "")) for k in keys)
                out.append((shown, binding.tooltip or binding.description, binding.id or ""))
            return out

        return [
            ("Everywhere", rows(self.BINDINGS)),
            ("The table screen", rows(HomeScreen.BINDINGS)),
            ("Memory table", rows(MemoryTable.BINDINGS)),
            ("Lineage", rows(LineageScreen.BINDINGS)),
            ("Merge", rows(MergeScreen.BINDINGS)),
            ("Plan review", rows(PlanScreen.BINDINGS)),
            ("Clusters", rows(ClustersScreen.BINDINGS)),
            ("Decay", rows(DecayScreen.BINDINGS)),
            ("Labelling pairs (L; the curve: ctrl+p, calibration)", rows(LabelScreen.BINDINGS)),
            ("History", rows(HistoryScreen.BINDINGS)),
            ("Editing or adding an entry", rows(EntryFormScreen.BINDINGS)),
            (
                "Changing the store (the same keys on every screen)",
                [
                    (
                        "ctrl+s",
                        "Show what the screen prepared (a merge, a plan's approved actions, "
                        "an undo, a rollback) and ask",
                        "",
                    ),
                    *rows(ConfirmScreen.BINDINGS),
                    *rows(ReasonConfirmScreen.BINDINGS[2:]),
                ],
            ),
            ("Quick filters", rows(FilterScreen.BINDINGS)),
            ("Command palette", [("ctrl+p", "Commands: store, view, entry, theme", "")]),
        ]

    # -- themes -------------------------------------------------------------------------------

    def set_theme(self, name: str) -> None:
        self.theme = name

    def _theme_changed(self, theme: object) -> None:
        self.update_status()
        if self.theme == self._saved_theme:
            return  # the theme memtui started with: nothing to write
        self._saved_theme = self.theme
        if self.config_path is not None:
            try:
                self.service.save_setting("ui", "theme", self.theme, self.config_path)
            except (OSError, MemtuiError) as e:
                self.notify(f"Could not save the theme: {e}", severity="warning")

    # -- palette and status -------------------------------------------------------------------

    def palette_commands(self) -> list[PaletteCommand]:
        table = self.home.query_one(MemoryTable)
        commands: list[PaletteCommand] = [
            ("store: reload", "Read the store file again", self.action_reload),
            (
                "view: filter as you type",
                "Search content, tags, id and category",
                self.action_filter,
            ),
            ("view: quick filters", "By status, user, category, source", self.action_quick_filters),
            (
                "view: show or hide merged, superseded, deleted",
                "Toggle hidden statuses",
                self.action_toggle_hidden,
            ),
            (
                "view: clear all filters",
                "Show every visible entry",
                lambda: self.apply_filters(QuickFilters()),
            ),
            ("view: help", "Every key and what it does", self.action_help),
            (
                "entry: lineage",
                "The superseded/merged chain of the highlighted entry",
                self.action_lineage,
            ),
            ("entry: mark or unmark", "Mark the highlighted entry", table.action_mark),
            ("entry: edit", "Content, importance, category, tags", self.action_edit),
            ("entry: archive or unarchive", "Asks first; u undoes it", self.action_archive),
            ("entry: delete", "Soft: restorable; asks first", self.action_delete),
            ("entry: add a new memory", "Content, category, importance, user", self.action_add),
            ("entry: merge the marked entries", "Hand-merge", self.action_merge),
            ("store: review a consolidation plan", "Plan, approve, apply", self.action_plan),
            ("store: history, undo and backups", "The ledger", self.action_history),
            ("store: undo the newest change", "Asks first", self.action_undo),
            ("view: clusters of related entries", "At a threshold you move", self.action_clusters),
            ("view: decay curves", "When entries fade below the line", self.action_decay),
            ("store: label pairs", "Same memory or not, for calibration", self.action_label),
            (
                "view: calibration curve",
                "Precision and recall per threshold from the labels",
                self.action_calibration,
            ),
            (
                "view: show or hide the detail pane",
                "The highlighted entry in full",
                self.action_toggle_detail,
            ),
        ]
        for column in COLUMNS:
            name = column.title or "status"
            commands.append(
                (
                    f"view: sort by {name}",
                    f"Sort the table by {name}",
                    partial(table.sort_by, column.key),
                )
            )
        for name in sorted(self.available_themes):
            commands.append(
                (
                    f"theme: {name}",
                    "Switch theme (saved in the config)",
                    partial(self.set_theme, name),
                )
            )
        return commands

    def update_status(self) -> None:
        """One line that fits: a long path shortens to the file name, then the sort and
        theme give way, before anything is cut."""
        status = self.home.query_one("#status", Static)
        width = (status.size.width or self.size.width) - 2  # the padding
        for brief in range(3):
            text = self._status_text(brief)
            if text.cell_len <= width:
                break
        text.truncate(max(1, width), overflow="ellipsis")
        status.update(text)

    def _status_text(self, brief: int) -> Text:
        text = Text()
        if self.outside_change:
            text.append(" changed on disk: ctrl+r reloads ", style="bold reverse")
            text.append(" ")
        store = self.store
        path = Path(self.shown_location if store is None else str(store.path))
        shown_path = one_line(str(path) if brief == 0 else path.name)
        if store is None:
            text.append(shown_path, style="dim")
            text.append(" · failed to open" if self.load_problem else " · opening…")
        else:
            text.append(shown_path, style="bold")
            if brief < 2:
                text.append(f" ({store.format_name})", style="dim")
            text.append(f" · {len(self.model.memories):,} entries · {len(self.model.view):,} shown")
            if self.model.marked:
                text.append(f" · {len(self.model.marked):,} marked", style="bold")
                hidden = self.model.marked_hidden()
                if hidden:
                    text.append(f", {hidden:,} hidden by the filter", style="bold")
        if self.model.query:
            text.append(" · filter ")
            text.append(repr(self.model.query), style="bold")
        described = self.model.filters.describe()
        if described:
            text.append(f" · {one_line(described)}", style="bold")
        arrow = "↓" if self.model.descending else "↑"
        sort_name = next((c.title or "status" for c in COLUMNS if c.key == self.model.sort_key), "")
        if brief < 2:
            text.append(f" · sort {sort_name}{arrow}", style="dim")
        if brief < 1:
            text.append(f" · theme {self.theme}", style="dim")
        return text


class HomeScreen(GuardedHandlers, Screen[None]):
    """The memory table with the detail pane: where memtui starts."""

    AUTO_FOCUS = ""  # the table takes focus once the store is open, nothing before
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "app.filter", "Filter", id="view.filter", tooltip="Filter as you type"),
        Binding(
            "f",
            "app.quick_filters",
            "Filters",
            show=False,
            id="view.quick_filters",
            tooltip="Filter by status, user, category, source",
        ),
        Binding(
            "full_stop",
            "app.toggle_hidden",
            "Hidden",
            show=False,
            id="view.hidden",
            tooltip="Show or hide merged, superseded and deleted entries",
        ),
        Binding(
            "l",
            "app.lineage",
            "Lineage",
            show=False,
            id="entry.lineage",
            tooltip="The superseded/merged chain of the entry",
        ),
        Binding("m", "app.merge", "Merge", id="entry.merge", tooltip="Merge the marked entries"),
        Binding("p", "app.plan", "Plan", id="store.plan", tooltip="Review a consolidation plan"),
        Binding(
            "c",
            "app.clusters",
            "Clusters",
            id="view.clusters",
            tooltip="Groups of related entries at a threshold",
        ),
        Binding(
            "d", "app.decay", "Decay", id="view.decay", tooltip="Decay curves and what expires soon"
        ),
        Binding(
            "L",
            "app.label",
            "Label",
            show=False,
            id="store.label",
            tooltip="Label pairs near the merge line as the same memory or not (calibration)",
        ),
        Binding(
            "h",
            "app.history",
            "History",
            id="store.history",
            tooltip="The ledger: undo, redo, backups, rollback",
        ),
        Binding(
            "e",
            "app.edit",
            "Edit",
            show=False,
            id="entry.edit",
            tooltip=("Edit the entry: content, importance, category, tags"),
        ),
        Binding(
            "a",
            "app.archive",
            "Archive",
            show=False,
            id="entry.archive",
            tooltip="Archive the entry (on an archived one: make it active again)",
        ),
        Binding(
            "x,delete",
            "app.delete",
            "Delete",
            show=False,
            id="entry.delete",
            tooltip="Delete the entry (soft: restorable, and u undoes it)",
        ),
        Binding(
            "plus,n",
            "app.add",
            "Add",
            show=False,
            id="entry.add",
            tooltip="Write a new entry: content, category, importance, user",
        ),
        Binding(
            "v",
            "app.toggle_detail",
            "Detail",
            show=False,
            id="view.detail",
            tooltip="Show or hide the detail pane (hidden at first below 100 columns)",
        ),
        Binding(
            "ctrl+s",
            "app.nothing_prepared",
            "Save",
            show=False,
            id="view.nothing_prepared",
            tooltip="Here nothing is prepared: says how to prepare a change",
        ),
        Binding(
            "escape",
            "app.clear_filter",
            "Clear",
            show=False,
            id="view.clear_filter",
            tooltip="Clear the filter; pressed again (or with no filter), clear every mark",
        ),
    ]

    def compose(self) -> ComposeResult:
        app = self.app
        assert isinstance(app, MemtuiApp)
        yield Header(show_clock=False, icon="◈")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter: content, tags, id, category", id="filter")
                yield Static(Text(f"opening {app.shown_location} …"), id="message")
                yield MemoryTable(app.model, id="table")
            yield DetailPane(id="detail")
        yield Static(id="status")
        # the keys that fit 80 columns; ? lists every key, ctrl+p every command
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        host(self).home_ready()

    def on_resize(self) -> None:
        host(self).fit_detail()
        host(self).update_status()


def _with_reason(
    job: Callable[[Store, str | None], Transaction], reason: str | None, store: Store
) -> Transaction:
    return job(store, reason)


def _implements_the_host(app: MemtuiApp) -> MemtuiHost:
    return app  # mypy checks here that the app offers what the screens ask of it
