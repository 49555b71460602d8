"""Which user of a big database table to open (the TUI's user picker): each user's rows from
one `GROUP BY`, and the location that opens one of them (`#user=U`)."""

from __future__ import annotations

from dataclasses import dataclass

from memtui.config import pg_limits
from memtui.service.base import Part
from memtui.stores.postgres import is_postgres_location, open_postgres_store

PICK_FROM = 100_000
"""Rows in a table of every user above which the TUI asks which user to open first."""


@dataclass(frozen=True, slots=True)
class UserRows:
    user: str
    rows: int


@dataclass(frozen=True, slots=True)
class TableUsers:
    """A table's users, most rows first."""

    rows: int
    users: list[UserRows]


class PgUsers(Part):
    """A database table's users, to open one at a time."""

    def to_pick(self, location: str) -> TableUsers | None:
        """The users to choose from before opening `location`: None when it is not a
        database table of every user, or holds at most `PICK_FROM` rows (it opens whole)."""
        if not is_postgres_location(location):
            return None
        from memtui.stores.postgres.table import PgTable, user_counts

        table = open_postgres_store(
            location,
            self.shared.settings.keep_backups,
            pg_limits(self.shared.settings),
            by_user=True,
        )
        try:
            if not isinstance(table, PgTable) or len(table) <= PICK_FROM:
                return None  # one user named already, or small enough to open whole
            users = [UserRows(u.user, u.rows) for u in user_counts(table)]
            return TableUsers(len(table), users)
        finally:
            table.close()

    def for_user(self, location: str, user: str) -> str:
        """`location` opening only `user`'s rows."""
        from memtui.stores.postgres.location import with_user

        return with_user(location, user)
