"""Plan review: choose a profile, plan in a worker (progress; escape cancels), then approve or
reject action by action (dependencies follow visibly), see each action's before and after,
and apply the approved ones as one transaction. Plans save to and load from files that
`memtui apply` reads."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Checkbox,
    Footer,
    Input,
    Label,
    ProgressBar,
    Select,
    Static,
    Tree,
)
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from memtui.engine.kinds import KINDS, kind_of
from memtui.engine.plan import Action, Plan, closure
from memtui.engine.planner import Cancelled
from memtui.engine.profiles import PROFILE_NAMES, Profile
from memtui.errors import MemtuiError
from memtui.service import LlmRequest, Service, plan_summary
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.messages import PlanFileDone
from memtui.tui.widgets.diff import record_change
from memtui.tui.widgets.lists import MemtuiTree
from memtui.tui.widgets.provenance_view import action_wording
from memtui.views import action_subject, counted, entry_count, shorten

NO_MODEL = "The model pass is off: set [llm] url and model in the config file to use it."
CHUNK = 100  # actions added to the tree at a time
OPEN_AT_FIRST = 40  # kinds with at most this many actions start expanded


class PlanProgress(Message):
    def __init__(self, stage: str, fraction: float) -> None:
        super().__init__()
        self.stage = stage
        self.fraction = fraction


class PlanReady(Message):
    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan


class PlanFailed(Message):
    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


class PathScreen(GuardedHandlers, ModalScreen["str | None"]):
    """Asks for a file path."""

    HELP_TITLE = "Saving or loading a plan file"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("PathScreen")
    DEFAULT_CSS = """
    PathScreen { align: center middle; }
    PathScreen > Vertical { width: 80; max-width: 95%; height: auto; border: thick $primary;
        background: $surface; padding: 1 2; }
    """

    def __init__(self, title: str, value: str) -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield Input(value=self.value, id="path")

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ActionTree(MemtuiTree):
    """The plan's actions: space decides (the screen's flip), enter opens a kind."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "screen.flip", "Toggle", show=False),
    ]


def action_label(action: Action, approved: bool) -> Text:
    mark = "✓" if approved else ("?" if action.needs_decision else "✗")
    style = "green" if approved else ("yellow" if action.needs_decision else "red")
    label = Text()
    label.append(f"{mark} ", style=f"bold {style}")
    label.append(f"{action.id} ", style="dim")
    label.append(shorten(one_line(action_subject(action)), 70))
    label.append(f"  {shorten(one_line(action.reason), 90)}", style="dim")
    if action.depends_on:
        label.append(
            f"  needs {', '.join(action.depends_on[:3])}"
            f"{'…' if len(action.depends_on) > 3 else ''}",
            style="dim",
        )
    if action.actor == "llm":
        label.append("  [model]", style="italic")
    return label


def action_detail(action: Action) -> Text:
    text = Text(f"{action.id} · {action.kind}", style="bold")
    if action.needs_decision:
        text.append("  needs a decision", style="bold yellow")
    text.append(f"\n{one_line(action.reason)}\n\n")
    text.append("rule    ", style="dim")
    text.append(one_line(action.rule) + "\n")
    if action.scores:
        text.append("scores  ", style="dim")
        text.append(", ".join(f"{k} {v:.3g}" for k, v in action.scores.items()) + "\n")
    if action.depends_on:
        text.append("needs   ", style="dim")
        text.append(", ".join(action.depends_on) + "\n")
    if action.actor != "plan":
        text.append("by      ", style="dim")
        text.append(f"{action.actor} {action.details.get('model', '')}\n")
    wording = action_wording(action)
    if wording is not None:
        text.append("\n").append_text(wording)
    before = {m.id: m for m in action.before}
    for after in action.after:
        text.append("\n")
        text.append_text(record_change(before.get(after.id), after))
        text.append("\n")
    return text


