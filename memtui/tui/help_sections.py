"""What the help screen lists: the bindings of the app, of the memory table and of every screen
class memtui defines (found by walking `Screen`'s subclasses, so a new screen cannot be left
out), each as the keymap has it now."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen

from memtui.tui.widgets.memory_table import MemoryTable

HelpRow = tuple[str, str, str]  # keys, what they do, binding id
HelpSection = tuple[str, list[HelpRow]]

# where a screen sits in the help (by class name); others follow, by title
ORDER = (
    "HomeScreen",
    "LineageScreen",
    "MergeScreen",
    "PlanScreen",
    "PathScreen",
    "ClustersScreen",
    "DecayScreen",
    "LabelScreen",
    "CalibrationScreen",
    "HistoryScreen",
    "EntryFormScreen",
    "ConfirmScreen",
    "ReasonConfirmScreen",
    "FilterScreen",
    "HelpScreen",
)


KEYBOARD_MODEL: HelpSection = (
    "How keys work (every screen)",
    [
        (
            "letters",
            "In a text box they type (y, n, u and q too); commands: ctrl/alt or escape",
            "",
        ),
        ("y, enter", "Write a change: y in a question without a text box, enter on its Yes", ""),
        ("r", "In a question: write a reason; enter moves to Yes, enter again saves", ""),
        ("n, escape", "In a question: No (never the new-entry form)", ""),
        ("…", "A question ignores keys until half a second passes without one", ""),
        (
            "bursts",
            "Keys typed at a screen since covered do nothing there; undo, delete and the "
            "like do nothing when they come in a burst of keys (a paste)",
            "",
        ),
        ("j k ↑ ↓", "Move in every list and tree; home/end, pgup/pgdn too", ""),
        ("tab", "The next field or pane; focus shows as a lit border, a bar or a tint", ""),
    ],
)


def memtui_screens() -> list[type[Screen[Any]]]:
    """Every screen class memtui defines, in help order."""
    from memtui.tui import screens  # the screens home opens on first use, loaded for help

    for info in pkgutil.iter_modules(screens.__path__):
        importlib.import_module(f"{screens.__name__}.{info.name}")

    def walk(cls: type[Screen[Any]]) -> Iterator[type[Screen[Any]]]:
        for sub in cls.__subclasses__():
            module = sys.modules.get(sub.__module__)
            # a class its module still names (not a stale one a reload or a test left)
            if (
                sub.__module__.startswith("memtui.tui.")
                and vars(module or sys).get(sub.__name__) is sub
            ):
                yield sub
            yield from walk(sub)

    found = {cls.__name__: cls for cls in walk(Screen)}
    known = [found[name] for name in ORDER if name in found]
    rest = sorted((c for name, c in found.items() if name not in ORDER), key=title_of)
    return known + rest


def title_of(cls: type[DOMNode]) -> str:
    title = getattr(cls, "HELP_TITLE", None)
    if isinstance(title, str):
        return title
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0].rstrip(".") if doc else cls.__name__


def help_sections(app: App[Any], keymap: Mapping[str, str]) -> list[HelpSection]:
    def rows(bindings: list[BindingType]) -> list[HelpRow]:
        out = []
        for binding in bindings:
            if not isinstance(binding, Binding) or not binding.description:
                continue
            keys = keymap.get(binding.id or "", binding.key).split(",")
            shown = ", ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys)
            out.append((shown, binding.tooltip or binding.description, binding.id or ""))
        return out

    sections: list[HelpSection] = [(title_of(type(app)), rows(type(app).BINDINGS))]
    screens = memtui_screens()
    for n, cls in enumerate(screens):
        found = rows(cls.__dict__.get("BINDINGS", []))  # its own, not Textual's
        if found:
            sections.append((title_of(cls), found))
        if n == 0:  # the table sits on the first screen; how keys work follows it
            sections.append((title_of(MemoryTable), rows(MemoryTable.BINDINGS)))
            sections.append(KEYBOARD_MODEL)
    sections.append(
        (
            "Changing the store (the same keys on every screen)",
            [
                (
                    "ctrl+s",
                    "Show what the screen prepared (a merge, a plan's approved actions, "
                    "an undo, a rollback) and ask",
                    "",
                )
            ],
        )
    )
    sections.append(("Command palette", [("ctrl+p", "Commands: store, view, entry, theme", "")]))
    return sections
