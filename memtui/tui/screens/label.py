"""Labelling: one pair of entries at a time, chosen near the profile's merge line (where a
verdict tells most about the threshold); `y` the same memory, `n` not, `s` skip, `u` takes the
last label back, `c` shows the calibration curve. Labels live beside the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import LabelPair, Service
from memtui.stores.protocol import MemoryStore
from memtui.stores.sidecars.labels import Label
from memtui.textsafe import literal, one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.screens.calibration import CalibrationScreen

QUEUE = 200  # pairs chosen at a time


class PairsReady(Message):
    def __init__(self, pairs: list[LabelPair]) -> None:
        super().__init__()
        self.pairs = pairs


@dataclass(frozen=True, slots=True)
class Given:
    """A label made here, and where its pair stands in the queue (for `u`)."""

    label: Label
    at: int


def side_text(name: str, memory: Memory) -> Text:
    text = Text(f"{name}  ", style="bold")
    text.append(one_line(memory.id), style="dim")
    text.append(
        f"\nuser {one_line(memory.user_id or '-')} · {one_line(memory.category)} · "
        f"importance {memory.importance:.2f}\n\n",
        style="dim",
    )
    text.append(literal(memory.content))
    return text


def scores_text(pair: LabelPair) -> Text:
    side = "above" if pair.score >= pair.line else "below"
    text = Text(f"{pair.method} {pair.score:.3f}", style="bold")
    text.append(f" ({side} the merge line {pair.line:g})   ")
    others = [(m, s) for m, s in pair.scores.items() if m != pair.method]
    text.append("  ".join(f"{m} {s:.3f}" for m, s in others), style="dim")
    return text


class LabelScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Labelling pairs (L on the table)"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("LabelScreen")
    DEFAULT_CSS = """
    LabelScreen #label-title { background: $panel; padding: 0 1; height: auto; }
    LabelScreen #pair { height: 1fr; }
    LabelScreen .side { width: 1fr; border: round $panel; padding: 0 1; }
    LabelScreen #scores { height: auto; padding: 0 1; }
    """

    def __init__(self, store: MemoryStore, service: Service) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.queue: list[LabelPair] | None = None
        self.at = 0
        self.given: list[Given] = []

    def compose(self) -> ComposeResult:
        yield Static(id="label-title")
        with Horizontal(id="pair"):
            yield VerticalScroll(Static(id="side-a"), classes="side")
            yield VerticalScroll(Static(id="side-b"), classes="side")
        yield Static(id="scores")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.show_title()
        self.query_one("#side-a", Static).update(Text("choosing pairs…", style="dim"))
        self.choose()

    @work(thread=True, exclusive=True, group="label", exit_on_error=False)
    def choose(self) -> None:
        self.post_message(PairsReady(self.service.labels.pairs_to_label(self.store, QUEUE)))

    @on(PairsReady)
    def _ready(self, message: PairsReady) -> None:
        self.queue = message.pairs
        self.at = 0
        self.show_pair()

    @property
    def current(self) -> LabelPair | None:
        if self.queue is None or self.at >= len(self.queue):
            return None
        return self.queue[self.at]

    def show_title(self) -> None:
        labelled, same = self.service.labels.label_counts(self.store)
        text = Text("Label pairs", style="bold")
        text.append(f"  ·  {labelled} labelled, {same} the same memory", style="bold")
        if self.queue is not None:
            text.append(f"  ·  pair {min(self.at + 1, len(self.queue))} of {len(self.queue)}")
        text.append("  ·  y same, n not, s skip, u undo, c curve", style="dim")
        self.query_one("#label-title", Static).update(text)

    def show_pair(self) -> None:
        self.show_title()
        pair = self.current
        side_a = self.query_one("#side-a", Static)
        side_b = self.query_one("#side-b", Static)
        scores = self.query_one("#scores", Static)
        if pair is None:
            side_a.update(
                Text(
                    "No more pairs to label near the merge line: each is labelled or skipped. "
                    "c shows the curve; escape goes back.",
                    style="dim",
                )
            )
            side_b.update("")
            scores.update("")
            return
        side_a.update(side_text("A", pair.a))
        side_b.update(side_text("B", pair.b))
        scores.update(scores_text(pair))

    def action_verdict(self, same: bool) -> None:
        pair = self.current
        if pair is None:
            self.notify("No pair to label.", severity="warning")
            return
        try:
            label = self.service.labels.label(self.store, [pair.a.id, pair.b.id], same)
        except MemtuiError as e:
            self.notify(one_line(str(e)), severity="error")
            return
        self.given.append(Given(label, self.at))
        self.at += 1
        self.show_pair()

    def action_skip(self) -> None:
        if self.current is not None:
            self.at += 1
            self.show_pair()

    def action_undo(self) -> None:
        if not self.given:
            self.notify("No label made here to take back.", severity="warning")
            return
        last = self.given.pop()
        try:
            self.service.labels.unlabel(self.store, last.label)
        except MemtuiError as e:
            self.notify(one_line(str(e)), severity="error")
            return
        self.at = last.at
        self.show_pair()
        verdict = "the same memory" if last.label.same else "not the same"
        self.notify(f"Took back the label “{verdict}”.", timeout=3)

    def action_curve(self) -> None:
        self.app.push_screen(CalibrationScreen(self.store, self.service))