class PlanScreen(GuardedHandlers, Screen[None]):
    HELP_TITLE = "Plan review"
    AUTO_FOCUS = "#actions"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("PlanScreen")
    DEFAULT_CSS = """
    PlanScreen #chooser { height: auto; padding: 0 1; }
    PlanScreen #chooser Select { width: 24; }
    PlanScreen #chooser Button { margin-left: 1; min-width: 8; }
    PlanScreen #chooser Checkbox { width: 1fr; height: 3; }
    PlanScreen #llm-why { padding: 0 1; height: auto; }
    PlanScreen #progress-box { height: auto; padding: 0 1; }
    PlanScreen #summary { background: $panel; padding: 0 1; height: auto; }
    PlanScreen #review { height: 1fr; }
    PlanScreen #actions { width: 3fr; overflow-x: hidden; }
    PlanScreen #action-detail { width: 2fr; border-left: solid $panel; padding: 0 1; }
    """

    def __init__(self, store: MemoryStore, service: Service) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.model_name, self.no_model = service.plans.llm_model()
        self.plan: Plan | None = None
        self.approved: set[str] = set()
        self.kept: set[str] = set()  # the decisions as planned, loaded or last saved
        self._action_nodes: dict[str, TreeNode[str]] = {}
        self._kind_nodes: dict[str, TreeNode[str]] = {}
        self._by_kind: dict[str, list[Action]] = {}
        self._shown: dict[str, int] = {}
        self._last_fraction = -1.0
        self._started: tuple[str, bool] | None = None  # the profile and model choice planned

    def compose(self) -> ComposeResult:
        default = self.service.profiles.default_profile_name(self.store)
        with Horizontal(id="chooser"):
            yield Label("Profile ")
            yield Select(
                [(p, p) for p in PROFILE_NAMES], value=default, allow_blank=False, id="profile"
            )
            yield Button("Plan", id="run", variant="primary")
            yield Checkbox(
                f"with {self.model_name}" if self.model_name else "with the model",
                value=False,
                disabled=self.model_name is None,
                id="use-llm",
                tooltip=None if self.model_name else NO_MODEL,
            )
        if self.model_name is None:
            yield Static(Text(NO_MODEL, style="dim"), id="llm-why")
        with Vertical(id="progress-box"):
            yield Label("", id="stage")
            yield ProgressBar(total=1.0, show_eta=False, id="progress")
        yield Static(
            Text(
                "Planning with the store's profile; pick another to plan again. Nothing "
                "changes until you apply.",
                style="dim",
            ),
            id="summary",
        )
        with Horizontal(id="review"):
            yield ActionTree(Text("actions"), id="actions")
            yield VerticalScroll(Static(id="action-detail-body"), id="action-detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#progress-box").display = False
        tree = self.query_one("#actions", Tree)
        tree.show_root = False
        tree.focus()  # keys typed while planning go to the review, not the profile chooser
        self.start()

    # -- planning -----------------------------------------------------------------------------

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.start()

    @on(Select.Changed, "#profile")
    def _profile_changed(self) -> None:
        self._plan_if_changed()

    def _choice(self) -> tuple[str, bool]:
        return str(self.query_one("#profile", Select).value), self.query_one(
            "#use-llm", Checkbox
        ).value

    def _plan_if_changed(self) -> None:
        # the Select reports its first value after mount: that plan is already on its way
        if self.is_mounted and self._choice() != self._started:
            self.start()

    def start(self) -> None:
        self._started = self._choice()
        profile = self._started[0]
        self.query_one("#progress-box").display = True
        self.query_one("#progress", ProgressBar).update(progress=0)
        self.query_one("#stage", Label).update(f"planning with {profile}…  (escape cancels)")
        self.compute(profile, self._started[1])

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def compute(self, profile_name: str, use_llm: bool = False) -> None:
        worker = get_current_worker()

        def progress(stage: str, fraction: float) -> None:
            self.post_message(PlanProgress(stage, fraction))

        try:
            profile = self.service.profiles.profile(self.store, profile_name)
            plan = self.service.plans.plan(
                self.store, profile, progress=progress, cancelled=lambda: worker.is_cancelled
            )
            if use_llm and self.model_name is not None and not worker.is_cancelled:
                plan = self.ask_model(plan, profile)
        except Cancelled:  # escape says so itself; a newer plan replaced this one
            return
        except MemtuiError as e:
            self.post_message(PlanFailed(str(e)))
            return
        self.post_message(PlanReady(plan))

    def ask_model(self, plan: Plan, profile: Profile) -> Plan:
        """The model's pass over the plan, in this worker thread's own event loop."""
        import asyncio

        self.post_message(PlanProgress(f"asking {self.model_name}", 0.95))
        return asyncio.run(
            self.service.plans.improve_plan_async(plan, self.store, profile, LlmRequest())
        )

    @on(Checkbox.Changed, "#use-llm")
    def _llm_toggled(self) -> None:
        self._plan_if_changed()

    @on(PlanProgress)
    def _progress(self, message: PlanProgress) -> None:
        if message.fraction - self._last_fraction >= 0.02 or message.fraction >= 1.0:
            self._last_fraction = message.fraction
            self.query_one("#progress", ProgressBar).update(progress=message.fraction)
            self.query_one("#stage", Label).update(f"planning: {message.stage}…  (escape cancels)")

    @on(PlanFailed)
    def _failed(self, message: PlanFailed) -> None:
        self.query_one("#progress-box").display = False
        self.notify(one_line(message.problem), severity="warning")

    @on(PlanReady)
    def _ready(self, message: PlanReady) -> None:
        self.query_one("#progress-box").display = False
        self.show_plan(message.plan)

    def show_plan(self, plan: Plan) -> None:
        self.plan = plan
        self.approved = set(plan.default_approved())
        self.kept = set(self.approved)
        tree = self.query_one("#actions", Tree)
        tree.clear()
        self._action_nodes.clear()
        self._kind_nodes.clear()
        self._by_kind = {}
        for action in plan.actions:
            self._by_kind.setdefault(action.kind, []).append(action)
        self._shown = {}
        for kind in KINDS:
            actions = self._by_kind.get(kind)
            if not actions:
                continue
            node = tree.root.add(Text(kind), data=f"kind:{kind}", allow_expand=True)
            self._kind_nodes[kind] = node
            self._shown[kind] = 0
            # big groups (decay on a large store) fill in when opened, a chunk at a time
            if len(actions) <= OPEN_AT_FIRST and not kind_of(kind).decays:
                self._fill(kind)
                node.expand()
        self._relabel_kinds()
        self.update_summary()
        tree.focus()
        tree.cursor_line = 0  # highlighted from the start: the first Down moves on
        if not plan.actions:
            self.notify("Nothing to do: the store is already consolidated for this profile.")

    def _fill(self, kind: str) -> None:
        """Add the next chunk of a kind's actions to the tree."""
        node = self._kind_nodes[kind]
        for child in list(node.children):
            if child.data == f"more:{kind}":
                child.remove()
        actions = self._by_kind[kind]
        start = self._shown[kind]
        for action in actions[start : start + CHUNK]:
            label = action_label(action, action.id in self.approved)
            self._action_nodes[action.id] = node.add_leaf(label, data=action.id)
        self._shown[kind] = min(len(actions), start + CHUNK)
        rest = len(actions) - self._shown[kind]
        if rest:
            more = Text(
                f"… {rest} more: enter shows the next {min(rest, CHUNK)}; A or R decides "
                "the whole kind",
                style="dim italic",
            )
            node.add_leaf(more, data=f"more:{kind}")

    @on(Tree.NodeExpanded, "#actions")
    def _expanded(self, event: Tree.NodeExpanded[str]) -> None:
        data = event.node.data or ""
        if data.startswith("kind:") and self._shown.get(data[5:]) == 0:
            self._fill(data[5:])

    @on(Tree.NodeSelected, "#actions")
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        data = event.node.data or ""
        if data.startswith("more:"):
            self._fill(data[5:])

    def _relabel_kinds(self) -> None:
        assert self.plan is not None
        for kind, node in self._kind_nodes.items():
            ids = [a.id for a in self._by_kind[kind]]
            chosen = sum(1 for i in ids if i in self.approved)
            label = Text(f"{kind} ", style="bold")
            label.append(f"{len(ids)} · {chosen} approved", style="dim")
            node.set_label(label)

    def update_summary(self) -> None:
        if self.plan is None:
            return
        warnings = self.plan.warnings  # said first (plan_summary starts with them), in one line
        text = Text()
        if warnings:
            more = f" (and {len(warnings) - 1} more users)" if len(warnings) > 1 else ""
            text.append(f"{warnings[0]}{more}\n", style="bold yellow")
        head = plan_summary(self.plan).split("\n")[len(warnings)]
        text.append(head.replace(f" for {self.plan.store}", ""))
        text.append(
            f"\napproved {len(self.approved)} of {len(self.plan.actions)} · space flips one · "
            "A/R decide a whole kind",
            style="dim",
        )
        self.query_one("#summary", Static).update(text)

    # -- deciding -----------------------------------------------------------------------------

    def _highlighted(self) -> str | None:
        node = self.query_one("#actions", Tree).cursor_node
        return node.data if node is not None else None

    @on(Tree.NodeHighlighted, "#actions")
    def _show(self, event: Tree.NodeHighlighted[str]) -> None:
        body = self.query_one("#action-detail-body", Static)
        data = event.node.data
        if self.plan is None or data is None or not data.startswith("a"):
            body.update(Text("Highlight an action to see its before and after.", style="dim"))
            return
        body.update(action_detail(self.plan.action(data)))

    def set_approved(self, ids: set[str], approve: bool) -> None:
        """Approve with what they depend on, or reject with what depends on them."""
        assert self.plan is not None
        affected = closure(self.plan, ids, upward=approve, approved=self.approved)
        extra = affected - ids
        if approve:
            self.approved |= affected
        else:
            self.approved -= affected
        for ident in affected:
            node = self._action_nodes.get(ident)
            if node is not None:
                node.set_label(action_label(self.plan.action(ident), ident in self.approved))
        if extra:
            what = "needed" if approve else "depending on it"
            verb = "approved" if approve else "rejected"
            shown = ", ".join(sorted(extra, key=lambda i: int(i[1:]))[:6])
            self.notify(
                f"Also {verb} {len(extra)} {what}: {shown}{'…' if len(extra) > 6 else ''}",
                timeout=4,
            )
        self._relabel_kinds()
        self.update_summary()

    def action_decide(self, approve: bool) -> None:
        ident = self._highlighted()
        if self.plan is None or ident is None or ":" in ident:
            return
        self.set_approved({ident}, approve)
        self.query_one("#actions", Tree).action_cursor_down()

    def action_flip(self) -> None:
        ident = self._highlighted()
        if self.plan is None or ident is None:
            return
        if ":" in ident:  # a kind or "more": nothing to decide, it opens or closes
            self.query_one("#actions", Tree).action_toggle_node()
            return
        self.set_approved({ident}, ident not in self.approved)

    def action_decide_kind(self, approve: bool) -> None:
        ident = self._highlighted()
        if self.plan is None or ident is None:
            return
        kind = ident.split(":", 1)[1] if ":" in ident else self.plan.action(ident).kind
        self.set_approved({a.id for a in self._by_kind.get(kind, [])}, approve)

    # -- applying, saving, loading ------------------------------------------------------------

    def action_commit(self) -> None:
        plan = self.plan
        if plan is None:
            self.notify("Plan first (enter).", severity="warning")
            return
        chosen = [a.id for a in plan.actions if a.id in self.approved]
        if not chosen:
            self.notify("No action is approved.", severity="warning")
            return
        by_id = {a.id: a for a in plan.actions}
        kinds = [by_id[a].kind for a in chosen]
        what = ", ".join(f"{k} {kinds.count(k)}" for k in dict.fromkeys(kinds))
        touched = len({t for a in chosen for t in by_id[a].targets})
        body = Text(f"Apply {len(chosen)} actions: {what}.\n\n", style="bold")
        body.append(
            f"{entry_count(touched)} touched, backup kept. One transaction; undo reverts all of it."
        )
        before = sum(1 for m in self.store.memories() if m.visible)

        report = host(self).commit_progress

        def job(store: MemoryStore) -> Transaction:
            return self.service.plans.apply(store, plan, chosen, progress=report)

        def note(tx: Transaction) -> str:
            after = sum(1 for m in self.store.memories() if m.visible)
            applied = counted(len(chosen), "action")
            return f"Applied {applied} (transaction {tx.id}): {before} entries → {after}."

        host(self).confirm_commit(
            "Apply the plan?",
            body,
            job,
            note,
            close=True,
            working=f"applying {len(chosen):,} actions to {entry_count(touched)}",
        )

    def action_save(self) -> None:
        if self.plan is None:
            self.notify("Plan first.", severity="warning")
            return
        suggested = str(self.store.path.with_name(self.store.path.stem + ".plan.json"))

        def chosen(path: str | None) -> None:
            if path and self.plan is not None:
                self.notify(f"Saving the plan to {Path(path).name}…", timeout=3)
                self.write_plan_file(self.plan, path, set(self.approved))

        self.app.push_screen(PathScreen("Save the plan to", suggested), chosen)

    def action_load(self) -> None:
        suggested = str(self.store.path.with_name(self.store.path.stem + ".plan.json"))

        def chosen(path: str | None) -> None:
            if path:
                self.notify(f"Loading the plan from {Path(path).name}…", timeout=3)
                self.read_plan_file(path)

        self.app.push_screen(PathScreen("Load a plan from", suggested), chosen)

    @work(thread=True, exclusive=True, group="plan-file", exit_on_error=False)
    def write_plan_file(self, plan: Plan, path: str, approved: set[str]) -> None:
        try:
            plan.decide(approved)
            self.service.plans.write_plan(plan, path)
        except (MemtuiError, OSError) as e:
            self.post_message(PlanFileDone(path, None, str(e), saved=True))
            return
        self.post_message(PlanFileDone(path, plan, None, saved=True, approved=approved))

    @work(thread=True, exclusive=True, group="plan-file", exit_on_error=False)
    def read_plan_file(self, path: str) -> None:
        try:
            plan = self.service.plans.load_plan(path, self.store)
        except MemtuiError as e:
            self.post_message(PlanFileDone(path, None, str(e), saved=False))
            return
        self.post_message(PlanFileDone(path, plan, None, saved=False))

    @on(PlanFileDone)
    def _plan_file_done(self, message: PlanFileDone) -> None:
        if message.problem is not None or message.plan is None:
            self.notify(one_line(message.problem or "no plan"), severity="error")
        elif message.saved:
            self.kept = message.approved or set()
            self.notify(f"Plan saved to {message.path}; `memtui apply` reads it too.")
        else:
            self.show_plan(message.plan)
            name = Path(message.path).name
            self.notify(f"Loaded {len(message.plan.actions)} actions from {name}.")

    def action_back(self) -> None:
        for worker in self.workers:
            if worker.group == "plan" and worker.is_running:
                worker.cancel()
                self.query_one("#progress-box").display = False
                self.notify("Planning cancelled.")
                return
        host(self).leave_screen(self)

    def unsaved(self) -> str | None:
        """What leaving now would drop, if anything."""
        if self.plan is None or self.approved == self.kept:
            return None
        changed = len(self.approved ^ self.kept)
        return f"{changed} plan decisions not applied or saved (w saves the plan, ctrl+s applies)"
