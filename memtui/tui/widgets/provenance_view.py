"""Where merged wording came from: each stretch of the text coloured and footnoted with the
member it came from (`[1]` the base, `[2]`… the others), and what was left out over the cap.

Reads the provenance a plan keeps in a merge action's `details["provenance"]` (or
`Service.wording_provenance` for a hand-merge): base, spans (start, end, member), added,
left_out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from memtui.engine.plan import Action
from memtui.textsafe import literal, one_line
from memtui.views import shorten

STYLES = ("cyan", "magenta", "green", "yellow", "blue", "red")


def wording_text(text: str, provenance: Mapping[str, Any], member_ids: Sequence[str]) -> Text:
    """The merged `text` with a footnote after each stretch naming its member, then the
    footnotes and what was left out."""
    base = str(provenance.get("base", ""))
    spans = sorted((int(s), int(e), str(i)) for s, e, i in provenance.get("spans", []))
    # numbered as the text uses them: the base first, then in order of appearance
    order = list(dict.fromkeys([base, *(i for _, _, i in spans), *member_ids]))
    number = {ident: n for n, ident in enumerate(order, start=1)}

    def style(ident: str) -> str:
        return STYLES[(number.get(ident, 1) - 1) % len(STYLES)]

    out = Text("Where the wording came from\n", style="bold")
    at = 0
    for start, end, ident in spans:
        if start < at or end > len(text):
            continue  # not this text's provenance: say nothing wrong
        out.append(literal(text[at:start]))
        out.append(literal(text[start:end]), style=style(ident))
        out.append(f"[{number.get(ident, '?')}]", style=f"bold {style(ident)}")
        at = end
    out.append(literal(text[at:]))
    if not spans:
        out.append("\n(in no member's words: your own text)", style="dim")
    out.append("\n")
    used = {ident for _, _, ident in spans}
    left_out = list(provenance.get("left_out", []))
    over_cap = {str(item.get("member", "")) for item in left_out}
    for ident in order:
        out.append(f"[{number[ident]}] ", style=f"bold {style(ident)}")
        out.append(one_line(ident))
        if ident == base:
            role = " (the base)"
        elif ident in used:
            role = ""
        else:
            role = " (over the cap)" if ident in over_cap else " (adds nothing new)"
        out.append(role + "\n", style="dim")
    if left_out and not provenance.get("added"):
        out.append("kept the base; nothing else fitted the cap\n", style="bold yellow")
    for item in left_out:
        ident = str(item.get("member", ""))
        out.append("left out ", style="yellow")
        out.append(f"[{number.get(ident, '?')}] ", style=f"bold {style(ident)}")
        out.append(literal(shorten(one_line(str(item.get("clause", ""))), 120)) + "\n")
    return out


def action_wording(action: Action) -> Text | None:
    """A plan's merge action: where its merged entry's wording came from (None for other
    actions, or a merge without provenance)."""
    provenance = action.details.get("provenance")
    if action.kind != "merge" or not isinstance(provenance, Mapping):
        return None
    before = [m.id for m in action.before]
    merged = next((m for m in action.after if m.id not in set(before)), None)
    if merged is None:
        return None
    return wording_text(merged.content, provenance, before)
