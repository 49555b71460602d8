"""Every store file format memtui knows, in the order a file's content is tried against them
(the first that recognises it reads it). A new format is its own module and one line here."""

from __future__ import annotations

from memtui.stores.formats.claude_code import ClaudeFormat
from memtui.stores.formats.document import StoreFormat
from memtui.stores.formats.hermes import HermesFormat
from memtui.stores.formats.hermes_folder import HermesFolderFormat
from memtui.stores.formats.longterm import LongtermFormat
from memtui.stores.formats.native import NativeFormat
from memtui.stores.formats.pi import PiFormat

FORMATS: dict[str, StoreFormat] = {
    fmt.name: fmt
    for fmt in (
        ClaudeFormat(),
        HermesFolderFormat(),
        NativeFormat(),
        PiFormat(),
        LongtermFormat(),
        HermesFormat(),
    )
}
