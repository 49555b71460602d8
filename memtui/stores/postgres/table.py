"""`PgTable`: the agent's table known by its counts, its rows read one user at a time.

A `PgStore` holds every row as a `Memory`; a `PgTable` holds none. It is what a plan of a big
table opens: `snapshot()` is one REPEATABLE READ READ ONLY transaction (the plan sees one state
of the table) in which the rows come through server-side cursors, a user's rows at a time
(`TableSnapshot.by_user`), or in id order without their content (`TableSnapshot.light`). The
table's schema is the agent's: nothing here adds an index (sorting by user is the server's
work, once per plan).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from memtui.errors import MemtuiError, StoreFormatError
from memtui.gcpause import gc_paused
from memtui.model import HIDDEN_STATUSES, Memory
from memtui.stores.postgres import reading, schema
from memtui.stores.postgres.pg_store import _FETCH, PgStore, Stamp, _link_successors
from memtui.stores.postgres.rows import Side
from memtui.stores.postgres.shape import Shape

# the user a row belongs to, as memtui names it (reading.reader: no user, or an empty one, is
# `legacy`)
USER_KEY = "coalesce(nullif(t.user_id, ''), 'legacy')"


@dataclass(frozen=True, slots=True)
class UserCount:
    user: str
    rows: int
    first_id: int
    """Its lowest row id: users in this order are users in the table's order."""


def user_counts(store: PgStore) -> list[UserCount]:
    """Each user's rows (one `GROUP BY`), most rows first, then by name."""
    conn = store._connection()
    with store._asking("its users"), conn.transaction():
        cur = conn.cursor()
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _counts(store, cur)


def _counts(store: PgStore, cur: psycopg.Cursor[Any]) -> list[UserCount]:
    query = sql.SQL(
        "SELECT {key}, count(*), min(t.id) FROM {table} AS t GROUP BY 1 ORDER BY 2 DESC, 1"
    ).format(key=sql.SQL(USER_KEY), table=store._ident())
    return [UserCount(str(u), int(n), int(i)) for u, n, i in cur.execute(query)]


