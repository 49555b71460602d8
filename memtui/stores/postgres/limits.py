"""How long memtui waits on a PostgreSQL server (`[postgres]` in the config): for a connection,
for a row or table another session holds, for one statement. 0 waits without a limit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PgLimits:
    connect_timeout: float = 10.0
    """Seconds to wait for the server to answer a new connection."""
    lock_timeout: float = 10.0
    """Seconds to wait for a row (or memtui's table lock) another session holds."""
    statement_timeout: float = 300.0
    """Seconds one statement may run."""

    def session(self) -> str:
        """The `SET` statements that put the lock and statement limits on a session."""
        return (
            f"SET lock_timeout = {_ms(self.lock_timeout)}; "
            f"SET statement_timeout = {_ms(self.statement_timeout)}"
        )


DEFAULT_LIMITS = PgLimits()


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000)) if seconds > 0 else 0


def seconds(value: float) -> str:
    return f"{value:g} s"
