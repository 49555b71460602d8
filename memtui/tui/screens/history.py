"""History: the ledger's transactions with their before and after, undo and redo from here;
the rolling backups with rollback."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError
from memtui.service import Service
from memtui.stores.file.backups import Backup
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.times import format_iso
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.messages import CommitFailed, LedgerRead
from memtui.tui.screens.outside import (
    is_outside,
    request_event_restore,
    tx_name,
    with_outside_events,
)
from memtui.tui.widgets.diff import record_change, recorded_change
from memtui.tui.widgets.lists import MemtuiList
from memtui.views import counted, entry_count, shorten


def transaction_label(tx: Transaction, undone_by: int | None) -> Text:
    label = Text(f"{tx_name(tx):<5}", style="bold red" if is_outside(tx) else "bold")
    label.append(
        f"{(format_iso(tx.at.replace(microsecond=0)) or '')[:19].replace('T', ' ')} ", style="dim"
    )
    label.append(f"{tx.actor:<5} {tx.kind:<9} {entry_count(len(tx.changes)):<11} ")
    label.append(shorten(one_line(tx.reason), 60))
    if undone_by:
        label.append(f"  undone by #{undone_by}", style="italic yellow")
    return label


def transaction_detail(tx: Transaction, undone_by: int | None) -> Text:
    text = Text(f"{tx_name(tx)} {tx.kind}", style="bold")
    text.append(f"  by {tx.actor} at {format_iso(tx.at.replace(microsecond=0))}\n", style="dim")
    text.append(one_line(tx.reason) + "\n", style="bold")
    if tx.undoes:
        text.append(f"undoes #{tx.undoes}\n", style="dim")
    if undone_by:
        text.append(f"undone by #{undone_by}\n", style="yellow")
    if tx.backup:
        text.append(f"backup {tx.backup}\n", style="dim")
    if not tx.changes:
        text.append("\nNo entries changed (the store was created here).", style="dim")
    for change in tx.changes[:100]:
        text.append("\n")
        before, after = change.before_memory(), change.after_memory()
        if before is None and after is None:
            text.append_text(recorded_change(change.id, change.diff))
        else:
            text.append_text(record_change(before, after))
        text.append("\n")
    if len(tx.changes) > 100:
        text.append(f"\n… and {len(tx.changes) - 100} more entries", style="dim")
    return text


class HistoryScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "History"
    AUTO_FOCUS = "#list"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("HistoryScreen")
    DEFAULT_CSS = """
    HistoryScreen #title { background: $panel; padding: 0 1; }
    HistoryScreen #body { height: 1fr; }
    HistoryScreen #list { width: 1fr; }
    HistoryScreen #detail { width: 1fr; border-left: solid $panel; padding: 0 1; }
    """

    def __init__(self, store: MemoryStore, service: Service) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.showing_backups = False
        self.reading = True  # the ledger is being read (not `loading`: Textual's overlay)
        self.transactions: list[Transaction] = []
        self.backups: list[Backup] = []
        self.undone: dict[int, int] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("loading the ledger…", style="bold"), id="title")
        with Horizontal(id="body"):
            yield MemtuiList(id="list")
            yield VerticalScroll(Static(id="detail-body"), id="detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reload()

    def store_changed(self) -> None:
        """Called by the app after a commit."""
        self.reload()

    def reload(self) -> None:
        """Read the ledger and the backups again, off the UI thread."""
        self.reading = True
        self.query_one("#title", Static).update(Text("loading the ledger…", style="bold"))
        self.read_ledger()

    @work(thread=True, exclusive=True, group="ledger", exit_on_error=False)
    def read_ledger(self) -> None:
        try:
            transactions = with_outside_events(self.service, self.store, self.store.history())
            undone = self.store.undone()
            backups = self.service.history.backups(self.store)
        except MemtuiError as e:
            self.app.post_message(CommitFailed(f"the ledger cannot be read: {e}"))
            return
        self.post_message(LedgerRead(transactions, undone, backups))

    @on(LedgerRead)
    def _ledger_read(self, message: LedgerRead) -> None:
        self.reading = False
        self.transactions = message.transactions
        self.undone = message.undone
        self.backups = message.backups
        self.show_list()

    def show_list(self) -> None:
        options = self.query_one("#list", OptionList)
        options.clear_options()
        title = Text()
        if self.showing_backups:
            title.append(f"{len(self.backups)} backups", style="bold")
            title.append(
                " · ctrl+s rolls back to the highlighted one · b shows transactions", style="dim"
            )
            for n, backup in enumerate(self.backups):
                label = Text(f"{n + 1:>3}  {backup.name}  ", style="bold")
                label.append(
                    f"{backup.size:,} bytes · before transaction {backup.tx_id}", style="dim"
                )
                options.add_option(Option(label, id=backup.name))
        else:
            title.append(counted(len(self.transactions), "transaction"), style="bold")
            title.append(
                " · u undoes the highlighted one (an undo: redoes) · b shows backups", style="dim"
            )
            for tx in self.transactions:
                undone_by = None if is_outside(tx) else self.undone.get(tx.id)
                options.add_option(Option(transaction_label(tx, undone_by), id=tx_name(tx)))
        self.query_one("#title", Static).update(title)
        if options.option_count:
            options.highlighted = 0  # the newest: after a commit, the one just made
        options.focus()

    @on(OptionList.OptionHighlighted, "#list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        body = self.query_one("#detail-body", Static)
        if self.showing_backups:
            backup = next((b for b in self.backups if b.name == event.option.id), None)
            if backup is not None:
                kept = format_iso(backup.at.replace(microsecond=0))
                body.update(
                    Text(
                        f"{backup.name}\nkept at {kept} before "
                        f"transaction {backup.tx_id}\n{backup.size:,} bytes\n\nRolling back "
                        "makes the store's entries what this file holds, as a new "
                        "transaction you can undo.",
                        style="",
                    )
                )
            return
        tx = self._selected()
        if tx is not None:
            undone_by = None if is_outside(tx) else self.undone.get(tx.id)
            body.update(transaction_detail(tx, undone_by))

    def _selected(self) -> Transaction | None:
        options = self.query_one("#list", OptionList)
        if options.highlighted is None or self.showing_backups:
            return None
        return self.transactions[options.highlighted]

    def action_toggle_backups(self) -> None:
        self.showing_backups = not self.showing_backups
        if not self.reading:
            self.show_list()

    def action_undo(self) -> None:
        tx = self._selected()
        if tx is None:
            self.notify("Highlight a transaction.", severity="warning")
            return
        if is_outside(tx):
            request_event_restore(self, self.service, tx)
            return
        host(self).request_undo(tx)

    def action_commit(self) -> None:
        if not self.showing_backups:
            self.action_undo()
            return
        options = self.query_one("#list", OptionList)
        if options.highlighted is None:
            return
        backup = self.backups[options.highlighted]
        host(self).request_rollback(backup)
