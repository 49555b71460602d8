"""Small screens: confirmation (with an optional reason), the commit in progress, help and quick
filters."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import ClassVar, TypeVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Label, ProgressBar, Select, Static

from memtui.model import Status
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.widgets.table_model import QuickFilters, TableModel

SETTLE = 0.5  # seconds without a key before a question takes an answer (see `Question`)


R = TypeVar("R")


class Question(ModalScreen[R]):
    """A question that ignores the keys of typing that was under way when it opened: until
    `settle` seconds pass without a key, every key but escape is dropped (and restarts the
    wait), so the rest of a word typed elsewhere never answers it. People read a question
    for longer than that; a typist's keys come closer together (5 to 12 a second). The app
    asks `swallows` before a key goes anywhere (app.py)."""

    settle: ClassVar[float] = SETTLE
    armed = False
    _arm_timer: Timer | None = None

    def on_mount(self) -> None:
        self._wait()

    def _wait(self) -> None:
        if self._arm_timer is not None:
            self._arm_timer.stop()
        if self.settle <= 0:
            self.armed = True
            return
        self._arm_timer = self.set_timer(self.settle, self._arm)

    def _arm(self) -> None:
        self._arm_timer = None
        self.armed = True

    def swallows(self, key: str, gap: float = math.inf) -> bool:
        """True when `key` came too soon to be an answer (the wait starts again): before the
        question was quiet for `settle`, or less than `settle` after the key before it (`gap`,
        between the times the keys were read: keys typed together and handled late, on a
        busy machine, still count as typed together). A key that comes while an answer is
        held (`hold`) drops that answer too: both were one burst."""
        held = self._held is not None
        if held:
            self._drop_held()
        if key == "escape" or self.settle <= 0 or (self.armed and gap >= self.settle and not held):
            return False
        if self.is_mounted:
            self._wait()
            if key in ("y", "enter", "space") or held:
                self.app.bell()  # an answer came too soon: it was not taken
        return True

    _held: Timer | None = None

    def hold(self, deliver: Callable[[], object], burst: float) -> bool:
        """An answer is taken only when no key follows it within `burst` seconds (it was not
        the first key of a word typed at the question): True when it is held for that long
        before `deliver` runs."""
        if self.settle <= 0 or burst <= 0:
            return False
        self._held = self.set_timer(burst, lambda: self._deliver(deliver))
        return True

    def _deliver(self, deliver: Callable[[], object]) -> None:
        self._held = None
        deliver()

    def _drop_held(self) -> None:
        if self._held is not None:
            self._held.stop()
            self._held = None


class ConfirmScreen(GuardedHandlers, Question[bool]):
    """Says what will happen; `y` or enter on Yes does it, `n` or `escape` does not."""

    AUTO_FOCUS = "#yes"
    HELP_TITLE = "Changing the store: the question"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("ConfirmScreen")
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 72; max-width: 95%; height: auto; max-height: 95%;
        border: thick $primary; background: $surface; padding: 1 2; }
    ConfirmScreen #body { height: auto; max-height: 50vh; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            # the body scrolls when it is long: the buttons stay on screen at 80x24
            yield VerticalScroll(Static(self.body), id="body", can_focus=False)
            with Horizontal():
                yield Button("No (n)", id="no")
                yield Button("Yes (y)", id="yes", variant="primary")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class ReasonConfirmScreen(GuardedHandlers, Question["str | None"]):
    """A confirmation that takes an optional reason for the ledger. It opens without a text
    box: `y` or enter on Yes answers ("" for no reason), `n` or `escape` does not; `r` opens the
    reason box, where every letter types (`y` and `n` too), enter moves to Yes and a second
    enter on Yes answers with the reason."""

    AUTO_FOCUS = "#yes"
    HELP_TITLE = "Changing the store: a question with a reason"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("ReasonConfirmScreen")
    DEFAULT_CSS = """
    ReasonConfirmScreen { align: center middle; }
    ReasonConfirmScreen > Vertical { width: 72; max-width: 95%; height: auto; max-height: 95%;
        border: thick $primary; background: $surface; padding: 1 2; }
    ReasonConfirmScreen #body { height: auto; max-height: 40vh; }
    ReasonConfirmScreen Input { margin-top: 1; display: none; }
    ReasonConfirmScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ReasonConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield VerticalScroll(Static(self.body), id="body")
            yield Input(placeholder="reason for the ledger; enter, then enter on Yes", id="reason")
            with Horizontal():
                yield Button("No (n)", id="no")
                yield Button("Reason (r)", id="why")
                yield Button("Yes (y)", id="yes", variant="primary")

    def _reason(self) -> str:
        return self.query_one("#reason", Input).value.strip()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(self._reason() if yes else None)

    def action_reason(self) -> None:
        box = self.query_one("#reason", Input)
        box.display = True
        box.focus()
        self.query_one("#yes", Button).label = "Yes (enter)"
        self.query_one("#no", Button).label = "No (esc)"

    def on_input_submitted(self) -> None:
        # enter ends the reason, it does not answer: Yes takes a second, deliberate enter
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "why":
            self.action_reason()
        else:
            self.action_answer(event.button.id == "yes")


