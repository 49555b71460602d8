"""Decay: the highlighted entry's importance over the coming days under the store's model, with
the archive/expiry line and the day it crosses it, next to the same entry under the other
models; and store-wide, how soon entries cross the line and which go within the horizon (enter
on one shows its curve)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from memtui.engine.decay import MODELS as DECAY_MODELS
from memtui.engine.decay import DecayModel
from memtui.engine.profiles import Profile
from memtui.model import Memory, Status
from memtui.service import Service
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.widgets.chart import ChartData, ChartView, Series, histogram
from memtui.tui.widgets.lists import MemtuiList
from memtui.views import entry_count, shorten

HORIZONS = (7, 14, 30, 60, 90, 180, 365)
STYLES = {
    "pi": "bold magenta",
    "longterm": "bold cyan",
    "halflife": "bold green",
    "ebbinghaus": "bold yellow",
}
SHOWN = 200  # entries listed that cross the line
BINS = ((0, "already"), (7, "≤ 1 week"), (30, "≤ 1 month"), (90, "≤ 3 months"), (365, "≤ 1 year"))


def crossing_text(day: float | None) -> str:
    """When an entry falls below the line, said the same everywhere (the bins say "already")."""
    if day is None:
        return "never"
    if day <= 0:
        return "already"
    if day < 0.05:
        return "< 0.1d"  # not "0.0d", which reads as "already"
    return f"{day:.1f}d" if day < 100 else f"{day:.0f}d"


COUNTED = {
    "pi": "from the last decay",
    "longterm": "from the last use",
    "halflife": "half-life 30 to 365 days by importance",
    "ebbinghaus": "stability 5 days × (1 + uses)",
}


def model_label(decay: DecayModel, profile: Profile, *, primary: bool) -> str:
    """A model's name in the chart: the store's own is named by its profile (a native store's
    `default` profile decays like the Go system, but it is not a longterm store)."""
    if not primary:
        return decay.name
    rate = f" ×{decay.rate:g}/day" if decay.name in ("pi", "longterm") else ""
    return f"{profile.name} profile{rate}"


def model_description(decay: DecayModel, profile: Profile) -> str:
    """One line on the store's own model: the profile, the model, its rate, its clock."""
    rate = f" ×{decay.rate:g}/day" if decay.name in ("pi", "longterm") else ""
    return (
        f"this store's profile {profile.name}: {decay.name} decay{rate}, "
        f"{COUNTED.get(decay.name, '')}"
    ).rstrip(", ")


def line_of(profile: Profile) -> float:
    return profile.archive_line if profile.archive_line is not None else profile.expire_below


def curve_points(
    decay: DecayModel, memory: Memory, now: datetime, days: int
) -> list[tuple[float, float]]:
    steps = max(2, min(days, 120))
    return [
        (d * days / steps, decay.value_at(memory, now, d * days / steps)) for d in range(steps + 1)
    ]


def entry_chart(
    memory: Memory, profile: Profile, models: list[DecayModel], now: datetime, days: int
) -> tuple[ChartData, Text]:
    """The entry's curve under every model, the store's own (`models[0]`) first."""
    primary = models[0]
    line = line_of(profile)
    data = ChartData(x_max=float(days), y_max=max(1.0, memory.importance), x_unit="d")
    for decay in models:
        label = model_label(decay, profile, primary=decay is primary)
        data.series.append(
            Series(label, curve_points(decay, memory, now, days), STYLES[decay.name])
        )
    data.lines.append((line, f"line {line:g}", "bold red"))
    crossing = primary.crossing_day(memory, now, line)
    if crossing is not None and crossing <= days:
        data.marks.append((crossing, f"crosses in {crossing:.1f} d", "red"))
    summary = Text(shorten(one_line(memory.content), 100) + "\n", style="bold")
    summary.append(model_description(primary, profile) + "\n", style="dim")
    # one short row per model: it fits beside the chart at 80 columns
    summary.append(f"{'':>10} {'now':>4} {f'{days}d':>4} {'cross':>6}\n", style="dim")
    for decay in models:
        when = decay.crossing_day(memory, now, line)
        text = crossing_text(when)
        name = profile.name if decay is primary else decay.name
        summary.append(f"{name:>10} ", style=STYLES[decay.name])
        summary.append(
            f"{decay.value_at(memory, now):.2f} {decay.value_at(memory, now, days):.2f} {text:>6}\n"
        )
    summary.append(f"cross: days until below {line:g}\n", style="dim")
    return data, summary


@dataclass(frozen=True, slots=True)
class StoreDecay:
    horizon: int
    bins: list[tuple[str, int]]
    going: list[tuple[float, Memory]]


class StoreDecayReady(Message):
    def __init__(self, result: StoreDecay) -> None:
        super().__init__()
        self.result = result


def store_decay(
    memories: list[Memory], profile: Profile, decay: DecayModel, now: datetime, horizon: int
) -> StoreDecay:
    line = line_of(profile)
    counts: Counter[str] = Counter()
    going = []
    for memory in memories:
        if memory.status is not Status.ACTIVE:
            continue
        day = decay.crossing_day(memory, now, line)
        if day is None:
            counts["never"] += 1
            continue
        label = next((name for limit, name in BINS if day <= limit), "> 1 year")
        counts[label] += 1
        if day <= horizon:
            going.append((day, memory))
    going.sort(key=lambda g: g[0])
    order = [name for _, name in BINS] + ["> 1 year", "never"]
    return StoreDecay(horizon, [(name, counts[name]) for name in order if counts[name]], going)


class DecayScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Decay"
    AUTO_FOCUS = "#going-list"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("DecayScreen")
    DEFAULT_CSS = """
    DecayScreen #entry { height: 60%; }
    DecayScreen #chart { width: 3fr; padding: 0 1; }
    DecayScreen #entry-summary { width: 2fr; border-left: solid $panel; padding: 0 1; }
    DecayScreen #store { height: 1fr; border-top: solid $panel; }
    DecayScreen #bins { width: 2fr; padding: 0 1; }
    DecayScreen #going { width: 3fr; border-left: solid $panel; padding: 0 1; }
    DecayScreen #going-list { height: 1fr; border: none; padding: 0; text-wrap: nowrap;
        text-overflow: ellipsis; }
    DecayScreen #going-title { height: auto; }
    """

    def __init__(self, store: MemoryStore, memory: Memory | None, service: Service) -> None:
        super().__init__()
        self.store = store
        self.memory = memory
        self.now = service.now()
        self.profile = service.profiles.profile(store)
        primary = service.profiles.decay_model(self.profile)
        self.decay = primary
        self.models = [primary] + [
            service.profiles.decay_model(self.profile, name)
            for name in DECAY_MODELS
            if name != primary.name
        ]
        self.horizon = 30
        self.going: list[tuple[float, Memory]] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="entry"):
            yield ChartView(id="chart")
            yield VerticalScroll(Static(id="entry-summary-body"), id="entry-summary")
        with Horizontal(id="store"):
            yield VerticalScroll(Static(id="bins-body"), id="bins")
            with Vertical(id="going"):
                yield Static(id="going-title")
                yield MemtuiList(id="going-list")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.refresh_all()

    def refresh_all(self) -> None:
        self.show_entry()
        self.query_one("#going-title", Static).update(Text("computing…", style="dim"))
        self.compute(self.horizon)

    def show_entry(self) -> None:
        """The chosen entry's curve and when it crosses the line under each model."""
        summary = self.query_one("#entry-summary-body", Static)
        if self.memory is None:
            summary.update(
                Text("No entry highlighted in the table: pick one below (enter).", style="dim")
            )
            return
        data, text = entry_chart(self.memory, self.profile, self.models, self.now, self.horizon)
        self.query_one(ChartView).show(data)
        text.append(
            f"{self.horizon} days ahead ([ ]); enter on an entry below shows its curve",
            style="dim",
        )
        summary.update(text)

    @work(thread=True, exclusive=True, group="decay", exit_on_error=False)
    def compute(self, horizon: int) -> None:
        self.post_message(
            StoreDecayReady(
                store_decay(self.store.memories(), self.profile, self.decay, self.now, horizon)
            )
        )

    @on(StoreDecayReady)
    def _ready(self, message: StoreDecayReady) -> None:
        result = message.result
        if result.horizon != self.horizon:
            return
        line = line_of(self.profile)
        title = Text(
            f"days until importance falls below {line:g} ({self.profile.name} profile)\n",
            style="bold",
        )
        # the bars fit the pane (its scrollbar and padding aside)
        width = min(46, max(16, self.query_one("#bins").size.width - 4))
        self.query_one("#bins-body", Static).update(
            Group(title, histogram(result.bins, width, "red"))
        )
        title = Text(
            f"{entry_count(len(result.going))} cross{'es' if len(result.going) == 1 else ''} it "
            f"within {result.horizon} days",
            style="bold",
        )
        if len(result.going) > SHOWN:
            title.append(f" (the first {SHOWN} listed)", style="dim")
        title.append("\n      in  now  entry (enter: its curve)", style="dim")
        self.query_one("#going-title", Static).update(title)
        decay = self.decay
        self.going = result.going[:SHOWN]
        options = []
        for day, memory in self.going:
            when = crossing_text(day)
            row = Text(f"{when:>8} {decay.value_at(memory, self.now):.2f}  ", style="dim")
            row.append(shorten(one_line(memory.content), 70))
            options.append(Option(row))
        listed = self.query_one("#going-list", OptionList)
        listed.clear_options()
        listed.add_options(options)
        # the charted entry, if it is listed; no other row looks chosen
        charted = self.memory.id if self.memory else None
        listed.highlighted = next(
            (n for n, (_, m) in enumerate(self.going) if m.id == charted), None
        )

    @on(OptionList.OptionSelected, "#going-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.pick(event.option_index)

    def action_show_picked(self) -> None:
        listed = self.query_one("#going-list", OptionList)
        if listed.highlighted is not None:
            self.pick(listed.highlighted)

    def pick(self, index: int) -> None:
        if 0 <= index < len(self.going):
            self.memory = self.going[index][1]
            self.show_entry()

    def action_horizon(self, direction: int) -> None:
        at = HORIZONS.index(self.horizon) if self.horizon in HORIZONS else 2
        self.horizon = HORIZONS[max(0, min(len(HORIZONS) - 1, at + direction))]
        self.refresh_all()
