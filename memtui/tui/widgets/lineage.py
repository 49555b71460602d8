"""The lineage view: an entry's superseded / merged chain as a tree, both directions, with
the time, actor and reason of each link; restore from here."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree

from memtui.model import STATUS_SYMBOL, Memory, Status
from memtui.textsafe import one_line
from memtui.times import format_iso
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.widgets.lists import MemtuiTree
from memtui.views import shorten

if TYPE_CHECKING:
    from memtui.service import Lineage


def _label(memory: Memory | None, ident: str, *, this: bool = False) -> Text:
    if memory is None:
        return Text(f"? {one_line(ident)} (not found)", style="dim")
    label = Text(f"{STATUS_SYMBOL[memory.status]} ", style="bold" if this else "")
    label.append(shorten(one_line(memory.content), 70), style="bold" if this else "")
    label.append(f"  {one_line(ident)} · {memory.status.value}", style="dim")
    return label


def _link_text(chain: Lineage, older: str, newer: str) -> Text:
    """When, by whom and why `older` was replaced by `newer`."""
    record = chain.records.get(older)
    for event in reversed(chain.events):
        if older in event["memory_ids"] and (
            event["tx"] is not None or newer in event["memory_ids"]
        ):
            when = (event["at"] or "")[:19].replace("T", " ")
            who = "source data" if event["tx"] is None else f"#{event['tx']} {event['actor']}"
            why = one_line(event["reason"] or "")
            said = f": {why}" if why else " (no reason recorded)"
            return Text(f"{when}  {who} {event['kind']}{said}", style="dim")
    if record is not None and record.superseded_at is not None:
        return Text(f"{(format_iso(record.superseded_at) or '')[:19]}  source data", style="dim")
    return Text("when and why unknown", style="dim")


class LineageScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Lineage"
    AUTO_FOCUS = "#lineage-tree"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("LineageScreen")
    DEFAULT_CSS = """
    LineageScreen Tree { height: 1fr; padding: 0 1; }
    LineageScreen #lineage-title { padding: 0 1; background: $panel; }
    """

    def __init__(self, chain: Lineage) -> None:
        super().__init__()
        self.chain = chain

    def compose(self) -> ComposeResult:
        chain = self.chain
        title = Text("Lineage of ", style="bold")
        title.append(one_line(chain.id))
        title.append(
            f"  · replaces {len(chain.supersedes)}, replaced by {len(chain.superseded_by)}"
            "  · r restores the highlighted entry",
            style="dim",
        )
        yield Static(title, id="lineage-title")
        tree = MemtuiTree(
            _label(chain.records.get(chain.id), chain.id, this=True),
            data=chain.id,
            id="lineage-tree",
        )
        tree.root.expand()
        newer = tree.root.add(Text("replaced by (newer)", style="bold"), data=None, expand=True)
        older_ident = chain.id
        for ident in chain.superseded_by:
            node = newer.add(_label(chain.records.get(ident), ident), data=ident, expand=True)
            node.add_leaf(_link_text(chain, older_ident, ident), data=None)
            older_ident = ident
        if not chain.superseded_by:
            newer.add_leaf(Text("nothing: this is the current version", style="dim"), data=None)
        older = tree.root.add(Text("replaces (older)", style="bold"), data=None, expand=True)
        for ident in chain.supersedes:
            record = chain.records.get(ident)
            node = older.add(_label(record, ident), data=ident, expand=True)
            successor = (
                record.superseded_by if record is not None and record.superseded_by else chain.id
            )
            node.add_leaf(_link_text(chain, ident, successor), data=None)
        if not chain.supersedes:
            older.add_leaf(Text("nothing: it replaced no entry", style="dim"), data=None)
        yield tree
        yield Footer(compact=True, show_command_palette=False)

    def action_restore(self) -> None:
        tree = self.query_one("#lineage-tree", Tree)
        node = tree.cursor_node
        ident = node.data if node is not None else None
        if ident is None:
            self.notify("Highlight an entry to restore.", severity="warning")
            return
        record = self.chain.records.get(ident)
        if record is None or record.status is Status.ACTIVE:
            self.notify(f"{one_line(ident)} is active: nothing to restore.", severity="warning")
            return
        host(self).request_restore(record)
