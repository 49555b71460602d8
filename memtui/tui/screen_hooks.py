"""What the app asks of the screens on its stack, when a screen has it: work not yet applied
or saved, and being told that the store was committed to or reloaded."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memtui.stores.protocol import MemoryStore


@runtime_checkable
class HoldsUnsaved(Protocol):
    def unsaved(self) -> str | None:
        """What would be lost by closing the screen now (None: nothing)."""
        ...


@runtime_checkable
class FollowsCommits(Protocol):
    def store_changed(self) -> None:
        """A commit changed the store the screen shows."""
        ...


@runtime_checkable
class FollowsReloads(Protocol):
    def store_reloaded(self, store: MemoryStore) -> None:
        """The store was read again from its file (or table)."""
        ...
