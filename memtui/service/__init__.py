"""The application layer both front ends call: every operation a user can ask for, once.

A `Service` is built from the settings (read once) and a clock. The CLI parses arguments and
prints; the TUI shows and asks; neither builds engine or store objects itself, so a rule (pi's
content cap, which profile a store gets, what an edit may change) lives here and behaves the
same in both.

`Service` is composed of a part per concern, each in its own module and each handed what it
needs (`base.Shared`: the settings, the clock, notices; another part where it builds on one):
`stores` (opening, `opening`), `entries` (changing one entry, `entry_edits`), `merges` (merges,
supersedes, restores, lineage), `history` (the ledger's images, undo and backups, `undo`),
`profiles`, `plans`, `labels`, `calibration` and `outside` (what the agent changed).
Call `svc.plans.apply(...)`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui import locations
from memtui.config import Settings, load_user_settings, save_setting
from memtui.service.base import History, Shared, clock_from_env, parse_time

if TYPE_CHECKING:
    from memtui.service.calibration import CALIBRATION_METHODS, Calibration, CalibrationPart
    from memtui.service.entry_edits import Entries, EntryEdit
    from memtui.service.labels import LabelPair, Labels
    from memtui.service.merges import Lineage, Merges
    from memtui.service.opening import DEMO_MAX_SIZE, Stores
    from memtui.service.outside import Outside
    from memtui.service.pg_users import PgUsers
    from memtui.service.plans import LlmRequest, Plans, plan_summary
    from memtui.service.profiles import Profiles
    from memtui.service.undo import Ledger

# a part, and what it declares, is imported when first asked for: a command that only opens a
# store does not load the planner, the similarity engine or numpy
_DECLARED_IN = {
    "CALIBRATION_METHODS": "calibration",
    "Calibration": "calibration",
    "EntryEdit": "entry_edits",
    "LabelPair": "labels",
    "Lineage": "merges",
    "DEMO_MAX_SIZE": "opening",
    "LlmRequest": "plans",
    "plan_summary": "plans",
}


def __getattr__(name: str) -> Any:
    if name not in _DECLARED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_DECLARED_IN[name]}"), name)


__all__ = [
    "CALIBRATION_METHODS",
    "DEMO_MAX_SIZE",
    "Calibration",
    "EntryEdit",
    "History",
    "LabelPair",
    "Lineage",
    "LlmRequest",
    "Service",
    "Settings",
    "clock_from_env",
    "parse_time",
    "plan_summary",
]
"""What the service itself declares (and the settings it is built from); the front ends import
the record, plan, store and engine types they show from where those are declared (the contracts
in pyproject.toml say which)."""


class Service:
    """Every operation either front end offers, built once from the settings and a clock."""

    def __init__(
        self, settings: Settings | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.shared = Shared(settings, clock)

    @cached_property
    def stores(self) -> Stores:
        from memtui.service.opening import Stores

        return Stores(self.shared)

    @cached_property
    def entries(self) -> Entries:
        from memtui.service.entry_edits import Entries

        return Entries(self.shared)

    @cached_property
    def merges(self) -> Merges:
        from memtui.service.merges import Merges

        return Merges(self.shared)

    @cached_property
    def history(self) -> Ledger:
        from memtui.service.undo import Ledger

        return Ledger(self.shared)

    @cached_property
    def profiles(self) -> Profiles:
        from memtui.service.profiles import Profiles

        return Profiles(self.shared)

    @cached_property
    def plans(self) -> Plans:
        from memtui.service.plans import Plans

        return Plans(self.shared)

    @cached_property
    def labels(self) -> Labels:
        from memtui.service.labels import Labels

        return Labels(self.shared, self.profiles)

    @cached_property
    def calibration(self) -> CalibrationPart:
        from memtui.service.calibration import CalibrationPart

        return CalibrationPart(self.shared, self.labels)

    @cached_property
    def outside(self) -> Outside:
        from memtui.service.outside import Outside

        return Outside(self.shared)

    @cached_property
    def pg_users(self) -> PgUsers:
        from memtui.service.pg_users import PgUsers

        return PgUsers(self.shared)

    @classmethod
    def from_config(cls, flag: str | None = None) -> Service:
        """Settings read once from `--config`, else `$MEMTUI_CONFIG`, else the default place."""
        return cls(load_user_settings(flag))

    @property
    def settings(self) -> Settings:
        return self.shared.settings

    def now(self) -> datetime:
        return self.shared.now()

    def notices(self) -> list[str]:
        """One-line notes for the user gathered since the last call (e.g. how to get
        embeddings), each said once."""
        out, self.shared.notices = self.shared.notices, []
        return out

    def sidecar_warnings(self) -> list[str]:
        """`stores.sidecar_warnings()`, without loading the store machinery when no store was
        opened."""
        return self.stores.sidecar_warnings() if self.shared.opened else []

    def log_error(self, text: str) -> Path | None:
        """Append a bug's traceback to the error log; where it went, or None if it could not
        be written (the front end still says the bug in one line)."""
        path = locations.error_log()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as log:
                log.write(f"--- {datetime.now(UTC).isoformat(timespec='seconds')}\n{text}")
        except OSError:
            return None
        return path

    def save_setting(self, table: str, key: str, value: str, path: Path | None = None) -> None:
        """Write one setting to the config file (default: the one in use), keeping the rest of
        it as it is."""
        save_setting(path or self.settings.path or locations.config_file(), table, key, value)
