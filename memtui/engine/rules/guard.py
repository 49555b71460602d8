"""The wholesale guard (every profile): no user's store is emptied without a decision
(engine/wholesale.py)."""

from __future__ import annotations

from memtui.engine.rules.run import PlanRun, Step
from memtui.engine.wholesale import hold_wholesale


def _hold_wholesale(run: PlanRun) -> None:
    """No user's store is emptied without a decision (engine/wholesale.py)."""
    run.warnings = hold_wholesale(run.b.actions, run.snapshot, run.profile.archive_line)


GUARD = Step("guard", 0.995, _hold_wholesale, store_wide=True)
