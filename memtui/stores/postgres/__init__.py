"""The Go system's PostgreSQL store (`postgresql://…`): needs the `postgres` extra (psycopg)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memtui.errors import MemtuiError
from memtui.stores.file.backups import DEFAULT_KEEP
from memtui.stores.postgres.limits import DEFAULT_LIMITS, PgLimits
from memtui.stores.postgres.location import PgLocation, is_postgres_location

if TYPE_CHECKING:
    from memtui.stores.postgres.pg_store import PgStore

INSTALL_HINT = 'PostgreSQL stores need psycopg: pip install "memtui[postgres]"'


def open_postgres_store(
    location: str,
    keep_backups: int = DEFAULT_KEEP,
    limits: PgLimits = DEFAULT_LIMITS,
    *,
    by_user: bool = False,
) -> PgStore:
    """`by_user`: a `PgTable` (counts, no rows) when the location names no one user."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise MemtuiError(INSTALL_HINT) from None
    from memtui.stores.postgres.pg_store import PgStore
    from memtui.stores.postgres.table import PgTable

    if by_user and PgLocation.parse(location).user is None:
        return PgTable.open(location, keep_backups, limits)
    return PgStore.open(location, keep_backups, limits)


__all__ = ["INSTALL_HINT", "is_postgres_location", "open_postgres_store"]
