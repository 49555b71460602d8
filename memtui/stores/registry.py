"""Every store file format memtui knows, in the order a file's content is tried against them
(the first that recognises it reads it). A new format is its own module and one line here."""

from __future__ import annotations

from memtui.stores.claude_format import ClaudeFormat
from memtui.stores.document import StoreFormat
from memtui.stores.hermes_folder import HermesFolderFormat
from memtui.stores.hermes_format import HermesFormat
from memtui.stores.longterm_format import LongtermFormat
from memtui.stores.native_format import NativeFormat
from memtui.stores.pi_format import PiFormat

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
