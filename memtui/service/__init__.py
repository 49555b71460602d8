"""The application layer both front ends call: every operation a user can ask for, once.

A `Service` is built from the settings (read once) and a clock. The CLI parses arguments and
prints; the TUI shows and asks; neither builds engine or store objects itself, so a rule (pi's
content cap, which profile a store gets, what an edit may change) lives here and behaves the
same in both.

`Service` is one face composed of a part per concern, each in its own module: opening stores
(`opening`), changing one entry (`entry_edits`), merges (`merges`), undo and backups (`undo`),
profiles and what they measure (`profiles`), plans (`plans`), labels (`labels`) and calibration
(`calibration`); `base` holds what they share. Callers import from `memtui.service` only.
"""

from __future__ import annotations

from memtui.config import Settings, load_user_settings
from memtui.curate import History, Lineage
from memtui.demo import DEFAULT_SIZE as DEFAULT_DEMO_SIZE
from memtui.engine.calibration import DEFAULT_TARGET_PRECISION
from memtui.engine.candidates import Pair
from memtui.engine.decay import MODELS as DECAY_MODELS
from memtui.engine.decay import DecayModel
from memtui.engine.grouping import Group
from memtui.engine.kinds import KINDS
from memtui.engine.plan import Action, Plan, closure
from memtui.engine.planner import Cancelled
from memtui.engine.profiles import PROFILE_NAMES, Profile
from memtui.engine.similarity import METHODS
from memtui.service.base import Store, clock_from_env, parse_time
from memtui.service.calibration import CALIBRATION_METHODS, Calibration, CalibrationMixin
from memtui.service.entry_edits import EntryEdit, EntryEditsMixin
from memtui.service.labels import LabelPair, LabelsMixin
from memtui.service.merges import MergesMixin
from memtui.service.opening import DEMO_MAX_SIZE, StoresMixin
from memtui.service.plans import LlmRequest, PlansMixin, plan_summary
from memtui.service.profiles import ProfilesMixin
from memtui.service.undo import UndoMixin
from memtui.stores import EXPORT_FORMATS, Backup, Transaction
from memtui.stores.labels import Label
from memtui.stores.progress import CommitProgress

__all__ = [
    "CALIBRATION_METHODS",
    "DECAY_MODELS",
    "DEFAULT_DEMO_SIZE",
    "DEFAULT_TARGET_PRECISION",
    "DEMO_MAX_SIZE",
    "EXPORT_FORMATS",
    "KINDS",
    "METHODS",
    "PROFILE_NAMES",
    "Action",
    "Backup",
    "Calibration",
    "Cancelled",
    "CommitProgress",
    "DecayModel",
    "EntryEdit",
    "Group",
    "History",
    "Label",
    "LabelPair",
    "Lineage",
    "LlmRequest",
    "Pair",
    "Plan",
    "Profile",
    "Service",
    "Settings",
    "Store",
    "Transaction",
    "clock_from_env",
    "closure",
    "parse_time",
    "plan_summary",
]


class Service(
    StoresMixin,
    EntryEditsMixin,
    MergesMixin,
    UndoMixin,
    PlansMixin,
    CalibrationMixin,
    LabelsMixin,
    ProfilesMixin,
):
    """Every operation either front end offers, built once from the settings and a clock."""

    @classmethod
    def from_config(cls, flag: str | None = None) -> Service:
        """Settings read once from `--config`, else `$MEMTUI_CONFIG`, else the default place."""
        return cls(load_user_settings(flag))
