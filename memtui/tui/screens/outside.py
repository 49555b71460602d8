"""What the agent changed since you last looked: each outside change with its before and after;
`r` brings back what the agent removed or rewrote (the marked entries, or the highlighted one)
as one undoable transaction."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError
from memtui.service import Service
from memtui.service.outside import AGENT, OutsideChange, SinceLooked
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.times import format_iso
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.widgets.diff import record_change
from memtui.tui.widgets.lists import MemtuiList
from memtui.views import shorten

__all__ = [
    "OutsideScreen",
    "OutsideSeen",
    "SinceLooked",
    "announce",
    "is_outside",
    "look",
    "request_event_restore",
    "tx_name",
    "with_outside_events",
]

_STYLE = {"added": "green", "changed": "yellow", "removed": "red"}


class OutsideSeen(Message):
    """What the agent changed since the person last looked (read when the store opened)."""

    def __init__(self, since: SinceLooked | None) -> None:
        super().__init__()
        self.since = since


def look(service: Service, store: MemoryStore) -> OutsideSeen:
    """Record the agent's changes and mark that the person looked (off the UI thread)."""
    try:
        return OutsideSeen(service.outside.look(store))
    except (MemtuiError, OSError):
        return OutsideSeen(None)  # the record cannot be kept: the store opens all the same


def announce(app: App[Any], since: SinceLooked | None) -> None:
    if since is not None and since.changes:
        app.notify(
            f"{since.line}. Press g to see them.",
            title="The agent's changes",
            timeout=15,
            markup=False,
        )


def is_outside(tx: Transaction) -> bool:
    """An outside event (the agent's change) among memtui's transactions."""
    return tx.actor == AGENT


def tx_name(tx: Transaction) -> str:
    """ "#12" for memtui's transactions, "a3" for the agent's events."""
    return f"a{tx.id}" if is_outside(tx) else f"#{tx.id}"


def with_outside_events(
    service: Service, store: MemoryStore, history: list[Transaction]
) -> list[Transaction]:
    """memtui's transactions (newest first) with the agent's outside events among them."""
    try:
        outside = service.outside
        outside.catch_up(store)
        events = outside.events(store, archived=True)
    except (MemtuiError, OSError):
        return history
    merged = [*history, *events]
    merged.sort(key=lambda t: (t.at, not is_outside(t)), reverse=True)
    return merged


def request_event_restore(screen: Screen[Any], service: Service, event: Transaction) -> None:
    """Ask, then bring back what one outside event removed or rewrote."""
    chosen = [
        OutsideChange(c.id, c.before, c.after, c.before_raw, c.position, event.at, event.id)
        for c in event.changes
        if c.before is not None
    ]
    if not chosen:
        screen.notify("The agent only added entries here: nothing to bring back.")
        return
    _confirm_restore(screen, service, chosen)


def change_label(c: OutsideChange, marked: bool, back: bool = False) -> Text:
    label = Text("● " if marked else "  ", style="bold")
    label.append(f"{c.kind:<8}", style=_STYLE[c.kind])
    if back:
        label.append("brought back  ", style="dim")
    label.append(f"{shorten(one_line(c.id), 22):<23}", style="bold")
    image = c.after if c.after is not None else c.before
    label.append(shorten(one_line(str((image or {}).get("content", ""))), 60))
    return label


def change_detail(c: OutsideChange) -> Text:
    text = Text(f"{c.id}: {c.kind} by the agent", style="bold")
    text.append(f"  (event a{c.event}, {format_iso(c.at.replace(microsecond=0))})\n\n", "dim")
    text.append_text(record_change(c.before_memory(), c.after_memory()))
    if c.before is not None:
        text.append("\n\nr brings back the entry as it was before.", style="dim")
    return text


class OutsideScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "The agent's changes"
    AUTO_FOCUS = "#list"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("OutsideScreen")
    DEFAULT_CSS = """
    OutsideScreen #title { background: $panel; padding: 0 1; }
    OutsideScreen #body { height: 1fr; }
    OutsideScreen #list { width: 1fr; }
    OutsideScreen #detail { width: 1fr; border-left: solid $panel; padding: 0 1; }
    """

    def __init__(self, store: MemoryStore, service: Service, since: SinceLooked | None) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.since = since
        self.showing_all = since is None
        self.changes: list[OutsideChange] = list(since.changes) if since else []
        self.marked: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="body"):
            yield MemtuiList(id="list")
            yield VerticalScroll(Static(id="detail-body"), id="detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        if self.showing_all:
            self.read_all()
        else:
            self.show_list()

    def store_changed(self) -> None:
        """Called by the app after a commit: the restored entries are the store's again."""
        self.marked.clear()
        self.read_all() if self.showing_all else self.show_list()

    @work(thread=True, exclusive=True, group="outside", exit_on_error=False)
    def read_all(self) -> None:
        try:
            changes = self.service.outside.changes(self.store)
        except MemtuiError as e:
            self.app.call_from_thread(self.notify, str(e), severity="error")
            return
        self.app.call_from_thread(self._show_all, changes)

    def _show_all(self, changes: list[OutsideChange]) -> None:
        self.changes = changes
        self.show_list()

    def show_list(self) -> None:
        options = self.query_one("#list", OptionList)
        keep = options.highlighted
        options.clear_options()
        for c in self.changes:
            label = change_label(c, c.id in self.marked, self._back(c))
            options.add_option(Option(label, id=c.id))
        title = Text()
        if self.showing_all:
            title.append(f"every change the agent made: {len(self.changes)}", style="bold")
        elif self.since is not None:
            title.append(self.since.line, style="bold")
        title.append(" · space marks · r restores · A all / since you looked", style="dim")
        self.query_one("#title", Static).update(title)
        body = self.query_one("#detail-body", Static)
        if not self.changes:
            body.update(
                Text("The agent changed nothing here. A shows all the record holds.", style="dim")
            )
        elif options.option_count:
            options.highlighted = min(keep or 0, options.option_count - 1)
        options.focus()

    def _back(self, c: OutsideChange) -> bool:
        """Whether the store holds the entry as it was before this change (restored)."""
        before = c.before_memory()
        return before is not None and self.store.find(c.id) == self.store.visible(before)

    @on(OptionList.OptionHighlighted, "#list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        change = self._selected()
        if change is not None:
            self.query_one("#detail-body", Static).update(change_detail(change))

    def _selected(self) -> OutsideChange | None:
        options = self.query_one("#list", OptionList)
        if options.highlighted is None or not self.changes:
            return None
        return self.changes[options.highlighted]

    def action_mark(self) -> None:
        change = self._selected()
        if change is None:
            return
        self.marked ^= {change.id}
        self.show_list()

    def action_toggle_all(self) -> None:
        self.showing_all = not self.showing_all
        if self.showing_all:
            self.read_all()
        else:
            self.changes = list(self.since.changes) if self.since else []
            self.show_list()

    def action_restore(self) -> None:
        chosen = [c for c in self.changes if c.id in self.marked]
        if not chosen:
            selected = self._selected()
            chosen = [selected] if selected is not None else []
        chosen = [c for c in chosen if c.before is not None]
        if not chosen:
            self.notify(
                "Highlight (or mark) an entry the agent removed or rewrote; what it added has "
                "nothing earlier to bring back.",
                severity="warning",
            )
            return
        _confirm_restore(self, self.service, chosen)


def _confirm_restore(screen: Screen[Any], service: Service, chosen: list[OutsideChange]) -> None:
    body = Text("Bring back ")
    body.append(f"{len(chosen)} entr{'y' if len(chosen) == 1 else 'ies'}", style="bold")
    body.append(
        f" as {'it was' if len(chosen) == 1 else 'they were'} before the agent changed "
        f"{'it' if len(chosen) == 1 else 'them'}: "
        + ", ".join(one_line(c.id) for c in chosen[:5])
        + (" …" if len(chosen) > 5 else "")
        + ". One transaction, kept in the ledger, with a backup; it can be undone."
    )
    outside = service.outside

    def job(store: MemoryStore) -> Transaction:
        return outside.restore_changes(store, chosen)

    host(screen).confirm_commit(
        "Restore the agent's changes?",
        body,
        job,
        lambda tx: f"{tx.reason}. Transaction {tx.id}; u undoes it.",
    )
