"""`PgStore`: the Go system's `long_term_memory` table, live, behind the `Store` interface.

One memtui transaction is one PostgreSQL transaction, as the Go system's own consolidation
does it: the touched rows locked `FOR UPDATE` in id order, each version compared with the one
memtui loaded (a row the agent changed refuses the transaction, unless what memtui sees of it
is unchanged), the rows written in batches (COPY into a temporary table, one `UPDATE … FROM`,
one `INSERT … SELECT`) with `version + 1`, `updated_at` and Go's `content_hash`, the outbox
events the Go system writes, and memtui's ledger, before-images and side statuses — all
committed together or not at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb, set_json_dumps, set_json_loads

from memtui.errors import ConflictError, MemtuiError, NotFoundError, StoreFormatError
from memtui.gcpause import gc_paused
from memtui.model import Memory, Status
from memtui.stores.file.backups import DEFAULT_KEEP, Backup
from memtui.stores.file.store import Change
from memtui.stores.ledger import ChangeImage, LedgerViews, Transaction, undo_target
from memtui.stores.postgres import copies, reading, rows, schema
from memtui.stores.postgres.limits import DEFAULT_LIMITS, PgLimits, seconds
from memtui.stores.postgres.location import PgLocation, PgPath
from memtui.stores.postgres.rows import COLUMNS, Row, Side
from memtui.stores.postgres.shape import Shape
from memtui.stores.progress import CommitProgress, Stage
from memtui.textsafe import one_line
from memtui.traits import FormatTraits

log = logging.getLogger(__name__)


def _not_the_copy_left_behind(record: logging.LogRecord) -> bool:
    """psycopg's note that a failed COPY could not be ended: the failure itself is said."""
    return not str(record.msg).startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_not_the_copy_left_behind)
_FETCH = 5000
_OUTBOX = "memory_outbox"
# the server's counts of rows written to these tables (cumulative statistics, a few seconds late)
_COUNTERS = (
    "SELECT relid::regclass::text, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
    "WHERE relid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest(%s::text[]) AS t)) ORDER BY 1"
)
_FULL_POLL = 10
_OUTBOX_COLUMNS = (
    "event_id",
    "aggregate_id",
    "user_id",
    "aggregate_version",
    "event_type",
    "target",
    "payload",
)
# (rows, highest id, sum of versions, newest memtui transaction): every Go write moves the
# version sum, every insert the count, every memtui write the transaction
Stamp = tuple[int, int, int, int]


