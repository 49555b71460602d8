"""Every key memtui binds, in one table: its binding id, default keys, action, what the footer
and the help say, whether it changes the store (a question follows; `writes`) and its command
palette name. The screens' `BINDINGS`, the help, the palette, the `[keymap]` check and the key
guard (key_guard.py) all read it; a key is declared here and nowhere else."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding, BindingType
from textual.dom import DOMNode

# a palette command: its name, what it does, and what runs it
PaletteCommand = tuple[str, str, Callable[[], object]]


@dataclass(frozen=True)
class Key:
    id: str  # the binding id the [keymap] remaps (`"table.mark" = "x"`)
    keys: str  # the default keys, comma-separated
    action: str  # the Textual action on the screen (or widget) that declares it
    description: str  # the footer's word
    tooltip: str = ""  # the help's line (the description when empty)
    show: bool = True  # in the footer
    writes: bool = False  # opens a question that writes: never run by a key in a burst
    palette: str = ""  # its command palette name ("entry: edit"); empty: not in the palette

    def binding(self) -> Binding:
        return Binding(
            self.keys,
            self.action,
            self.description,
            show=self.show,
            id=self.id,
            tooltip=self.tooltip,
        )


_CONFIRM_YES = Key("confirm.yes", "y", "answer(True)", "Yes")
_CONFIRM_NO = Key("confirm.no", "n,escape", "answer(False)", "No")

# by the class (app, widget or screen) whose actions they run
TABLE: dict[str, tuple[Key, ...]] = {
    "MemtuiApp": (
        Key("app.quit", "q", "quit", "Quit", tooltip="Leave memtui"),
        Key(
            "app.help",
            "question_mark",
            "help",
            "Help",
            tooltip="Every key and what it does",
            palette="view: help",
        ),
        Key(
            "store.undo",
            "u",
            "undo",
            "Undo",
            tooltip="Undo the newest transaction (asks first)",
            show=False,
            writes=True,
            palette="store: undo the newest change",
        ),
        Key(
            "store.reload",
            "ctrl+r",
            "reload",
            "Reload",
            tooltip="Read the store again (after an outside change)",
            show=False,
            palette="store: reload",
        ),
    ),
    "MemoryTable": (
        Key("table.up", "up,k", "cursor(-1)", "Up", show=False),
        Key("table.down", "down,j", "cursor(1)", "Down", show=False),
        Key("table.page_up", "pageup", "page(-1)", "Page up", show=False),
        Key("table.page_down", "pagedown", "page(1)", "Page down", show=False),
        Key("table.first", "home", "jump(0)", "First", show=False),
        Key("table.last", "end", "jump(-1)", "Last", show=False),
        Key(
            "table.mark",
            "space",
            "mark",
            "Mark",
            tooltip="Mark or unmark the entry",
            palette="entry: mark or unmark",
        ),
        Key(
            "table.sort",
            "o",
            "sort_next",
            "Sort",
            tooltip="Sort by the next column",
            show=False,
            palette="view: sort by the next column",
        ),
        Key(
            "table.sort_reverse",
            "O",
            "sort_reverse",
            "Reverse",
            tooltip="Reverse the sort order",
            show=False,
            palette="view: reverse the sort order",
        ),
    ),
    "HomeScreen": (
        Key(
            "view.filter",
            "slash",
            "filter",
            "Filter",
            tooltip="Filter as you type",
            palette="view: filter as you type",
        ),
        Key(
            "view.quick_filters",
            "f",
            "quick_filters",
            "Filters",
            tooltip="Filter by status, user, category, source",
            show=False,
            palette="view: quick filters",
        ),
        Key(
            "view.hidden",
            "full_stop",
            "toggle_hidden",
            "Hidden",
            tooltip="Show or hide merged, superseded and deleted entries",
            show=False,
            palette="view: show or hide merged, superseded, deleted",
        ),
        Key(
            "entry.lineage",
            "l",
            "lineage",
            "Lineage",
            tooltip="The superseded/merged chain of the entry",
            show=False,
            palette="entry: lineage",
        ),
        Key(
            "entry.merge",
            "m",
            "merge",
            "Merge",
            tooltip="Merge the marked entries",
            palette="entry: merge the marked entries",
        ),
        Key(
            "store.plan",
            "p",
            "plan",
            "Plan",
            tooltip="Review a consolidation plan",
            palette="store: review a consolidation plan",
        ),
        Key(
            "view.clusters",
            "c",
            "clusters",
            "Clusters",
            tooltip="Groups of related entries at a threshold you move",
            palette="view: clusters of related entries",
        ),
        Key(
            "view.decay",
            "d",
            "decay",
            "Decay",
            tooltip="Decay curves and what expires soon",
            palette="view: decay curves",
        ),
        Key(
            "store.label",
            "L",
            "label",
            "Label",
            tooltip="Label pairs near the merge line as the same memory or not (calibration)",
            show=False,
            palette="store: label pairs",
        ),
        Key(
            "store.history",
            "h",
            "history",
            "History",
            tooltip="The ledger: undo, redo, backups, rollback",
            palette="store: history, undo and backups",
        ),
        Key(
            "store.outside",
            "g",
            "outside",
            "Agent's",
            tooltip="What the agent changed since you last looked: before, after, restore",
            show=False,
            palette="store: the agent's changes",
        ),
        Key(
            "entry.edit",
            "e",
            "edit",
            "Edit",
            tooltip="Edit the entry: content, importance, category, tags",
            show=False,
            palette="entry: edit",
        ),
        Key(
            "entry.archive",
            "a",
            "archive",
            "Archive",
            tooltip="Archive the entry (on an archived one: make it active again)",
            show=False,
            writes=True,
            palette="entry: archive or unarchive",
        ),
        Key(
            "entry.delete",
            "x,delete",
            "delete",
            "Delete",
            tooltip="Delete the entry (soft: restorable, and u undoes it)",
            show=False,
            writes=True,
            palette="entry: delete",
        ),
        Key(
            "entry.add",
            "plus,n",
            "add",
            "Add",
            tooltip="Write a new entry: content, category, importance, user",
            show=False,
            palette="entry: add a new memory",
        ),
        Key(
            "view.detail",
            "v",
            "toggle_detail",
            "Detail",
            tooltip="Show or hide the detail pane (hidden at first below 100 columns)",
            show=False,
            palette="view: show or hide the detail pane",
        ),
        Key(
            "view.nothing_prepared",
            "ctrl+s",
            "nothing_prepared",
            "Save",
            tooltip="Here nothing is prepared: says how to prepare a change",
            show=False,
        ),
        Key(
            "view.clear_filter",
            "escape",
            "clear_filter",
            "Clear",
            tooltip="Clear the filter; pressed again (or with no filter), clear every mark",
            show=False,
            palette="view: clear the filter (again: the marks)",
        ),
    ),
    "LineageScreen": (
        Key("lineage.back", "escape,l", "app.pop_screen", "Back"),
        Key(
            "lineage.restore",
            "r",
            "restore",
            "Restore",
            tooltip="Bring back the highlighted merged or superseded entry",
            writes=True,
        ),
    ),
    "MergeScreen": (
        Key(
            "merge.commit",
            "ctrl+s",
            "commit",
            "Merge…",
            tooltip="Show what will happen, then merge (y) or not (n)",
            writes=True,
        ),
        Key("merge.back", "escape", "back", "Back", tooltip="Leave (asks if you wrote text)"),
    ),
    "PlanScreen": (
        Key("plan.approve", "a", "decide(True)", "Approve"),
        Key("plan.reject", "r", "decide(False)", "Reject"),
        Key("plan.toggle", "space", "flip", "Toggle"),
        Key(
            "plan.approve_kind",
            "A",
            "decide_kind(True)",
            "Approve kind",
            tooltip="Approve every action of the highlighted kind",
            show=False,
        ),
        Key(
            "plan.reject_kind",
            "R",
            "decide_kind(False)",
            "Reject kind",
            tooltip="Reject every action of the highlighted kind",
            show=False,
        ),
        Key(
            "plan.commit",
            "ctrl+s",
            "commit",
            "Apply…",
            tooltip="Show what the approved actions do, then apply them (y) or not (n)",
            writes=True,
        ),
        Key("plan.save", "w", "save", "Save", tooltip="Save the plan to a file"),
        Key("plan.load", "o", "load", "Load plan", show=False),
        Key(
            "plan.back",
            "escape",
            "back",
            "Back / cancel",
            tooltip="Cancel planning, or leave the review",
        ),
    ),
    "PathScreen": (Key("path.cancel", "escape", "cancel", "Cancel"),),
    "ClustersScreen": (
        Key(
            "clusters.up",
            "plus,equals_sign",
            "threshold(1)",
            "Raise",
            tooltip="Raise the threshold: fewer, closer clusters",
        ),
        Key(
            "clusters.down",
            "minus",
            "threshold(-1)",
            "Lower",
            tooltip="Lower the threshold: more, looser clusters",
        ),
        Key(
            "clusters.merge",
            "m",
            "merge",
            "Merge",
            tooltip="Open the merge screen with the highlighted cluster",
        ),
        Key(
            "clusters.same",
            "y",
            "label(True)",
            "Same",
            tooltip="Label the highlighted cluster as one memory (for memtui calibrate)",
            writes=True,
        ),
        Key(
            "clusters.different",
            "n",
            "label(False)",
            "Not same",
            tooltip=(
                "Label the highlighted cluster: no two of its entries are one memory (every "
                "pair labelled different; a group of 3 or more asks first)"
            ),
            writes=True,
        ),
        Key("clusters.back", "escape", "app.pop_screen", "Back"),
    ),
    "DecayScreen": (
        Key(
            "decay.longer",
            "right_square_bracket",
            "horizon(1)",
            "Longer",
            tooltip="Look further ahead",
        ),
        Key(
            "decay.shorter",
            "left_square_bracket",
            "horizon(-1)",
            "Shorter",
            tooltip="Look less far ahead",
        ),
        Key(
            "decay.pick",
            "enter",
            "show_picked",
            "Curve",
            tooltip="Show the curve of the entry picked in the list of those that cross the line",
        ),
        Key("decay.back", "escape", "app.pop_screen", "Back"),
    ),
    "LabelScreen": (
        Key(
            "label.same",
            "y",
            "verdict(True)",
            "Same memory",
            tooltip="The two entries are one memory (kept beside the store)",
            writes=True,
        ),
        Key(
            "label.different",
            "n",
            "verdict(False)",
            "Not the same",
            tooltip="The two entries are not one memory (kept beside the store)",
            writes=True,
        ),
        Key("label.skip", "s", "skip", "Skip", tooltip="No verdict: the next pair"),
        Key(
            "label.undo", "u", "undo", "Undo label", tooltip="Take the last label back", writes=True
        ),
        Key(
            "label.curve",
            "c",
            "curve",
            "Curve",
            tooltip="Precision and recall per threshold from the labels",
        ),
        Key("label.back", "escape", "app.pop_screen", "Back"),
    ),
    "CalibrationScreen": (Key("calibration.back", "escape", "app.pop_screen", "Back"),),
    "UserPickScreen": (
        Key("pick.open", "enter", "open", "Open", tooltip="Open the highlighted user's rows"),
        Key("pick.down", "down", "cursor_down", "Down", show=False),
        Key("pick.up", "up", "cursor_up", "Up", show=False),
        Key(
            "pick.quit",
            "escape",
            "leave",
            "Quit",
            tooltip="Clear what was typed; with nothing typed, leave memtui opening nothing",
        ),
    ),
    "OutsideScreen": (
        Key("outside.mark", "space", "mark", "Mark", tooltip="Mark the highlighted change"),
        Key(
            "outside.restore",
            "r",
            "restore",
            "Restore…",
            tooltip="Bring back what the agent removed or rewrote (marked, or highlighted)",
            writes=True,
        ),
        Key(
            "outside.all",
            "A",
            "toggle_all",
            "All",
            tooltip="Every change the record holds, or those since you last looked",
        ),
        Key("outside.back", "escape", "app.pop_screen", "Back"),
    ),
    "HistoryScreen": (
        Key(
            "history.undo",
            "u",
            "undo",
            "Undo…",
            tooltip="Undo the highlighted transaction (on an undo: redo)",
            writes=True,
        ),
        Key(
            "history.commit",
            "ctrl+s",
            "commit",
            "Undo / roll back…",
            tooltip="Undo the highlighted transaction, or roll back to the highlighted backup",
            writes=True,
        ),
        Key("history.backups", "b", "toggle_backups", "Backups"),
        Key("history.back", "escape", "app.pop_screen", "Back"),
    ),
    "EntryFormScreen": (
        Key(
            "entry_form.save",
            "ctrl+s",
            "save",
            "Save…",
            tooltip="Check the entry, show what changes, then save it (y) or not (n)",
            writes=True,
        ),
        Key(
            "entry_form.back",
            "escape",
            "back",
            "Back",
            tooltip="Leave the form (asks if you changed something)",
        ),
    ),
    "ConfirmScreen": (
        _CONFIRM_YES,
        _CONFIRM_NO,
    ),
    "ReasonConfirmScreen": (
        _CONFIRM_YES,
        _CONFIRM_NO,
        Key("confirm.reason", "r", "reason", "Reason", tooltip="Write why (optional)"),
    ),
    "FilterScreen": (
        Key("filters.cancel", "escape", "cancel", "Cancel"),
        Key("filters.apply", "ctrl+s", "apply", "Apply"),
    ),
    "HelpScreen": (Key("help.close", "escape,q,question_mark", "dismiss", "Close"),),
    "WorkingScreen": (Key("working.quit", "q", "app.quit", "Quit once written"),),
}


BY_ID: dict[str, Key] = {key.id: key for keys in TABLE.values() for key in keys}


def bindings_for(owner: str) -> list[BindingType]:
    """The `BINDINGS` of the class named `owner`."""
    return [key.binding() for key in TABLE[owner]]


def writes(binding_id: str | None) -> bool:
    """True when the binding opens a change to the store (or the labels kept beside it)."""
    key = BY_ID.get(binding_id or "")
    return key is not None and key.writes


def palette_keys(owner: str) -> Iterator[Key]:
    """The keys of `owner` the command palette offers."""
    return (key for key in TABLE[owner] if key.palette)


def palette_commands(app: Any, owner: DOMNode, name: str) -> Iterator[PaletteCommand]:
    """The palette's commands for the keys of `owner` (the class named `name`): each runs its
    action as the key would (the app checks it may), and says its key."""
    for key in TABLE[name]:
        if key.palette:
            keys = app.get_key_display(Binding(key.keys.split(",")[0], ""))

            def run(action: str = key.action) -> None:
                app.call_later(app.run_action, action, owner)

            yield key.palette, f"{key.tooltip or key.description} ({keys})", run
