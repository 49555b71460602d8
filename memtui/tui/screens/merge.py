"""Hand-merge: the members side by side, the merged record as it will be (by rule, keeping the
base, or in the user's own words), the resulting fields and the lineage; ctrl+s commits."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, ItemGrid, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Label, RadioButton, RadioSet, Static, TextArea

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import Service
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import literal, one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.widgets.editable import shown, typed
from memtui.tui.widgets.provenance_view import wording_text
from memtui.views import entry_count, shorten

STRATEGIES = (
    ("rule", "by rule", "The store profile's rule words the merged text"),
    ("keep-base", "best entry", "Keep the best entry's words as they are"),
    ("own", "my words", "Your own text: edit the merged text below"),
)


def member_card(memory: Memory, now: datetime) -> Text:
    text = Text(one_line(memory.id), style="bold")
    text.append(
        f"\n{memory.source.value} · {memory.category} · importance {memory.importance:.2f}"
        f" · {memory.access_count} uses",
        style="dim",
    )
    if memory.tags:
        text.append(f"\ntags {one_line(', '.join(memory.tags))}", style="dim")
    text.append("\n\n")
    text.append(literal(memory.content))
    return text


def members_fate(kept: bool) -> str:
    """What a merge does with its members, as this store keeps them."""
    if kept:
        return "they stay in the store as merged, and `restore` brings them back"
    return (
        "they leave the store's file (it keeps active entries only) and live on in memtui's "
        "ledger, from where `u` or `restore` brings them back"
    )


def result_text(merged: Memory, retired: list[Memory], kept: bool = True) -> Text:
    text = Text("The merged entry\n", style="bold")
    rows = [
        ("id", merged.id),
        ("category", merged.category),
        ("importance", f"{merged.importance:.3f} (the highest)"),
        ("source", merged.source.value),
        ("uses", f"{merged.access_count} (summed)"),
        ("evidence", str(merged.evidence_count)),
        ("tenured", "yes" if merged.tenured else "no"),
        ("tags", ", ".join(merged.tags) or "-"),
        ("paths", ", ".join(merged.paths) or "-"),
    ]
    for key, value in rows:
        text.append(f"{key:>11} ", style="dim")
        text.append(one_line(value) + "\n")
    text.append("\nLineage\n", style="bold")
    text.append(
        f"{one_line(merged.id)} supersedes {one_line(', '.join(m.id for m in retired))}; "
        f"{members_fate(kept)}.",
        style="dim",
    )
    return text


class Choice(RadioButton):
    """A radio button whose dot says whether it is chosen without colour: ● chosen, ○ not
    (Textual draws ● on every button and tells them apart by colour alone)."""

    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]
        return "●" if self.value else "○"


class MergeScreen(GuardedHandlers, Screen[None]):
    AUTO_FOCUS = "#editor"  # letters type the merged text, never run a command
    PREVIEW_DELAY = 0.15  # seconds of quiet typing before the preview follows the text
    HELP_TITLE = "Merge"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("MergeScreen")
    DEFAULT_CSS = """
    MergeScreen #members { height: 40%; }
    MergeScreen .card { height: auto; border: round $panel; padding: 0 1;
        border-title-color: $text-muted; }
    MergeScreen #lower { height: 1fr; }
    MergeScreen #editor-box { width: 3fr; }
    MergeScreen #result { width: 2fr; border-left: solid $panel; padding: 0 1; }
    MergeScreen TextArea { height: 1fr; }
    MergeScreen RadioSet { width: 100%; layout: horizontal; height: auto; }
    MergeScreen #title { background: $panel; padding: 0 1; }
    """

    def __init__(
        self, store: MemoryStore, members: list[Memory], service: Service, *, hidden: int = 0
    ) -> None:
        super().__init__()
        self.hidden = hidden
        self.store = store
        self.service = service
        self.members = members
        self.now = service.now()
        self.strategy = "rule"
        self.own_text: str | None = None
        self._shown_from = ""  # the wording the editor shows (escaped) when memtui filled it
        self.problem: str | None = None  # why the merge cannot be made as it stands
        self._programmatic = False
        self._preview_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        title = Text(f"Merge {entry_count(len(self.members))}", style="bold")
        if self.hidden:
            title.append(f" ({self.hidden} hidden by the filter)", style="bold yellow")
        user = self.members[0].user_id
        if user:
            title.append(f" of user {one_line(user)}", style="dim")
        title.append(" · ctrl+s merges, escape goes back", style="dim")
        yield Static(title, id="title")
        with VerticalScroll(id="members"), ItemGrid(min_column_width=24, id="cards"):
            # as many side by side as fit; each says which of how many it is
            for n, memory in enumerate(self.members, start=1):
                card = Static(member_card(memory, self.now), classes="card")
                card.border_title = f"{n} of {len(self.members)}"
                yield card
        with Horizontal(id="lower"):
            with Vertical(id="editor-box"):
                with RadioSet(id="strategy"):
                    for key, label, tip in STRATEGIES:
                        button = Choice(label, value=key == "rule", id=f"s-{key}")
                        button.tooltip = tip
                        yield button
                yield Label("The merged text (edit it to use your own words):")
                yield TextArea(id="editor", soft_wrap=True)
            yield VerticalScroll(Static(id="result-body"), id="result")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.refresh_preview()

    def _own_content(self) -> str | None:
        return None if self.own_text is None else typed(self.own_text, self._shown_from)

    def preview(self) -> tuple[Memory, list[Memory]]:
        content = self._own_content() if self.strategy == "own" else None
        strategy = "keep-base" if self.strategy == "keep-base" else "rule"
        return self.service.merges.preview_merge(
            self.store, [m.id for m in self.members], strategy=strategy, content=content
        )

    def refresh_preview(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
            self._preview_timer = None
        body = self.query_one("#result-body", Static)
        try:
            merged, retired = self.preview()
        except MemtuiError as e:
            self.problem = one_line(str(e))
            text = Text("Cannot merge as it stands\n\n", style="bold")
            text.append(self.problem, style="bold red")
            text.append("\n\nctrl+s is off until this is fixed; escape goes back.", style="dim")
            body.update(text)
            self.refresh_bindings()
            return
        self.problem = None
        self.refresh_bindings()
        if self.strategy != "own":
            editor = self.query_one("#editor", TextArea)
            self._programmatic = True
            editor.text = shown(merged.content)
            self._shown_from = merged.content
        wording = self.service.merges.wording_provenance(merged.content, self.members)
        ids = [m.id for m in self.members]
        body.update(
            wording_text(merged.content, wording, ids)
            .append("\n")
            .append_text(
                result_text(merged, retired, self.service.entries.keeps_merged(self.store))
            )
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "commit" and self.problem is not None:
            return None  # shown, greyed out
        return True

    @on(RadioSet.Changed, "#strategy")
    def _strategy(self, event: RadioSet.Changed) -> None:
        self.strategy = (event.pressed.id or "s-rule").removeprefix("s-")
        if self.strategy == "own" and self.own_text is None:
            self.own_text = self.query_one("#editor", TextArea).text
        self.refresh_preview()

    @on(TextArea.Changed, "#editor")
    def _edited(self, event: TextArea.Changed) -> None:
        if self._programmatic:
            self._programmatic = False
            return
        self.own_text = event.text_area.text
        if self.strategy != "own":
            self.strategy = "own"
            self.query_one("#s-own", RadioButton).value = True
        else:
            self.preview_soon()

    def preview_soon(self) -> None:
        """The preview once typing pauses: one per burst of keys, not one per key."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.PREVIEW_DELAY <= 0:
            self.refresh_preview()
            return
        self._preview_timer = self.set_timer(self.PREVIEW_DELAY, self._preview_due)

    def _preview_due(self) -> None:
        self._preview_timer = None
        self.refresh_preview()

    def action_back(self) -> None:
        host(self).leave_screen(self)

    def unsaved(self) -> str | None:
        if self.strategy == "own" and self.own_text:
            return "the merged text in your own words"
        return None

    def action_commit(self) -> None:
        if self.problem is not None:
            self.notify(self.problem, title="Not merged", severity="warning")
            return
        try:
            merged, retired = self.preview()
        except MemtuiError as e:
            self.notify(str(e), severity="error")
            return
        body = Text(f"Merge {entry_count(len(self.members))} into one new entry:\n\n")
        body.append(shorten(one_line(merged.content), 300) + "\n\n", style="bold")
        fate = (
            "the members stay (status merged)"
            if self.service.entries.keeps_merged(self.store)
            else "the members leave the file and live on in memtui's ledger"
        )
        body.append(
            f"{entry_count(len(retired) + 1)} touched, a backup is kept; {fate} and the merge can "
            "be undone."
        )
        ids = [m.id for m in self.members]
        strategy = "keep-base" if self.strategy == "keep-base" else "rule"
        content = self._own_content() if self.strategy == "own" else None

        shown_id = merged.id

        report = host(self).commit_progress

        def job(store: MemoryStore) -> Transaction:
            return self.service.merges.merge(
                store, ids, strategy=strategy, content=content, new_id=shown_id, progress=report
            )

        host(self).confirm_commit(
            "Merge?",
            body,
            job,
            lambda tx: f"Merged {entry_count(len(ids))} (transaction {tx.id}); u undoes it.",
            close=True,
        )
