"""Plan files: reading (only regular files within the size limits), the two versions of the
format (`full`: whole records; `compact`: only what changes, decays, expiries and absorptions
as bulk rows), sealing the wording memtui writes, the person's decisions, and checking a plan
read from a file against the store it is loaded for. `load` returns a complete, checked plan;
a plan made in memory never passes through here on its way to being applied."""

from memtui.planfile.reading import PLAN_SIZE_LIMIT, PLAN_V2_SIZE_LIMIT, load, read_file
from memtui.planfile.seals import load_key
from memtui.planfile.writing import json_parts, to_bytes, write, write_streamed

__all__ = [
    "PLAN_SIZE_LIMIT",
    "PLAN_V2_SIZE_LIMIT",
    "json_parts",
    "load",
    "load_key",
    "read_file",
    "to_bytes",
    "write",
    "write_streamed",
]
