"""Memory text in an editable field: shown with `literal`'s visible escapes (a text area puts
its characters on the terminal as they are), and given back unchanged when the person left
the escaped form as it was shown."""

from __future__ import annotations

from memtui.textsafe import literal


def shown(text: str) -> str:
    return literal(text)


def typed(field: str, original: str) -> str:
    """What the field means: `original` when it still shows `original` untouched."""
    return original if field == literal(original) else field
