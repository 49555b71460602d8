"""The home screen: the memory table, the filter, the detail pane and the status bar, and the
keys that act on the highlighted or marked entries. The store itself (open, reload, commits)
is the app's; this screen shows it and asks the app (`host`) to change it."""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Static

from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.bindings import PaletteCommand, bindings_for, palette_commands
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.messages import CommitFailed, LineageReady
from memtui.tui.modals import FilterScreen
from memtui.tui.screens.entry_form import EntryFormScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.outside import OutsideScreen
from memtui.tui.widgets.detail import DetailPane
from memtui.tui.widgets.lineage import LineageScreen
from memtui.tui.widgets.memory_table import MemoryTable
from memtui.tui.widgets.status_line import status_text
from memtui.tui.widgets.table_model import COLUMNS, QuickFilters, TableModel
from memtui.views import counted, shorten


class HomeScreen(GuardedHandlers, Screen[None]):
    """The memory table with the detail pane: where memtui starts."""

    HELP_TITLE = "The table screen"
    AUTO_FOCUS = ""  # the table takes focus once the store is open, nothing before
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("HomeScreen")

    def __init__(self, shown_location: str, model: TableModel) -> None:
        super().__init__()
        self.shown_location = shown_location
        self.model = model
        self.detail_choice: bool | None = None  # None: by terminal width
        self._detail_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◈")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter: content, tags, id, category", id="filter")
                yield Static(Text(f"opening {self.shown_location} …"), id="message")
                yield MemoryTable(self.model, id="table")
            yield DetailPane(id="detail")
        yield Static(id="status")
        # the keys that fit 80 columns; ? lists every key, ctrl+p every command
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(MemoryTable).display = False
        self.fit_detail()
        host(self).home_ready()
        self.update_status()

    def on_resize(self) -> None:
        self.fit_detail()
        self.update_status()

    @property
    def table(self) -> MemoryTable:
        return self.query_one(MemoryTable)

    # -- what the app tells this screen ---------------------------------------------------------

    def show_store(self, store: MemoryStore, memories: list[Memory], reloaded: bool) -> None:
        """The store opened (or was read again): its entries in the table."""
        self.model.now = host(self).now()
        self.show_entries(memories)
        self.query_one("#message").display = False
        self.table.display = True
        if not reloaded:
            self.table.focus()
        self.update_status()

    def show_entries(self, memories: list[Memory]) -> None:
        """New entries in the table, the cursor kept on the entry it was on."""
        keep = self.table.current.id if self.table.current else None
        self.model.load(memories)
        self.table.refresh_view(keep)

    def show_failure(
        self,
        problem: str,
        *,
        title: str = "memtui could not open the store",
        fix: str = "Nothing was changed. Fix the file (or pick another) and press ctrl+r, "
        "or q to quit.",
    ) -> None:
        text = Text(title + "\n\n", style="bold")
        text.append("\n".join(one_line(line) for line in problem.splitlines()))
        text.append("\n\n" + fix, style="dim")
        widget = self.query_one("#message", Static)
        widget.update(text)
        widget.display = True
        self.table.display = False
        self.query_one("#filter", Input).display = False
        self.set_focus(None)  # keys go to the screen: q quits, ctrl+r reloads
        self.update_status()

    def committed(self, tx: Transaction, store: MemoryStore) -> None:
        # marks were for a change to these entries: once changed, they are spent
        self.model.marked -= set(tx.memory_ids)
        self.show_entries(store.memories())
        # the one entry a change wrote (an added memory, a hand merge's result): the cursor goes
        # to it; after a plan that made many, it stays where it was
        made = [c.id for c in tx.changes if c.before is None and c.after is not None]
        if len(made) == 1 and self.model.position_of(made[0]) is not None:
            self.table.refresh_view(made[0])
        self.update_status()

    def history_changed(self) -> None:
        self.show_detail(self.table.current)

    # -- layout ---------------------------------------------------------------------------------

    def fit_detail(self) -> None:
        if self.detail_choice is None:
            self.query_one(DetailPane).display = self.app.size.width >= 100

    def action_toggle_detail(self) -> None:
        pane = self.query_one(DetailPane)
        self.detail_choice = not pane.display
        pane.display = self.detail_choice
        if pane.display:
            self.show_detail(self.table.current)

    @on(MemoryTable.Highlighted)
    def _highlighted(self, message: MemoryTable.Highlighted) -> None:
        # while the cursor flies (page-down held), the table repaints at once and the detail
        # pane follows when it stops
        if self._detail_timer is not None:
            self._detail_timer.stop()
        memory = message.memory
        self._detail_timer = self.set_timer(0.12, lambda: self.show_detail(memory))

    @on(MemoryTable.ViewChanged)
    def _view_changed(self) -> None:
        self.update_status()

    def show_detail(self, memory: Memory | None) -> None:
        if not self.is_attached:  # a timer that fires while the app closes
            return
        pane = self.query_one(DetailPane)
        if pane.display:
            pane.show(memory, host(self).now(), host(self).history)

    def update_status(self) -> None:
        """One line that fits: a long path shortens to the file name, then the sort and
        theme give way, before anything is cut."""
        status = self.query_one("#status", Static)
        app = host(self)
        store = app.store
        path = self.shown_location if store is None else str(store.path)
        width = (status.size.width or self.app.size.width) - 2  # the padding
        for brief in range(3):
            text = status_text(
                self.model,
                store,
                path,
                brief,
                outside_change=app.outside_change,
                failed=app.load_problem is not None,
                theme=self.app.theme,
                where=app.service.stores.change_place(store) if store is not None else "on disk",
                read_only=app.read_only,
            )
            if text.cell_len <= width:
                break
        text.truncate(max(1, width), overflow="ellipsis")
        status.update(text)

    # -- filter ---------------------------------------------------------------------------------

    def _needs_store(self) -> MemoryStore | None:
        store = host(self).store
        if store is None:
            self.notify("The store is not open.", severity="warning")
        return store

    def action_filter(self) -> None:
        if self._needs_store() is None:
            return
        box = self.query_one("#filter", Input)
        box.display = True
        # now, not after the keys already queued: they are the filter's text
        self.set_focus(box)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        keep = self.table.current.id if self.table.current else None
        self.model.set_query(event.value)
        self.table.refresh_view(keep)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_clear_filter(self) -> None:
        """escape: the filter first, then every mark."""
        box = self.query_one("#filter", Input)
        if box.display or self.model.query:
            box.value = ""
            box.display = False
            self.table.focus()
        elif self.model.marked:
            count = len(self.model.marked)
            self.model.marked.clear()
            self.table.refresh_view()
            self.notify(f"{counted(count, 'mark')} cleared.", timeout=3)

    def action_quick_filters(self) -> None:
        def chosen(filters: QuickFilters | None) -> None:
            if filters is not None:
                self.apply_filters(filters)

        self.app.push_screen(FilterScreen(self.model), chosen)

    def apply_filters(self, filters: QuickFilters) -> None:
        keep = self.table.current.id if self.table.current else None
        self.model.set_filters(filters)
        self.table.refresh_view(keep)

    def action_toggle_hidden(self) -> None:
        f = self.model.filters
        self.apply_filters(
            QuickFilters(f.statuses, f.user, f.category, f.source, not f.show_hidden)
        )
        shown = "shown" if self.model.filters.show_hidden else "hidden"
        self.notify(f"Merged, superseded and deleted entries are {shown}.", timeout=3)

    def action_nothing_prepared(self) -> None:
        self.notify(
            "Nothing is prepared to save here: mark entries (space) and press m to merge, "
            "p to review a plan, u to undo.",
            severity="warning",
        )

    # -- one entry ------------------------------------------------------------------------------

    def _highlighted_entry(self) -> Memory | None:
        if self._needs_store() is None:
            return None
        memory = self.table.current
        if memory is None:
            self.notify("No entry highlighted.", severity="warning")
        return memory

    def action_lineage(self) -> None:
        memory = self.table.current
        if memory is None:
            self.notify("No entry highlighted.", severity="warning")
            return
        self.load_lineage(memory.id)

    @work(thread=True, exclusive=True, group="lineage", exit_on_error=False)
    def load_lineage(self, memory_id: str) -> None:
        app = host(self)
        store = app.store
        if store is None:
            return
        try:
            self.post_message(LineageReady(app.service.merges.lineage(store, memory_id)))
        except MemtuiError as e:
            self.app.post_message(CommitFailed(str(e)))

    @on(LineageReady)
    def _lineage_ready(self, message: LineageReady) -> None:
        self.app.push_screen(LineageScreen(message.chain))

    def action_edit(self) -> None:
        store, memory = host(self).store, self._highlighted_entry()
        if store is None or memory is None:
            return
        current = store.find(memory.id)
        if current is None:
            self.notify(f"{memory.id} is no longer in the store.", severity="warning")
            return
        self.app.push_screen(EntryFormScreen(store, host(self).service, current))

    def action_add(self) -> None:
        store = self._needs_store()
        if store is None:
            return
        highlighted = self.table.current
        user = highlighted.user_id if highlighted is not None else None
        self.app.push_screen(EntryFormScreen(store, host(self).service, None, user=user))

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
        app = host(self)
        store = app.store
        if store is None:
            return
        current = store.find(memory.id) or memory
        refusal = app.service.entries.status_refusal(store, current, status)
        if refusal:
            self.notify(one_line(refusal), title="Not changed", severity="warning", timeout=8)
            return
        verb = {Status.ARCHIVED: "Archive", Status.DELETED: "Delete"}.get(status, "Unarchive")
        body = Text()
        body.append(f"{verb} {one_line(current.id)}", style="bold")
        body.append(f" ({current.status.value} → {status.value}):\n")
        body.append(shorten(one_line(current.content), 240) + "\n\n")
        if status is Status.DELETED and not store.traits.holds(status):
            body.append(
                f"{store.format_name} stores hold {store.traits.kept} entries only: the entry "
                "leaves the file and lives on "
                "in memtui's ledger, from where u (or `memtui restore`) brings it back. "
            )
        elif status is Status.DELETED:
            body.append(
                "A soft delete: the entry stays, hidden (. shows it); l then r restores it. "
            )
        elif status is Status.ARCHIVED:
            body.append("It stays in the store, out of the agent's way; a again unarchives it. ")
        body.append("One transaction with a backup; u undoes it.", style="dim")

        def job(store: MemoryStore, reason: str | None) -> Transaction:
            return app.service.entries.set_status(store, current.id, status, reason)

        app.confirm_change(
            f"{verb}?",
            body,
            job,
            lambda tx: f"{verb}d {current.id} (transaction {tx.id}); u undoes it.",
        )

    # -- curating -------------------------------------------------------------------------------

    def action_merge(self) -> None:
        if self._needs_store() is None:
            return
        marked = [m for m in self.model.memories if m.id in self.model.marked]
        if len(marked) < 2:
            self.notify("Mark two or more entries with space, then press m.", severity="warning")
            return
        host(self).open_merge(marked, hidden=self.model.marked_hidden())

    def action_plan(self) -> None:
        from memtui.tui.screens.plan import PlanScreen  # loads the engine: on first use

        store = self._needs_store()
        if store is not None:
            self.app.push_screen(PlanScreen(store, host(self).service))

    def action_clusters(self) -> None:
        from memtui.tui.screens.clusters import ClustersScreen  # loads the engine: on first use

        store = self._needs_store()
        if store is not None:
            self.app.push_screen(ClustersScreen(store, host(self).service))

    def action_decay(self) -> None:
        from memtui.tui.screens.decay import DecayScreen  # loads the engine: on first use

        store = self._needs_store()
        if store is not None:
            self.app.push_screen(DecayScreen(store, self.table.current, host(self).service))

    def action_label(self) -> None:
        from memtui.tui.screens.label import LabelScreen  # loads the engine: on first use

        store = self._needs_store()
        if store is not None:
            self.app.push_screen(LabelScreen(store, host(self).service))

    def action_calibration(self) -> None:
        from memtui.tui.screens.calibration import (
            CalibrationScreen,
        )  # loads the engine: on first use

        store = self._needs_store()
        if store is not None:
            self.app.push_screen(CalibrationScreen(store, host(self).service))

    def action_history(self) -> None:
        store = self._needs_store()
        if store is not None:
            self.app.push_screen(HistoryScreen(store, host(self).service))

    def action_outside(self) -> None:
        store = self._needs_store()
        if store is not None:
            since = getattr(self.app, "since_looked", None)
            self.app.push_screen(OutsideScreen(store, host(self).service, since))

    # -- the command palette --------------------------------------------------------------------

    def palette_commands(self) -> list[PaletteCommand]:
        """What the palette offers for the table: its keys (bindings.py), then sorting by
        each column, clearing every filter and the calibration curve, which have no key."""
        table = self.table
        commands = [
            *palette_commands(self.app, self, "HomeScreen"),
            *palette_commands(self.app, table, "MemoryTable"),
            (
                "view: clear all filters",
                "Show every visible entry",
                lambda: self.apply_filters(QuickFilters()),
            ),
            (
                "view: calibration curve",
                "Precision and recall per threshold from the labels",
                self.action_calibration,
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
        return commands