class WorkingScreen(ModalScreen[None]):
    """A commit in progress: what is written, the stage it is at and the time it has taken. The
    bar is indeterminate until the store reports a stage with counts (`set_progress`)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("WorkingScreen")

    DEFAULT_CSS = """
    WorkingScreen { align: center middle; }
    WorkingScreen > Vertical { width: 64; max-width: 95%; height: auto; border: thick $primary;
        background: $surface; padding: 1 2; }
    WorkingScreen ProgressBar { margin: 1 0; }
    """

    def __init__(
        self, what: str, stage: str = "starting", counts: tuple[int, int] | None = None
    ) -> None:
        super().__init__()
        self.what = what
        self.stage = stage
        self.counts = counts  # the stage's done and total, once the store reports them
        self.started = time.monotonic()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.what + "…", style="bold"), id="what")
            yield ProgressBar(total=None, show_eta=False, id="bar")
            yield Static(id="stage")

    def on_mount(self) -> None:
        if self.counts is not None:
            self.set_progress(self.stage, *self.counts)
        self.show_stage()
        self.set_interval(0.2, self.show_stage)

    def set_stage(self, stage: str) -> None:
        self.stage = stage
        self.show_stage()

    def set_progress(self, stage: str, done: int, total: int) -> None:
        """A stage with counts: the bar shows `done` of `total`."""
        self.counts = (done, total)
        self.stage = f"{stage}: {done:,} of {total:,}" if total > 1 else stage
        for bar in self.query("#bar").results(ProgressBar):
            bar.update(total=max(total, 1), progress=done if total else 1)
        self.show_stage()

    def show_stage(self) -> None:
        elapsed = time.monotonic() - self.started
        text = Text(f"{self.stage} · {elapsed:.1f} s elapsed", style="dim")
        text.append("\nThe screen stays live; the store is written as one transaction.")
        for widget in self.query("#stage").results(Static):
            widget.update(text)


class HelpScreen(GuardedHandlers, ModalScreen[None]):
    """Every binding, with what it does, as the keymap has it now."""

    HELP_TITLE = "This help"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("HelpScreen")
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 98%; height: 90%; border: thick $primary;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, sections: Iterable[tuple[str, list[tuple[str, str, str]]]]) -> None:
        super().__init__()
        self.sections = list(sections)

    def compose(self) -> ComposeResult:
        # a table per section, two columns: what a key does keeps the width, the binding id
        # follows it (dim)
        width = max((len(keys) for _, rows in self.sections for keys, _, _ in rows), default=4)
        tables = []
        for title, rows in self.sections:
            table = Table(
                box=None,
                padding=(0, 1),
                expand=True,
                show_header=False,
                title=Text(title, style="bold underline"),
                title_justify="left",
            )
            table.add_column("keys", style="bold", no_wrap=True, width=min(width, 16))
            table.add_column("does", ratio=1)
            for keys, description, ident in rows:
                does = Text(description)
                if ident:
                    does.append(f"  {ident}", style="dim")
                table.add_row(Text(keys), does)
            tables.append(table)
        note = Text(
            'Remap any key in the config file, e.g. [keymap] "table.mark" = "x". '
            "ctrl+p opens the command palette. Memory text is shown literally.",
            style="dim",
        )
        with VerticalScroll():
            yield Static(Text("memtui keys: what each does (and its binding id)", style="bold"))
            yield Static(Group(*tables))
            yield Static(note)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


_ANY = "__any__"


class FilterScreen(GuardedHandlers, ModalScreen["QuickFilters | None"]):
    """Quick filters by status, user, category and source."""

    HELP_TITLE = "Quick filters"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("FilterScreen")
    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical { width: 64; max-width: 95%; height: auto; border: thick $primary;
        background: $surface; padding: 1 2; }
    FilterScreen Select { margin-bottom: 1; }
    FilterScreen Horizontal { height: auto; align-horizontal: right; }
    FilterScreen Button { margin-left: 2; }
    """

    def __init__(self, model: TableModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        f = self.model.filters
        status_value = (
            _ANY
            if f.statuses is None
            else (
                "all"
                if f.statuses == frozenset(Status)
                else next(iter(f.statuses)).value
                if len(f.statuses) == 1
                else _ANY
            )
        )
        statuses = [
            ("shown by default (no merged, superseded, deleted)", _ANY),
            ("every status", "all"),
        ]
        statuses += [(s.value, s.value) for s in Status]
        with Vertical():
            yield Label(Text("Quick filters", style="bold"))
            yield Select(
                statuses, value=status_value, allow_blank=False, id="status", prompt="status"
            )
            for name in ("user", "category", "source"):
                options = [(f"any {name}", _ANY)] + [(v, v) for v in self.model.choices(name)]
                current = getattr(f, name)
                yield Select(
                    options,
                    value=current if current is not None else _ANY,
                    allow_blank=False,
                    id=name,
                )
            with Horizontal():
                yield Button("Clear", id="clear")
                yield Button("Cancel", id="cancel")
                yield Button("Apply", id="apply", variant="primary")

    def _chosen(self) -> QuickFilters:
        def value(name: str) -> str | None:
            selected = self.query_one(f"#{name}", Select).value
            return None if selected in (_ANY, Select.BLANK) else str(selected)

        status = value("status")
        statuses = (
            None
            if status is None
            else frozenset(Status)
            if status == "all"
            else frozenset({Status(status)})
        )
        return QuickFilters(
            statuses,
            value("user"),
            value("category"),
            value("source"),
            self.model.filters.show_hidden,
        )

    def action_apply(self) -> None:
        self.dismiss(self._chosen())

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "clear":
            self.dismiss(QuickFilters())
        else:
            self.action_cancel()
