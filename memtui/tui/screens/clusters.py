"""Clusters: groups of related entries (same user) at a similarity threshold you move with
`+`/`-`; they recompute in a worker as you move it. A histogram of cluster sizes, each
cluster's members with their pairwise scores, and `m` to merge a cluster."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from memtui.engine.profiles import Profile
from memtui.engine.similarity import METHODS
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import Service
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import literal, one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.modals import ConfirmScreen
from memtui.tui.widgets.chart import histogram
from memtui.tui.widgets.lists import MemtuiList
from memtui.views import counted, entry_count, shorten

STEP = 0.05


@dataclass(frozen=True, slots=True)
class ClusterResult:
    method: str
    threshold: float
    clusters: list[list[str]]
    pairs: dict[tuple[str, str], float]
    split_from: dict[int, int] = field(default_factory=dict)
    """Cluster index → the size of the too-broad group it is a piece of."""


class ClustersReady(Message):
    def __init__(self, result: ClusterResult) -> None:
        super().__init__()
        self.result = result


def find_clusters(
    service: Service, memories: list[Memory], method: str, threshold: float, profile: Profile
) -> ClusterResult:
    pairs, found = service.profiles.clusters(memories, method, threshold, profile)
    found.sort(key=lambda g: -len(g.members))
    groups = [g.members for g in found]
    split = {n: g.split_from for n, g in enumerate(found) if g.split_from}
    return ClusterResult(method, threshold, groups, {(p.a, p.b): p.score for p in pairs}, split)


def size_bins(clusters: list[list[str]]) -> list[tuple[str, int]]:
    sizes = Counter(min(len(c), 10) for c in clusters)
    return [(f"{s}{'+' if s == 10 else ''}", sizes[s]) for s in sorted(sizes)]


class ClustersScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Clusters"
    AUTO_FOCUS = "#list"  # the clusters, not the method chooser
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("ClustersScreen")
    DEFAULT_CSS = """
    ClustersScreen #controls { height: auto; padding: 0 1; background: $panel; }
    ClustersScreen #controls Select { width: 24; }
    ClustersScreen #controls Label { padding: 1 1 0 1; }
    ClustersScreen #body { height: 1fr; }
    ClustersScreen #left { width: 45%; min-width: 34; }
    ClustersScreen #histogram { height: auto; max-height: 12; padding: 0 1; }
    ClustersScreen #list { height: 1fr; }
    ClustersScreen #members { width: 1fr; border-left: solid $panel; padding: 0 1; }
    /* below 100 columns the list takes the whole width, the members sit under it */
    ClustersScreen.narrow #body { layout: vertical; }
    ClustersScreen.narrow #left { width: 100%; min-width: 0; height: 1fr; }
    ClustersScreen.narrow #histogram { max-height: 3; }
    ClustersScreen.narrow #members { width: 100%; height: 1fr; border-left: none;
        border-top: solid $panel; }
    """

    def __init__(self, store: MemoryStore, service: Service) -> None:
        super().__init__()
        self.store = store
        self.service = service
        profile = self.profile = service.profiles.profile(store)
        self.method: str = profile.method
        self.threshold = round(profile.merge_threshold or 0.8, 2)
        self.result: ClusterResult | None = None
        self.by_id = {m.id: m for m in store.memories()}

    def compose(self) -> ComposeResult:
        with Horizontal(id="controls"):
            yield Select(
                [(m, m) for m in METHODS], value=self.method, allow_blank=False, id="method"
            )
            yield Label("", id="threshold")
        with Horizontal(id="body"):
            with VerticalScroll(id="left"):
                yield Static(id="histogram")
                yield MemtuiList(id="list")
            yield VerticalScroll(Static(id="members-body"), id="members")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < 100, "narrow")
        self.recompute()

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < 100, "narrow")

    def recompute(self) -> None:
        self.query_one("#threshold", Label).update(
            Text(f"threshold {self.threshold:.2f}  (+/- moves it)   computing…", style="bold")
        )
        self.compute(self.method, self.threshold)

    @work(thread=True, exclusive=True, group="clusters", exit_on_error=False)
    def compute(self, method: str, threshold: float) -> None:
        result = find_clusters(
            self.service, list(self.by_id.values()), method, threshold, self.profile
        )
        if not get_current_worker().is_cancelled:
            self.post_message(ClustersReady(result))

    @on(ClustersReady)
    def _ready(self, message: ClustersReady) -> None:
        result = message.result
        if (result.method, result.threshold) != (self.method, self.threshold):
            return  # an older computation: a newer one is running
        self.result = result
        clustered = sum(len(c) for c in result.clusters)
        self.query_one("#threshold", Label).update(
            Text.assemble(
                (f"threshold {result.threshold:.2f}", "bold"),
                f"  ·  {counted(len(result.clusters), 'cluster')}, {entry_count(clustered)}",
            )
        )
        width = max(16, self.query_one("#histogram", Static).content_size.width)
        self.query_one("#histogram", Static).update(
            Group(
                Text("sizes: entries → clusters", style="bold"),
                histogram(size_bins(result.clusters), width, "blue"),
            )
        )
        options = self.query_one("#list", OptionList)
        options.clear_options()
        # (less the scrollbar the options will bring)
        row_width = max(16, options.scrollable_content_region.width - 3)
        for n, cluster in enumerate(result.clusters):
            first = self.by_id[cluster[0]]
            label = Text()
            label.append(f"{len(cluster):>3} ", style="bold")
            if n in result.split_from:
                label.append(f"⚠ of {result.split_from[n]} ", style="bold yellow")
            user = f"  {shorten(one_line(first.user_id or '-'), 12)}"
            room = row_width - label.cell_len - len(user)
            content = Text(one_line(first.content))
            content.truncate(max(6, room), overflow="ellipsis")
            label.append_text(content)
            label.append(user, style="dim")
            label.truncate(row_width, overflow="ellipsis")
            options.add_option(Option(label, id=str(n)))
        if result.clusters:
            options.highlighted = 0
        else:
            self.query_one("#members-body", Static).update(
                Text("No two entries reach this threshold. Lower it with -.", style="dim")
            )

    @on(OptionList.OptionHighlighted, "#list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.result is None or event.option.id is None:
            return
        n = int(event.option.id)
        if n >= len(self.result.clusters):
            return  # a row of the list before it was recomputed: its message came late
        cluster = self.result.clusters[n]
        text = Text(entry_count(len(cluster)), style="bold")
        text.append(f" · {self.result.method} ≥ {self.result.threshold:.2f}\n\n", style="dim")
        if n in self.result.split_from:
            text.append(
                f"Too broad: a piece of a group of {self.result.split_from[n]}, over the cap of "
                f"{self.profile.cluster_max} — raise the threshold with +.\n\n",
                style="bold yellow",
            )
        for ident in cluster:
            memory = self.by_id[ident]
            text.append(f"{one_line(ident)}  ", style="dim")
            text.append(f"{memory.importance:.2f} {memory.source.value}\n", style="dim")
            text.append(literal(memory.content) + "\n\n")
        text.append("pairwise scores\n", style="bold")
        inside = set(cluster)
        pairs = [
            (a, b, s) for (a, b), s in self.result.pairs.items() if a in inside and b in inside
        ]
        for a, b, score in sorted(pairs, key=lambda p: -p[2])[:40]:
            text.append(f"{score:.3f}  {one_line(a)} ~ {one_line(b)}\n")
        self.query_one("#members-body", Static).update(text)

    @on(Select.Changed, "#method")
    def _method(self, event: Select.Changed) -> None:
        if event.value != self.method:
            self.method = str(event.value)
            self.recompute()

    def store_changed(self) -> None:
        """A commit (a merge from here) changed the store: the clusters are computed again."""
        self.by_id = {m.id: m for m in self.store.memories()}
        self.result = None
        self.recompute()

    def action_threshold(self, direction: int) -> None:
        self.threshold = round(min(1.0, max(STEP, self.threshold + direction * STEP)), 2)
        self.recompute()

    def action_label(self, same: bool) -> None:
        """A person's verdict on the highlighted cluster, kept beside the store (labels): `y`
        one memory; `n` no two of its entries are one memory, so every pair is labelled
        different (asked first on a group of 3 or more, where a pair may still be one)."""
        options = self.query_one("#list", OptionList)
        if self.result is None or options.highlighted is None or not self.result.clusters:
            self.notify("No cluster highlighted.", severity="warning")
            return
        cluster = self.result.clusters[options.highlighted]
        if same or len(cluster) == 2:
            self._record(cluster, same)
            return
        pairs = len(cluster) * (len(cluster) - 1) // 2
        body = Text(
            f"Label all {pairs} pairs of these {len(cluster)} entries as different memories?\n\n"
        )
        body.append(
            "If some of them are one memory, answer n and label pairs one at a time on the "
            "labelling screen (L on the table).",
            style="dim",
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._record(cluster, False)

        self.app.push_screen(ConfirmScreen("Not the same memory?", body), answered)

    def _record(self, cluster: list[str], same: bool) -> None:
        groups = [cluster] if same else [list(p) for p in combinations(cluster, 2)]
        try:
            self.service.labels.label_groups(self.store, groups, same)
        except MemtuiError as e:
            self.notify(one_line(str(e)), severity="error")
            return
        verdict = (
            f"Labelled {len(cluster)} entries: one memory."
            if same
            else f"Labelled {len(groups)} {'pair' if len(groups) == 1 else 'pairs'}: "
            "not the same memory."
        )
        self.notify(f"{verdict} `memtui calibrate` uses the labels.", timeout=4)
        options = self.query_one("#list", OptionList)
        if options.highlighted is not None and options.highlighted < options.option_count - 1:
            options.highlighted += 1

    def action_merge(self) -> None:
        options = self.query_one("#list", OptionList)
        if self.result is None or options.highlighted is None or not self.result.clusters:
            self.notify("No cluster highlighted.", severity="warning")
            return
        cluster = self.result.clusters[options.highlighted]
        host(self).open_merge([self.by_id[i] for i in cluster])