class PgTable(PgStore):
    """The table without its rows: counts, stamp and ledger; rows only through `snapshot()`.
    Asking it for its entries (`memories`, `get`, `find`) is refused: open a `PgStore`."""

    def reload(self) -> None:
        with self._stamped():
            pass
        self._memories, self._tx_cache, self._counters = {}, None, None

    @contextlib.contextmanager
    def _stamped(
        self, *, binary: bool = False
    ) -> Iterator[tuple[psycopg.Connection[Any], psycopg.Cursor[Any]]]:
        """One REPEATABLE READ READ ONLY transaction on the table, its stamp taken first (the
        state everything read in it belongs to); a server's error is one line."""
        conn = self._connection()
        try:
            with conn.transaction():
                cur = conn.cursor(binary=binary)
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                self._check_table(cur)
                self._stamp = self._read_stamp(cur)
                yield conn, cur
        except psycopg.Error as e:
            raise MemtuiError(f"{self.path}: cannot read it: {self._why(e)}") from None

    def _check_table(self, cur: psycopg.Cursor[Any]) -> None:
        if not self._exists(cur, self.table):
            raise StoreFormatError(
                f"{self.path}: the database has no table {self.table} "
                "(name another with #table=NAME)"
            )
        self._shape = Shape.read(cur, self.table, self.path)

    def __len__(self) -> int:
        return self._stamp[0]

    def _unloaded(self) -> MemtuiError:
        return MemtuiError(f"{self.path}: opened user by user; its rows are not loaded")

    def memories(self) -> list[Memory]:
        raise self._unloaded()

    def get(self, memory_id: str) -> Memory:
        raise self._unloaded()

    def find(self, memory_id: str) -> Memory | None:
        raise self._unloaded()

    def rows_named(self, ids: Collection[str]) -> tuple[dict[str, Memory], dict[str | None, int]]:
        """The rows of these ids (an id no row has is left out), as a `PgStore` holds them
        (linked to their successors), and each user's active rows counted (one `GROUP BY`,
        the users in the order of their first active row), in one snapshot whose stamp the
        table takes: what applying a plan reads of it. The rows are kept, for the commit."""
        wanted = sorted({int(i) for i in ids if i.isdigit()})
        memories: dict[str, Memory] = {}
        with self._stamped(binary=True) as (_, cur):
            query = sql.SQL("SELECT {} FROM {} AS t WHERE t.id = ANY(%s) ORDER BY t.id").format(
                self._shape.fast_select(), self._ident()
            )
            for start in range(0, len(wanted), _FETCH):
                batch = wanted[start : start + _FETCH]
                memory_of = reading.reader(self._read_sides(cur, batch))
                memories.update((m.id, m) for m in map(memory_of, cur.execute(query, [batch])))
            successors = self._successors_of(cur, [int(i) for i in memories])
            active = self._active_counts(cur)
        for old, new in successors.items():
            memories[old] = memories[old].with_(superseded_by=new)
        self._memories, self._tx_cache = memories, None
        return dict(memories), active

    def _successors_of(self, cur: psycopg.Cursor[Any], ids: list[int]) -> dict[str, str]:
        """Of these rows, those another row supersedes: the highest such row's id (what
        `_link_successors` gives linking every row in id order)."""
        query = sql.SQL(
            "SELECT o.old::text, max(s.id)::text FROM {} AS s "
            "CROSS JOIN LATERAL unnest(s.supersedes) AS o(old) WHERE o.old = ANY(%s) GROUP BY 1"
        ).format(self._ident())
        return {str(old): str(new) for old, new in cur.execute(query, [ids])} if ids else {}

    def visible_count(self) -> int:
        """The rows a person is shown (not merged, superseded or deleted), counted now."""
        conn = self._connection()
        with self._asking("its rows"), conn.transaction():
            return self._counted(conn.cursor())[1]

    def _active_counts(self, cur: psycopg.Cursor[Any]) -> dict[str | None, int]:
        return self._counted(cur)[0]

    def _counted(self, cur: psycopg.Cursor[Any]) -> tuple[dict[str | None, int], int]:
        """Each user's rows `reading.reader` reads as active, the users in the order of
        their first (one `GROUP BY`); and the rows a person is shown."""
        quarantined = self._shape._cast("quarantined") or "quarantined"
        side, params = "NULL::text", []
        join: sql.Composable = sql.SQL("")
        if self._exists(cur, schema.ENTRY):
            side, params = "nullif(e.status, '')", [self.table]
            on = " LEFT JOIN {} AS e ON e.store_table = %s AND e.memory_id = t.id"
            join = sql.SQL(on).format(sql.Identifier(schema.ENTRY))
        # reading.reader's status, in SQL
        status = (
            f"CASE WHEN t.deleted_at IS NOT NULL THEN "
            f"CASE WHEN {side} = 'merged' THEN 'merged' ELSE 'deleted' END "
            f"WHEN coalesce(t.{quarantined}, false) THEN 'quarantined' "
            f"WHEN {side} IS NOT NULL AND {side} <> 'merged' THEN {side} "
            "WHEN coalesce(t.superseded, false) THEN 'superseded' ELSE 'active' END"
        )
        hidden = ", ".join(f"'{s.value}'" for s in HIDDEN_STATUSES)
        query = sql.SQL(
            "SELECT u, count(*) FILTER (WHERE st = 'active'), "
            "count(*) FILTER (WHERE st NOT IN ({hidden})), min(id) FILTER (WHERE st = 'active') "
            "FROM (SELECT {key} AS u, {status} AS st, t.id FROM {table} AS t{join}) AS r "
            "GROUP BY 1 ORDER BY 4 NULLS LAST"
        ).format(
            hidden=sql.SQL(hidden),
            key=sql.SQL(USER_KEY),
            status=sql.SQL(status),
            table=self._ident(),
            join=join,
        )
        active: dict[str | None, int] = {}
        visible = 0
        for user, live, shown, _ in cur.execute(query, params):
            if live:
                active[str(user)] = int(live)
            visible += int(shown)
        return active, visible

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[TableSnapshot]:
        """One consistent state of the table to read (the stamp it has is the plan's)."""
        with self._stamped() as (conn, cur):
            yield TableSnapshot(self, conn, self._stamp, self._read_sides(cur, None))


