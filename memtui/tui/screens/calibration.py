"""The calibration curve: precision and recall against the threshold for one method at a time,
from the store's labels, with the recommended threshold at the target precision and the config
lines that use it. With too few labels it says how many more are needed instead."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Select, Static

from memtui.engine.similarity import METHODS
from memtui.errors import MemtuiError
from memtui.service import Calibration, Service
from memtui.stores.protocol import MemoryStore
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.widgets.chart import ChartData, ChartView, Series

PRECISION_STYLE = "bold green"
RECALL_STYLE = "bold blue"


class CalibrationReady(Message):
    def __init__(self, calibration: Calibration | None, shortfall: str | None) -> None:
        super().__init__()
        self.calibration = calibration
        self.shortfall = shortfall


def curve_chart(calibration: Calibration, method: str) -> ChartData:
    result = next(m for m in calibration.methods if m.method == method)
    data = ChartData(
        series=[
            Series(
                "precision", [(p.threshold, p.precision) for p in result.curve], PRECISION_STYLE
            ),
            Series("recall", [(p.threshold, p.recall) for p in result.curve], RECALL_STYLE),
        ],
        lines=[(calibration.target_precision, "target precision", "yellow")],
    )
    if result.recommended is not None:
        data.marks.append(
            (result.recommended.threshold, f"best F1 at {result.recommended.threshold:g}", "red")
        )
    return data


def summary_text(calibration: Calibration) -> Text:
    text = Text(
        f"{calibration.pairs} labelled pairs ({calibration.positives} the same memory); "
        f"recommended: best F1 at precision ≥ {calibration.target_precision:g}\n",
        style="bold",
    )
    text.append(f"{'method':<13} threshold  precision  recall     F1\n", style="dim")
    for result in calibration.methods:
        point = result.recommended
        text.append(f"{result.method:<13} ")
        if point is None:
            text.append(f"no threshold reaches {calibration.target_precision:g}\n", style="dim")
        else:
            text.append(
                f"{point.threshold:9.2f}  {point.precision:9.3f}  {point.recall:6.3f}  "
                f"{point.f1:5.3f}\n"
            )
    config = calibration.config_lines()
    if config is None:
        text.append("\nNo method reaches the target: label more pairs.", style="yellow")
    else:
        text.append("\nTo use it, in the config file:\n", style="bold")
        text.append(config)
    return text


class CalibrationScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Calibration curve (c when labelling)"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("CalibrationScreen")
    DEFAULT_CSS = """
    CalibrationScreen #calibration-controls { height: auto; padding: 0 1; background: $panel; }
    CalibrationScreen #calibration-controls Select { width: 24; }
    CalibrationScreen #calibration-title { width: 1fr; padding: 1 1 0 1; }
    CalibrationScreen #curve { height: 1fr; min-height: 6; padding: 0 1; }
    CalibrationScreen #calibration-text { height: auto; max-height: 50%; padding: 0 1; }
    """

    def __init__(self, store: MemoryStore, service: Service) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.method: str = service.profiles.profile(store).method
        self.calibration: Calibration | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="calibration-controls"):
            yield Select(
                [(m, m) for m in METHODS], value=self.method, allow_blank=False, id="method"
            )
            yield Static(Text("Calibration: computing…", style="bold"), id="calibration-title")
        yield ChartView(id="curve")
        yield VerticalScroll(Static(id="calibration-body"), id="calibration-text")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.compute()

    @work(thread=True, exclusive=True, group="calibration", exit_on_error=False)
    def compute(self) -> None:
        shortfall = self.service.calibration.calibration_shortfall(self.store)
        calibration = None
        if shortfall is None:
            try:
                calibration = self.service.calibration.calibrate(self.store)
            except MemtuiError as e:
                shortfall = str(e)
        self.post_message(CalibrationReady(calibration, shortfall))

    @on(CalibrationReady)
    def _ready(self, message: CalibrationReady) -> None:
        self.calibration = message.calibration
        body = self.query_one("#calibration-body", Static)
        chart = self.query_one("#curve", ChartView)
        if message.calibration is None:
            chart.display = False
            self.query_one("#calibration-title", Static).update(
                Text("Calibration: not enough labels yet", style="bold")
            )
            text = Text(message.shortfall or "", style="bold yellow")
            text.append(
                "\n\nLabel pairs with y/n on the labelling screen (L on the table screen, or "
                "`memtui label STORE`), or clusters with y/n in the clusters view.",
                style="dim",
            )
            body.update(text)
            return
        chart.display = True
        body.update(summary_text(message.calibration))
        self.show_method()

    def show_method(self) -> None:
        if self.calibration is None:
            return
        self.query_one("#calibration-title", Static).update(
            Text.assemble(
                ("Calibration", "bold"),
                f" · {self.method}: precision ",
                ("━━", PRECISION_STYLE),
                " and recall ",
                ("━━", RECALL_STYLE),
                " against the threshold",
            )
        )
        self.query_one("#curve", ChartView).show(curve_chart(self.calibration, self.method))

    @on(Select.Changed, "#method")
    def _method(self, event: Select.Changed) -> None:
        if event.value != self.method:
            self.method = str(event.value)
            self.show_method()