class PgStore(LedgerViews):
    format_name = "postgres"
    # the Go system's table: it plans as the Go system's files do
    traits = FormatTraits(default_profile="longterm", ledger_in_store=True, copies_table=True)
    place = "in the database"
    sidecar: Path | None = None  # memtui keeps no files beside a database

    def __init__(
        self,
        location: PgLocation,
        keep_backups: int = DEFAULT_KEEP,
        limits: PgLimits = DEFAULT_LIMITS,
    ) -> None:
        self.location = location
        self.limits = limits
        self.path: PgPath = location.display
        self.table = location.table
        self.keep_backups = max(1, keep_backups)
        self.notices: list[str] = []
        self._conn: psycopg.Connection[Any] | None = None
        self._shape = Shape.of_go()
        self._memories: dict[str, Memory] = {}
        self._stamp: Stamp = (0, 0, 0, 0)
        self._tx_cache: list[Transaction] | None = None
        self._pending: dict[str, Memory] = {}  # entries as the commit in progress writes them
        self._counters: list[Any] | None = None  # the write counters at the last exact poll
        self._changed, self._polls = False, 0
        self.reload()

    @classmethod
    def open(
        cls, location: str, keep_backups: int = DEFAULT_KEEP, limits: PgLimits = DEFAULT_LIMITS
    ) -> PgStore:
        return cls(PgLocation.parse(location), keep_backups, limits)

    # -- the connection -------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = None
            wait = self.limits.connect_timeout
            limit: dict[str, Any] = {}
            if wait > 0 and "connect_timeout" not in self.location.conninfo:
                limit["connect_timeout"] = max(2, math.ceil(wait))  # libpq's least
            try:
                conn = psycopg.connect(
                    self.location.conninfo, autocommit=True, application_name="memtui", **limit
                )
            except psycopg.errors.ConnectionTimeout:
                raise MemtuiError(
                    f"{self.path}: cannot connect: the server did not answer within "
                    f"{seconds(wait)} ([postgres] connect_timeout)"
                ) from None
            except psycopg.Error as e:
                raise MemtuiError(f"{self.path}: cannot connect: {self._why(e)}") from None
            set_json_loads(orjson.loads, conn)
            set_json_dumps(orjson.dumps, conn)
            conn.execute("SET TIME ZONE 'UTC'")
            conn.execute(self.limits.session())
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _why(self, error: BaseException) -> str:
        """The driver's message in one line, without the password, with any memory text it
        quotes (a COPY's CONTEXT) escaped."""
        if isinstance(error, psycopg.errors.LockNotAvailable):
            return (
                f"waited {seconds(self.limits.lock_timeout)} for a lock another session holds "
                "([postgres] lock_timeout)"
            )
        if isinstance(error, psycopg.errors.QueryCanceled) and "statement timeout" in str(error):
            return (
                f"a statement ran longer than {seconds(self.limits.statement_timeout)} "
                "([postgres] statement_timeout)"
            )
        text = one_line(" ".join(str(error).split())) or type(error).__name__
        return self.location.scrub(text)

    @contextlib.contextmanager
    def _asking(self, what: str) -> Iterator[None]:
        """A server error while memtui reads `what` as one line."""
        try:
            yield
        except psycopg.Error as e:
            raise MemtuiError(f"{self.path}: cannot read {what}: {self._why(e)}") from None

    def _ident(self) -> sql.Identifier:
        return sql.Identifier(*self.table.split("."))

    def _user_filter(self) -> tuple[sql.Composable, list[Any]]:
        if self.location.user is None:
            return sql.SQL(""), []
        # as rows are read: no user or an empty one is 'legacy' (reading.py)
        where = " WHERE coalesce(nullif(user_id, ''), 'legacy') = %s"
        return sql.SQL(where), [self.location.user]

    def _exists(self, cur: psycopg.Cursor[Any], name: str) -> bool:
        found = cur.execute("SELECT to_regclass(%s) IS NOT NULL", [name]).fetchone()
        return bool(found and found[0])

    # -- reading --------------------------------------------------------------------------

    def reload(self) -> None:
        conn = self._connection()
        try:
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                if not self._exists(cur, self.table):
                    raise StoreFormatError(
                        f"{self.path}: the database has no table {self.table} "
                        "(name another with #table=NAME)"
                    )
                self._shape = Shape.read(cur, self.table, self.path)
                stamp = self._read_stamp(cur)
                sides = self._read_sides(cur, None)
                memories: dict[str, Memory] = {}
                where, params = self._user_filter()
                # by the row's id: a bare `id` would name the select list's text id
                query = sql.SQL("SELECT {} FROM {} AS t{} ORDER BY t.id").format(
                    self._shape.fast_select(), self._ident(), where
                )
                memory_of = reading.reader(sides)
                with (
                    conn.cursor(name="memtui_read", binary=True) as stream,
                    gc_paused(),  # a million acyclic entries: no collections over them
                ):
                    stream.itersize = _FETCH
                    stream.execute(query, params)
                    while batch := stream.fetchmany(_FETCH):
                        for memory in map(memory_of, batch):
                            memories[memory.id] = memory
        except psycopg.Error as e:
            raise MemtuiError(f"{self.path}: cannot read it: {self._why(e)}") from None
        _link_successors(memories, memories.values())
        self._memories, self._stamp, self._tx_cache = memories, stamp, None
        self._counters = None

    def _read_stamp(self, cur: psycopg.Cursor[Any]) -> Stamp:
        where, params = self._user_filter()
        found = cur.execute(
            sql.SQL(
                "SELECT count(*), coalesce(max(id), 0), coalesce(sum(version), 0) FROM {}{}"
            ).format(self._ident(), where),
            params,
        ).fetchone()
        assert found is not None
        tx = 0
        if self._exists(cur, schema.LEDGER):
            latest = cur.execute(
                f"SELECT coalesce(max(tx_id), 0) FROM {schema.LEDGER} WHERE store_table = %s",
                [self.table],
            ).fetchone()
            tx = int(latest[0]) if latest else 0
        return int(found[0]), int(found[1]), int(found[2]), tx

    def _read_sides(self, cur: psycopg.Cursor[Any], ids: list[int] | None) -> dict[int, Side]:
        if not self._exists(cur, schema.ENTRY):
            return {}
        query = (
            f"SELECT memory_id, status, last_decayed_at FROM {schema.ENTRY} WHERE store_table = %s"
        )
        params: list[Any] = [self.table]
        if ids is not None:
            query += " AND memory_id = ANY(%s)"
            params.append(ids)
        return {r[0]: Side(r[1], r[2]) for r in cur.execute(query, params)}

    @property
    def fingerprint(self) -> str:
        return "pg:" + ":".join(map(str, self._stamp))

    def memories(self) -> list[Memory]:
        return list(self._memories.values())

    def __len__(self) -> int:
        return len(self._memories)

    def get(self, memory_id: str) -> Memory:
        try:
            return self._memories[memory_id]
        except KeyError:
            raise NotFoundError(f"{self.path}: no memory with id {memory_id!r}") from None

    def find(self, memory_id: str) -> Memory | None:
        return self._memories.get(memory_id)

    def changed_on_disk(self) -> bool:
        """Whether another writer (the agent, another memtui) changed the table since.

        The TUI asks every few seconds. The exact check scans the table (a million rows: a
        fraction of a second of the server's time), so it runs only when the server's
        write counters for the table and the ledger moved since the last one, and every
        `_FULL_POLL`-th time regardless (the counters reach the server up to a few seconds
        late, and may be off). A server out of reach keeps the last answer: it is no change."""
        try:
            conn = self._connection()
            with conn.transaction():
                cur = conn.cursor()
                counters = cur.execute(_COUNTERS, [[self.table, schema.LEDGER]]).fetchall()
                self._polls += 1
                if counters == self._counters and self._polls % _FULL_POLL:
                    return self._changed
                self._changed = self._read_stamp(cur) != self._stamp
                self._counters = counters
                return self._changed
        except (psycopg.Error, MemtuiError):
            return self._changed  # a server out of reach changed nothing

    # -- the ledger -----------------------------------------------------------------------

    def transactions(self) -> list[Transaction]:
        """Committed transactions, oldest first (a transaction that did not commit left
        nothing: the ledger is written in the same PostgreSQL transaction)."""
        if self._tx_cache is None:
            conn = self._connection()
            try:
                with conn.transaction():
                    cur = conn.cursor()
                    if not self._exists(cur, schema.LEDGER):
                        found: list[Any] = []
                    else:
                        found = cur.execute(
                            f"SELECT body FROM {schema.LEDGER} WHERE store_table = %s "
                            "ORDER BY tx_id",
                            [self.table],
                        ).fetchall()
            except psycopg.Error as e:
                raise MemtuiError(f"{self.path}: cannot read the ledger: {self._why(e)}") from None
            self._tx_cache = [Transaction.from_dict(orjson.loads(r[0])) for r in found]
        return list(self._tx_cache)

    # -- backups: the before-images of the rows each transaction touched ------------------

    def backups(self) -> list[Backup]:
        """Newest first; backup `…-txN` holds the rows transaction N touched, as they were."""
        conn = self._connection()
        with self._asking("the backups"), conn.transaction():
            cur = conn.cursor()
            if not self._exists(cur, schema.BACKUP):
                return []
            found = cur.execute(
                f"SELECT tx_id, min(at), count(*), sum(length(coalesce(row_image, ''))) "
                f"FROM {schema.BACKUP} WHERE store_table = %s GROUP BY tx_id ORDER BY tx_id DESC",
                [self.table],
            ).fetchall()
        out = []
        for tx_id, at, _count, size in found:
            name = f"{at.astimezone(UTC):%Y%m%dT%H%M%S%f}Z-tx{tx_id}"
            out.append(Backup(name, Path(name), at.astimezone(UTC), int(tx_id), int(size or 0)))
        return out

    def dump(self, dest: Path, *, now: datetime | None = None) -> int:
        """The whole table (every user, tombstones too) as the Go system's `MemoryRecord` JSON
        Lines, which memtui opens as a longterm store; returns the number of rows. Written to a
        temporary file beside `dest`, then renamed over it, and registered (its sha256) in
        memtui's `memtui_copy` so `rollback_from_copy` knows it for a copy of this table."""
        if dest.exists():
            raise MemtuiError(f"{dest}: exists; choose a new file for the copy")
        tmp = dest.with_name(f".{dest.name}.memtui-tmp-{os.getpid()}")
        conn = self._connection()
        count, sha = 0, hashlib.sha256()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                sides = self._read_sides(conn.cursor(), None)
                query = sql.SQL("SELECT {} FROM {} ORDER BY id").format(
                    self._shape.select(), self._ident()
                )
                with conn.cursor(name="memtui_dump") as stream:
                    stream.execute(query)
                    while batch := stream.fetchmany(_FETCH):
                        chunk = b"".join(copies.line(rows.image(v), sides.get(v[0])) for v in batch)
                        out.write(chunk)
                        sha.update(chunk)
                        count += len(batch)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, dest)
        except psycopg.Error as e:
            raise MemtuiError(f"{self.path}: cannot copy the table: {self._why(e)}") from None
        except OSError as e:
            raise MemtuiError(f"{dest}: cannot write it ({e.strerror})") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        try:
            with conn.transaction():
                conn.execute(copies.CREATE)
                conn.execute(
                    f"INSERT INTO {copies.COPY} (store_table, digest, at, row_count) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [self.table, sha.hexdigest(), now or datetime.now(UTC), count],
                )
        except psycopg.Error as e:
            raise MemtuiError(
                f"{dest}: written, but not recorded in the database ({self._why(e)}), so "
                "`memtui rollback --from` will not take it"
            ) from None
        return count

    def _find_backup(self, name: str) -> Backup:
        backups = self.backups()
        if name.isdigit() and len(name) <= 3 and 0 < int(name) <= len(backups):
            return backups[int(name) - 1]
        matches = [b for b in backups if b.name == name] or [
            b for b in backups if b.name.startswith(name)
        ]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NotFoundError(f"no backup named {name!r} (see `memtui backups`)")
        raise NotFoundError(f"{name!r} matches {len(matches)} backups; give more of the name")

    # -- changing -------------------------------------------------------------------------

    def new_id(self, now: datetime) -> str:
        """A placeholder: a new row takes its id from the table's sequence when committed."""
        return f"new-{len(self._memories) + 1}"

    def visible(self, memory: Memory | None) -> Memory | None:
        return memory

    def returns_as(self, record: dict[str, Any], memory: Memory) -> bool:
        """A row always comes back through its columns, never as a kept record."""
        return False

    def problems(self) -> list[str]:
        """Nothing beside the table to check: the ledger is in the same database."""
        return []

    def commit(
        self,
        changes: Sequence[Change],
        *,
        actor: str,
        kind: str,
        reason: str,
        now: datetime,
        undoes: int | None = None,
        details: dict[str, Any] | None = None,
        revert_header: tuple[dict[str, Any], dict[str, Any]] | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Apply `changes` as one PostgreSQL transaction; returns it as the ledger holds it.

        A new entry (no `before`) gets its id from the table's sequence (links to it are
        renumbered); a removal (no `after`) is a tombstone. Raises ConflictError, with nothing
        written, when a row it touches changed since memtui read it.
        """
        changes = [c for c in changes if c.before is not None or c.after is not None]
        if not changes:
            raise MemtuiError("nothing to change")
        ids = [c.id for c in changes]
        if len(set(ids)) != len(ids):
            raise ValueError("a transaction touches each memory once")
        conn = self._connection()
        self._pending = {}
        body: str | None = None  # the ledger row, once all but COMMIT is done
        try:
            with conn.transaction():
                tx, written, renumber, created = self._commit_in(
                    conn.cursor(), changes, actor, kind, reason, now, progress
                )
                tx.undoes = undoes
                # a new entry named in the details (a merge's result) by its row id
                tx.details = {
                    k: renumber.get(v, v) if isinstance(v, str) else v
                    for k, v in (details or {}).items()
                }
                recording = Stage(progress, "ledger", len(tx.changes))
                body = self._write_ledger(conn.cursor(), tx, now)
            recording.end()
        except psycopg.Error as e:
            if body is None or not (conn.broken or conn.closed):
                raise MemtuiError(f"{self.path}: the change was not made: {self._why(e)}") from None
            self._settle(tx.id, body, e)  # returns only when the server did commit
            recording.end()
        if created:
            self.notices.append(schema.NOTICE)
            log.warning("%s", schema.NOTICE)
        self._after_commit(tx, written)
        return tx

    def _settle(self, tx_id: int, body: str, error: psycopg.Error) -> None:
        """The connection was lost at COMMIT: whether the server committed, from memtui's
        ledger (written in the same transaction), on a new connection. Returns when it did;
        raises, saying what is certain, when it did not or when memtui cannot tell."""
        lost = self._why(error)
        self.close()
        try:
            conn = self._connection()
            with conn.transaction():
                cur = conn.cursor()
                # held by the lost session's transaction until it has committed or rolled back
                cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"memtui:{self.table}"])
                found = (
                    self._exists(cur, schema.LEDGER)
                    and cur.execute(
                        f"SELECT body FROM {schema.LEDGER} WHERE store_table = %s AND tx_id = %s",
                        [self.table, tx_id],
                    ).fetchone()
                )
        except (psycopg.Error, MemtuiError) as e:
            why = self._why(e) if isinstance(e, psycopg.Error) else str(e)
            raise MemtuiError(
                f"{self.path}: the connection was lost at COMMIT ({lost}) and memtui cannot "
                f"tell whether transaction {tx_id} was made ({why}); `memtui history "
                f"{self.path}` lists it if it was"
            ) from None
        if found and found[0] == body:
            log.warning(
                "%s: the connection was lost at COMMIT; memtui reconnected and found "
                "transaction %d in its ledger: the change was made",
                self.path,
                tx_id,
            )
            return
        raise MemtuiError(
            f"{self.path}: the change was not made: the connection was lost at COMMIT "
            f"({lost}); memtui reconnected and transaction {tx_id} is not in its ledger"
        )

    def _commit_in(
        self,
        cur: psycopg.Cursor[Any],
        changes: Sequence[Change],
        actor: str,
        kind: str,
        reason: str,
        now: datetime,
        progress: CommitProgress | None,
    ) -> tuple[Transaction, list[tuple[Row | None, Row]], dict[str, str], bool]:
        # one memtui writer per table at a time: transaction ids and tables stay in order
        try:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"memtui:{self.table}"])
        except psycopg.errors.LockNotAvailable:
            raise MemtuiError(
                f"{self.path}: another memtui is changing {self.table}; waited "
                f"{seconds(self.limits.lock_timeout)} ([postgres] lock_timeout); nothing was "
                "written"
            ) from None
        created = not self._exists(cur, schema.LEDGER)
        if created:
            cur.execute(schema.CREATE)
        existing = sorted({int(c.id) for c in changes if c.id.isdigit()})
        current = self._lock_rows(cur, existing)
        sides = self._read_sides(cur, existing)
        self._check_unchanged(changes, current, sides, progress)

        inserts = [c for c in changes if c.before is None and c.id not in current]
        renumber = dict(
            zip([c.id for c in inserts], self._next_ids(cur, len(inserts)), strict=True)
        )
        latest = cur.execute(
            f"SELECT coalesce(max(tx_id), 0) FROM {schema.LEDGER} WHERE store_table = %s",
            [self.table],
        ).fetchone()
        tx_id = int(latest[0]) + 1 if latest else 1

        images: list[ChangeImage] = []
        written: list[tuple[Row | None, Row]] = []
        side_rows: list[tuple[int, Side]] = []
        preparing = Stage(progress, "preparing", len(changes))
        for done, change in enumerate(changes):
            preparing.tick(done)
            base = current.get(change.id)
            before = _renumbered(change.before, renumber)
            after = _renumbered(change.after, renumber)
            if after is None:
                assert before is not None
                after = before.with_(status=Status.DELETED, updated_at=now)
            if base is None:
                row = rows.encode(after, None, now)
                row["id"] = int(after.id)
            elif change.after_raw is not None:
                row = {**base, **{k: change.after_raw[k] for k in rows.WRITTEN}}
                row.update(id=base["id"], user_id=base["user_id"])
            else:
                row = rows.encode(after, base, now)
            row = self._shape.stored(row)
            if base is None or rows.differs(row, base):
                version = (base["version"] or 0) + 1 if base is not None else 1
                row = self._shape.stored(rows.written(row, version, now))
                written.append((base, row))
            else:
                row = base
            side = Side.of(after)
            side_rows.append((int(row["id"]), side))
            stored = rows.to_memory(row, side).with_(superseded_by=after.superseded_by)
            if before is not None and base is not None and base["version"] == before.version:
                was: Memory | None = before  # the row is what memtui loaded
            elif base is not None:
                was = rows.to_memory(base, sides.get(base["id"]))
                was = was.with_(superseded_by=before.superseded_by if before else None)
            else:
                was = None
            self._pending[stored.id] = stored
            images.append(
                ChangeImage(
                    stored.id,
                    was.to_dict() if was is not None else None,
                    stored.to_dict(),
                    base,
                    row,
                )
            )
        preparing.end()
        writing = Stage(progress, "writing", len(written))
        self._write_rows(cur, written, writing)
        self._write_outbox(cur, written)
        self._write_sides(cur, side_rows)
        writing.end()
        saving = Stage(progress, "backup", len(images))
        self._write_backup(cur, tx_id, now, [(int(i.id), i.before_raw) for i in images], saving)
        saving.end()
        tx = Transaction(tx_id, now, actor, kind, reason, images, backup=None)
        tx.backup = f"{now.astimezone(UTC):%Y%m%dT%H%M%S%f}Z-tx{tx_id}"
        return tx, written, renumber, created

    def _lock_rows(self, cur: psycopg.Cursor[Any], ids: list[int]) -> dict[str, Row]:
        if not ids:
            return {}
        query = sql.SQL("SELECT {} FROM {} WHERE id = ANY(%s) ORDER BY id FOR UPDATE").format(
            self._shape.select(), self._ident()
        )
        try:
            return {str(r[0]): rows.image(r) for r in cur.execute(query, [ids])}
        except psycopg.errors.LockNotAvailable:
            shown = ", ".join(map(str, ids[:5])) + (" …" if len(ids) > 5 else "")
            what = f"entry {shown} is" if len(ids) == 1 else f"an entry of {shown} is"
            raise MemtuiError(
                f"{self.path}: {what} locked by another session (the agent?); memtui waited "
                f"{seconds(self.limits.lock_timeout)} ([postgres] lock_timeout); nothing was "
                "written"
            ) from None

    def _check_unchanged(
        self,
        changes: Sequence[Change],
        current: dict[str, Row],
        sides: dict[int, Side],
        progress: CommitProgress | None = None,
    ) -> None:
        """Refuse when a touched row is not what memtui loaded; a row whose version moved on
        while everything memtui sees of it stayed the same is taken as it is now (re-base)."""
        checking = Stage(progress, "checking", len(changes))
        stale = []
        for done, change in enumerate(changes):
            checking.tick(done)
            row = current.get(change.id)
            if change.before is None:
                if row is not None:  # a new entry's id is the sequence's, never a row's
                    stale.append(change.id)
                continue
            if row is None:
                stale.append(change.id)
            elif row["version"] != change.before.version:
                now_is = rows.to_memory(row, sides.get(row["id"]))
                if _essence(now_is) != _essence(change.before):
                    stale.append(change.id)
        if stale:
            shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
            raise ConflictError(
                f"{self.path}: changed since memtui read it; {len(stale)} of the entries this "
                f"change touches differ ({shown}); nothing was written — read the store again "
                "(ctrl+r in the TUI; `memtui outside STORE` lists what the agent changed) and "
                "try again"
            )
        checking.end()

    def _next_ids(self, cur: psycopg.Cursor[Any], count: int) -> list[str]:
        if not count:
            return []
        found = cur.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [self.table, count],
        ).fetchall()
        return [str(r[0]) for r in found]

    def _write_rows(
        self, cur: psycopg.Cursor[Any], written: list[tuple[Row | None, Row]], stage: Stage
    ) -> None:
        """All rows in three statements: COPY into a temporary table, one UPDATE guarded by
        the versions read under the lock, one INSERT."""
        if not written:
            return
        table = self._ident()
        cur.execute(
            sql.SQL(
                "CREATE TEMPORARY TABLE IF NOT EXISTS memtui_stage "
                "(LIKE {} INCLUDING DEFAULTS, old_version BIGINT, existing BOOLEAN) ON COMMIT DROP"
            ).format(table)
        )
        names = [*COLUMNS, "old_version", "existing"]
        copy = sql.SQL("COPY memtui_stage ({}) FROM STDIN").format(
            sql.SQL(", ").join(map(sql.Identifier, names))
        )
        with cur.copy(copy) as out:
            for done, (base, row) in enumerate(written):
                stage.tick(done)
                values = [self._shape.db_value(k, row[k]) for k in COLUMNS]
                old = base["version"] if base is not None else None
                out.write_row([*values, old, base is not None])
        assign = sql.SQL(", ").join(
            sql.SQL("{0} = s.{0}").format(sql.Identifier(c)) for c in rows.WRITTEN
        )
        updates = sum(base is not None for base, _ in written)
        cur.execute(
            sql.SQL(
                "UPDATE {} AS t SET {} FROM memtui_stage AS s "
                "WHERE s.existing AND t.id = s.id AND t.version IS NOT DISTINCT FROM s.old_version"
            ).format(table, assign)
        )
        if cur.rowcount != updates:
            raise ConflictError(
                f"{self.path}: rows changed while memtui wrote; nothing was written"
            )
        cols = sql.SQL(", ").join(map(sql.Identifier, COLUMNS))
        cur.execute(
            sql.SQL(
                "INSERT INTO {} ({}) OVERRIDING SYSTEM VALUE "
                "SELECT {} FROM memtui_stage WHERE NOT existing"
            ).format(table, cols, cols)
        )

    def _write_outbox(
        self, cur: psycopg.Cursor[Any], written: list[tuple[Row | None, Row]]
    ) -> None:
        if not written:
            return
        if not self._exists(cur, _OUTBOX):
            log.warning("%s: no %s table; the agent's projections are not told", self.path, _OUTBOX)
            return
        copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(_OUTBOX), sql.SQL(", ").join(map(sql.Identifier, _OUTBOX_COLUMNS))
        )
        with cur.copy(copy) as out:
            for base, row in written:
                for event in rows.outbox_events(row, base):
                    out.write_row([*event[:-1], Jsonb(event[-1])])

    def _write_sides(self, cur: psycopg.Cursor[Any], side_rows: list[tuple[int, Side]]) -> None:
        keep = [(self.table, i, s.status, s.last_decayed_at) for i, s in side_rows if not s.empty]
        drop = [i for i, s in side_rows if s.empty]
        if drop:
            cur.execute(
                f"DELETE FROM {schema.ENTRY} WHERE store_table = %s AND memory_id = ANY(%s)",
                [self.table, drop],
            )
        if keep:
            cur.executemany(
                f"INSERT INTO {schema.ENTRY} (store_table, memory_id, status, last_decayed_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (store_table, memory_id) DO UPDATE SET "
                "status = EXCLUDED.status, last_decayed_at = EXCLUDED.last_decayed_at",
                keep,
            )

    def _write_backup(
        self,
        cur: psycopg.Cursor[Any],
        tx_id: int,
        now: datetime,
        before: list[tuple[int, Row | None]],
        stage: Stage,
    ) -> None:
        with cur.copy(
            f"COPY {schema.BACKUP} (store_table, tx_id, at, memory_id, row_image) FROM STDIN"
        ) as out:
            for done, (memory_id, row) in enumerate(before):
                stage.tick(done)
                image = orjson.dumps(row).decode() if row is not None else None
                out.write_row([self.table, tx_id, now, memory_id, image])
        # keep the before-images of the newest `keep_backups` transactions
        cur.execute(
            f"DELETE FROM {schema.BACKUP} WHERE store_table = %s AND tx_id <= %s",
            [self.table, tx_id - self.keep_backups],
        )

    def _write_ledger(self, cur: psycopg.Cursor[Any], tx: Transaction, now: datetime) -> str:
        body = orjson.dumps(tx.to_dict()).decode()
        cur.execute(
            f"INSERT INTO {schema.LEDGER} (store_table, tx_id, at, kind, body) "
            "VALUES (%s, %s, %s, %s, %s)",
            [self.table, tx.id, now, tx.kind, body],
        )
        return body

    def _after_commit(self, tx: Transaction, written: list[tuple[Row | None, Row]]) -> None:
        count, top, versions, _ = self._stamp
        for base, row in written:
            versions += row["version"] - ((base["version"] or 0) if base is not None else 0)
            if base is None:
                count, top = count + 1, max(top, int(row["id"]))
        self._stamp, self._counters = (count, top, versions, tx.id), None
        changed = []
        for image in tx.changes:
            after = self._pending[image.id]
            self._memories[image.id] = after
            changed.append(after)
        self._pending = {}
        _link_successors(self._memories, changed)
        if self._tx_cache is not None:
            self._tx_cache.append(tx)

    # -- undo and rollback ----------------------------------------------------------------

    def undo(
        self,
        tx_id: int | None = None,
        *,
        now: datetime,
        actor: str = "user",
        reason: str = "",
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Revert a transaction (default: the newest one not undone) as a new transaction:
        every row it touched gets its columns back; versions move forward."""
        target = undo_target(self.transactions(), tx_id, self.path)
        changes = [
            Change(c.after_memory(), c.before_memory(), c.before_raw) for c in target.changes
        ]
        return self.commit(
            changes,
            actor=actor,
            kind="undo",
            reason=reason or f"undo of transaction {target.id} ({target.kind})",
            now=now,
            undoes=target.id,
            progress=progress,
        )

    def rollback(
        self,
        name: str,
        *,
        now: datetime,
        actor: str = "user",
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Every row memtui changed since backup `name`'s transaction back to what it was
        before it, as one (undoable) transaction."""
        backup = self._find_backup(name)
        conn = self._connection()
        with self._asking("the backup"), conn.transaction():
            found = conn.execute(
                f"SELECT DISTINCT ON (memory_id) memory_id, row_image FROM {schema.BACKUP} "
                "WHERE store_table = %s AND tx_id >= %s ORDER BY memory_id, tx_id",
                [self.table, backup.tx_id],
            ).fetchall()
        # what the ledger says each row was before the backup's transaction (its status)
        first: dict[str, ChangeImage] = {}
        for tx in reversed(self.transactions()):
            if tx.id >= backup.tx_id:
                first.update((c.id, c) for c in tx.changes)
        changes = []
        for memory_id, image in found:
            ident = str(memory_id)
            now_m = self._memories.get(ident)
            if image is None:  # a row memtui inserted: back to a tombstone
                if now_m is not None and now_m.status is not Status.DELETED:
                    changes.append(Change(now_m, None))
                continue
            raw = orjson.loads(image)
            known = first.get(ident)
            then_m = known.before_memory() if known is not None else None
            side = Side.of(then_m) if then_m is not None else None
            changes.append(Change(now_m, rows.to_memory(raw, side), raw))
        return self._roll_back(changes, f"backup {backup.name}", backup.name, now, actor, progress)

    def rollback_from_copy(
        self,
        source: Path,
        *,
        now: datetime,
        actor: str = "user",
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Make the rows (of the user open, or all) what `memtui backup`'s copy `source`
        holds, as one (undoable) transaction: rows that differ get the copy's columns back,
        rows added since become tombstones. Refused, with nothing changed, when `source` is
        not byte for byte a copy of this table made in this database."""
        digest = copies.digest_of(source)
        conn = self._connection()
        with self._asking("its copies"), conn.transaction():
            cur = conn.cursor()
            known = (
                self._exists(cur, copies.COPY)
                and cur.execute(
                    f"SELECT 1 FROM {copies.COPY} WHERE store_table = %s AND digest = %s",
                    [self.table, digest],
                ).fetchone()
            )
        if not known:
            raise MemtuiError(
                f"{source}: not a copy of {self.table} in this database made by `memtui "
                "backup` (or changed since); nothing was changed"
            )
        changes, copied = [], set()
        for raw, side in copies.read(source):
            memory = self._memories.get(str(raw["id"]))
            if memory is None:  # another user's row (or one gone from the table)
                continue
            copied.add(memory.id)
            then = rows.to_memory(raw, side)
            if _essence(then) != _essence(memory):
                changes.append(Change(memory, then, raw))
        for memory in self._memories.values():
            if memory.id not in copied and memory.status is not Status.DELETED:
                changes.append(Change(memory, None))  # added since the copy
        return self._roll_back(changes, f"the copy {source}", str(source), now, actor, progress)

    def _roll_back(
        self,
        changes: list[Change],
        what: str,
        name: str,
        now: datetime,
        actor: str,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        if not changes:
            raise MemtuiError(f"the store already holds what {what} holds")
        return self.commit(
            changes,
            actor=actor,
            kind="rollback",
            reason=f"rollback to {what}",
            now=now,
            details={"backup": name},
            progress=progress,
        )


def _essence(memory: Memory) -> Memory:
    """What a person sees of an entry: not its version, hash or links derived from others."""
    extra = {k: v for k, v in memory.extra.items() if k != "content_hash"}
    return memory.with_(version=None, superseded_by=None, updated_at=None, extra=extra)


def _renumbered(memory: Memory | None, ids: dict[str, str]) -> Memory | None:
    if memory is None or not ids:
        return memory
    return memory.with_(
        id=ids.get(memory.id, memory.id),
        supersedes=tuple(ids.get(s, s) for s in memory.supersedes),
        superseded_by=ids.get(memory.superseded_by, memory.superseded_by)
        if memory.superseded_by
        else None,
    )


def _link_successors(memories: dict[str, Memory], changed: Iterable[Memory]) -> None:
    for memory in list(changed):
        for old in memory.supersedes:
            target = memories.get(old)
            if target is not None and target.superseded_by != memory.id:
                memories[old] = target.with_(superseded_by=memory.id)