class TableSnapshot:
    """The table as one transaction sees it."""

    def __init__(
        self, table: PgTable, conn: psycopg.Connection[Any], stamp: Stamp, sides: dict[int, Side]
    ) -> None:
        self.table, self.conn, self.stamp, self.sides = table, conn, stamp, sides
        self.users = _counts(table, conn.cursor())

    @property
    def fingerprint(self) -> str:
        return "pg:" + ":".join(map(str, self.stamp))

    @property
    def top_id(self) -> int:
        return self.stamp[1]

    def most_successors(self, top: int) -> list[str]:
        """The `top` rows that supersede most others, in the table's order among equals."""
        if top <= 0:
            return []
        query = sql.SQL(
            "SELECT t.id::text FROM {} AS t WHERE cardinality(t.supersedes) > 0 "
            "ORDER BY cardinality(t.supersedes) DESC, t.id LIMIT %s"
        ).format(self.table._ident())
        return [r[0] for r in self.conn.execute(query, [top])]

    def _rows(self, query: sql.Composed, name: str) -> Iterator[tuple[Any, ...]]:
        with self.conn.cursor(name=name, binary=True) as stream:
            stream.itersize = _FETCH
            stream.execute(query)
            while batch := stream.fetchmany(_FETCH):
                yield from batch

    def light(self) -> Iterator[Memory]:
        """Every row in id order, without its content and embedding."""
        query = sql.SQL("SELECT {} FROM {} AS t ORDER BY t.id").format(
            self.table._shape.fast_select(light=True), self.table._ident()
        )
        return map(reading.reader(self.sides), self._rows(query, "memtui_light"))

    def whole(self) -> list[Memory]:
        """Every row in id order, as `PgStore` holds them."""
        query = sql.SQL("SELECT {} FROM {} AS t ORDER BY t.id").format(
            self.table._shape.fast_select(), self.table._ident()
        )
        memory_of = reading.reader(self.sides)
        with gc_paused():
            memories = {m.id: m for m in map(memory_of, self._rows(query, "memtui_read"))}
        _link_successors(memories, memories.values())
        return list(memories.values())

    def by_user(self) -> Iterator[list[Memory]]:
        """Each user's rows in id order, linked to their successors as a `PgStore` links them
        (a successor of another user's too); the users by name."""
        successors = self._successors_elsewhere()
        query = sql.SQL("SELECT {} FROM {} AS t ORDER BY {}, t.id").format(
            self.table._shape.fast_select(), self.table._ident(), sql.SQL(USER_KEY)
        )
        memory_of = reading.reader(self.sides)
        user: dict[str, Memory] = {}
        name: str | None = None
        for memory in map(memory_of, self._rows(query, "memtui_by_user")):
            if memory.user_id != name:
                if user:
                    _link(user, successors)
                    yield list(user.values())
                user, name = {}, memory.user_id
            user[memory.id] = memory
        if user:
            _link(user, successors)
            yield list(user.values())

    def _successors_elsewhere(self) -> dict[str, int]:
        """Rows another user's row supersedes: the highest such successor's id."""
        key_s, key_x = USER_KEY.replace("t.", "s."), USER_KEY.replace("t.", "x.")
        query = sql.SQL(
            "SELECT o.old::text, max(s.id) FROM {table} AS s "
            "CROSS JOIN LATERAL unnest(s.supersedes) AS o(old) "
            "JOIN {table} AS x ON x.id = o.old "
            "WHERE {key_x} <> {key_s} GROUP BY 1"
        ).format(table=self.table._ident(), key_s=sql.SQL(key_s), key_x=sql.SQL(key_x))
        return {str(old): int(new) for old, new in self.conn.execute(query)}


def _link(memories: dict[str, Memory], elsewhere: dict[str, int]) -> None:
    """Each row superseded by a row memtui reads gets the highest such successor's id (what
    `PgStore` gets linking every row in id order, `_link_successors`)."""
    best: dict[str, int] = {}
    for memory in memories.values():
        for old in memory.supersedes:
            if old in memories:
                new = int(memory.id)
                if new > best.get(old, -1):
                    best[old] = new
    for old, new in elsewhere.items():
        if old in memories and new > best.get(old, -1):
            best[old] = new
    for old, new in best.items():
        target = memories[old]
        if target.superseded_by != str(new):
            memories[old] = target.with_(superseded_by=str(new))
