"""The `[keymap]` of the config file, checked before the TUI starts: every binding id must
exist, every key must be one a terminal can send, and no key may be bound to two things on one
screen (the app's own keys count on every screen; the table's on the table screen). Each
problem is one line naming the config file and line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.keys import Keys, _character_to_key

from memtui.tui.bindings import TABLE

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
# what a key may be named: a printable character or its name (`question_mark`), or a named key
# (`escape`, `f5`, `pagedown`)
KEY_NAMES = frozenset(
    {_character_to_key(chr(c)) for c in range(33, 127)}
    | {str(k.value) for k in Keys if "+" not in str(k.value)}
    | {"space", "enter", "tab", "escape", "backspace", "delete", "insert"}
)


def screens_and_bindings(app_type: type[Any]) -> Iterator[tuple[str, list[Binding]]]:
    """Each screen by class name, with every binding that acts there: the app's (`app_type`)
    on every screen, the table's on the table screen (all from bindings.py)."""
    app = [key.binding() for key in TABLE[app_type.__name__]]
    table = [key.binding() for key in TABLE["MemoryTable"]]
    for name, keys in TABLE.items():
        if name in (app_type.__name__, "MemoryTable"):
            continue
        extra = table if name == "HomeScreen" else []
        yield name, [*app, *extra, *(key.binding() for key in keys)]


def bad_key(key: str) -> str | None:
    """Why `key` is not a key a terminal sends (None: it is one)."""
    if not key:
        return "an empty key"
    *mods, base = key.split("+") if len(key) > 1 else [key]
    unknown = [m for m in mods if m not in MODIFIERS]
    if unknown:
        return f"{unknown[0]!r} is not a modifier (ctrl, shift, alt)"
    if len(base) == 1 and base.isprintable():
        return None
    if base not in KEY_NAMES:
        return f"{base!r} is not a key name (e.g. x, ctrl+x, f5, escape, space, question_mark)"
    return None


def _normal(key: str) -> str:
    key = key.strip()
    return _character_to_key(key) if len(key) == 1 else key


def keymap_problems(
    app_type: type[Any],
    keymap: Mapping[str, str],
    lines: Mapping[str, int],
    config: Path | None,
) -> list[str]:
    """One line per problem with `keymap`, each naming the config line."""

    def where(ident: str) -> str:
        line = lines.get(ident)
        name = str(config) if config is not None else "the config"
        return f"{name}:{line}: [keymap] {ident!r}" if line else f"{name}: [keymap] {ident!r}"

    screens = list(screens_and_bindings(app_type))
    known = {b.id for _, bindings in screens for b in bindings}
    problems = []
    for ident, keys in keymap.items():
        if ident not in known:
            problems.append(f"{where(ident)}: no such binding id (? in memtui lists every id)")
            continue
        for key in keys.split(","):
            why = bad_key(key.strip())
            if why:
                problems.append(f"{where(ident)}: {key.strip()!r} is not a key: {why}")
                break
    if problems:
        return problems
    said: set[tuple[str, ...]] = set()
    for screen, bindings in screens:
        taken: dict[str, str] = {}
        for binding in bindings:
            assert binding.id is not None
            keys = keymap.get(binding.id, binding.key)
            for key in {_normal(k) for k in keys.split(",")}:
                other = taken.setdefault(key, binding.id)
                pair = tuple(sorted((other, binding.id)))
                if other == binding.id or pair in said:
                    continue
                if other not in keymap and binding.id not in keymap:
                    continue  # memtui's own defaults: not the config's doing
                said.add(pair)
                mine = binding.id if binding.id in keymap else other
                problems.append(
                    f"{where(mine)}: {key!r} is bound to both {other!r} and {binding.id!r} "
                    f"on {screen}"
                )
    return problems
