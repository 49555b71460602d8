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

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memtui import locations
from memtui.config import Settings, load_user_settings, save_setting
from memtui.service.base import History, Shared, clock_from_env, parse_time
from memtui.service.calibration import CALIBRATION_METHODS, Calibration, CalibrationPart
from memtui.service.entry_edits import Entries, EntryEdit
from memtui.service.labels import LabelPair, Labels
from memtui.service.merges import Lineage, Merges
from memtui.service.opening import DEMO_MAX_SIZE, Stores
from memtui.service.outside import Outside
from memtui.service.plans import LlmRequest, Plans, plan_summary
from memtui.service.profiles import Profiles
from memtui.service.undo import Ledger

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
        self.stores = Stores(self.shared)
        self.entries = Entries(self.shared)
        self.merges = Merges(self.shared)
        self.history = Ledger(self.shared)
        self.profiles = Profiles(self.shared)
        self.plans = Plans(self.shared)
        self.labels = Labels(self.shared, self.profiles)
        self.calibration = CalibrationPart(self.shared, self.labels)
        self.outside = Outside(self.shared)

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
