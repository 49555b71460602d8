"""The review texts of the actions a plan file holds as bulk rows: the planner writes them and
a plan file (`memtui.planfile.compact`) rebuilds them from a row's numbers."""

from __future__ import annotations

from memtui.engine.kinds import kind_of


def decay_reason(
    days: float, before: float, after: float, rate: float, archive_line: float | None
) -> str:
    """The review text of one decay."""
    note = ""
    if archive_line is not None and after < archive_line <= before:
        note = f"; below {archive_line:g} it is no longer injected"
    return (
        f"Not decayed for {days:.1f} days: importance {before:.2f} → {after:.2f} "
        f"(×{rate:g} per day){note}."
    )


def expiry_reason(kind: str, age: float, importance: float, below: float) -> str:
    """The review text of one expiry or archiving that needs no decision."""
    return (
        f"{age:.0f} days old with importance {importance:.2f} (below {below:g}): "
        f"{kind_of(kind).verb}, restorable from the ledger."
    )
