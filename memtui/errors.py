"""Errors a user can cause and fix; the CLI prints them as one `memtui: ...` line."""


class MemtuiError(Exception):
    """A problem with the user's input or environment, explained in one line."""


class StoreFormatError(MemtuiError):
    """The store file cannot be read: missing, unreadable, not JSON, wrong shape or types."""


class StoreLockedError(MemtuiError):
    """Another process holds the store's lock file."""


class ConflictError(MemtuiError):
    """The store changed on disk in entries this change touches; nothing was written."""


class NotFoundError(MemtuiError):
    """An id (memory, transaction, backup) that the store does not hold."""


class StoreWriteError(MemtuiError):
    """A file memtui writes (the store, its lock, a backup, the ledger) could not be written;
    the commit did not happen."""
