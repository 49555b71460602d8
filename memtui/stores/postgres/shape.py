"""The agent's table as it is declared, read once at open: each column's type decides how memtui
selects it and what it writes into it, so a value goes back as the table declares it.

Accepted beyond the Go system's own types: `REAL` and `NUMERIC` importance (read as a double;
what memtui writes is rounded as the column will round it, so a row reads back as memtui wrote
it), `TIMESTAMPTZ`, `DATE` and `TIMESTAMP(p)` times (rounded the same way), an embedding held
as `JSON`, as text holding a JSON array or as an array of numbers, and NULL in any column.
Anything else (a view, a missing column, a column of another type) is refused at open in one
line naming the column.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import orjson
from psycopg import Cursor, sql
from psycopg.types.json import Jsonb

from memtui.errors import StoreFormatError
from memtui.stores.postgres.rows import COLUMNS, TIMES, Row
from memtui.times import format_iso, parse_iso

_INTEGER = ("int2", "int4", "int8")
_TEXT = ("text", "varchar")
_TIME = ("timestamp", "timestamptz", "date")
_FLAG = ("bool",)
_JSON_TEXT = ("json", "text", "varchar")  # an embedding kept as the text it was written as
# column → (the types memtui reads, how the refusal names them)
_ACCEPTED: dict[str, tuple[tuple[str, ...], str]] = {
    "id": (_INTEGER, "an integer"),
    "importance": (("float8", "float4", "numeric"), "a number (double precision, real or numeric)"),
    "embedding": (
        ("jsonb", "json", "text", "varchar", "_float8", "_float4"),
        "JSON, text holding a JSON array, or an array of numbers",
    ),
    "tags": (("_text", "_varchar"), "an array of text"),
    "supersedes": (tuple(f"_{t}" for t in _INTEGER), "an array of integers"),
    "quarantined": (_FLAG, "a boolean"),
    "superseded": (_FLAG, "a boolean"),
    "version": (_INTEGER, "an integer"),
    **{c: (_TIME, "a time (timestamp, timestamptz or date)") for c in TIMES},
}
_TABLES = {"r": "table", "p": "table", "f": "table", "v": "view", "m": "materialized view"}
_COLUMNS = """
SELECT a.attname, t.typname, format_type(a.atttypid, a.atttypmod), a.atttypmod
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped
"""


@dataclass(frozen=True, slots=True)
class Shape:
    types: dict[str, str]
    """column → its type's name (`float4`, `timestamptz`, `_text`, …)."""
    scale: int | None = None
    """The decimal places a `NUMERIC(p, s)` importance keeps (None: as many as given)."""
    precision: dict[str, int] = field(default_factory=dict)
    """time column → the second's decimal places it keeps, when fewer than 6."""

    @classmethod
    def of_go(cls) -> Shape:
        """The Go system's own table (docs/formats.md, `postgres`)."""
        types = dict.fromkeys(COLUMNS, "text")
        types.update(id="int4", importance="float8", embedding="jsonb", tags="_text")
        types.update(supersedes="_int4", quarantined="bool", superseded="bool", version="int8")
        types.update(dict.fromkeys(TIMES, "timestamp"))
        return cls(types)

    @classmethod
    def read(cls, cur: Cursor[Any], table: str, where: str) -> Shape:
        """The table's shape; a StoreFormatError naming the column memtui cannot use."""
        found = cur.execute(
            "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [table]
        ).fetchone()
        kind = _TABLES.get(found[0] if found else "", "relation")
        if kind != "table":
            raise StoreFormatError(
                f"{where}: {table} is a {kind}, not a table; memtui reads and writes the agent's "
                "table itself (name it with #table=NAME)"
            )
        columns = {r[0]: r[1:] for r in cur.execute(_COLUMNS, [table])}
        for column in COLUMNS:
            if column not in columns:
                raise StoreFormatError(
                    f"{where}: {table} has no column {column}; memtui reads the Go system's "
                    "long_term_memory table"
                )
            typname, declared, _ = columns[column]
            accepted, what = _ACCEPTED.get(column, (_TEXT, "text"))
            if typname not in accepted:
                raise StoreFormatError(
                    f"{where}: {table}.{column} is {declared}; memtui reads it as {what}"
                )
        kind, _, typmod = columns["importance"]
        scale = (typmod - 4) & 0xFFFF if kind == "numeric" and typmod >= 4 else None
        precision = {
            c: columns[c][2]
            for c in TIMES
            if columns[c][0] in ("timestamp", "timestamptz") and 0 <= columns[c][2] < 6
        }
        return cls({c: columns[c][0] for c in COLUMNS}, scale, precision)

    def _cast(self, column: str) -> str | None:
        """The select expression of a column not read as it is (None: as it is)."""
        kind = self.types[column]
        if column == "importance" and kind != "float8":
            return "importance::float8"
        if kind == "date":
            return f"{column}::timestamp"
        if column == "embedding" and kind == "json":
            return "embedding::text"
        return None

    def select(self, alias: str = "") -> sql.Composable:
        """The columns in `COLUMNS` order, as `rows.image` takes them."""
        prefix = f"{alias}." if alias else ""
        return sql.SQL(", ").join(
            sql.SQL(f"{prefix}{cast} AS {{}}").format(sql.Identifier(c))
            if (cast := self._cast(c))
            else sql.SQL(prefix) + sql.Identifier(c)
            for c in COLUMNS
        )

    def fast_select(self, *, light: bool = False) -> sql.Composable:
        """The columns as `reading.reader` takes them: ids as text, times as aware UTC;
        `light`: without the content and the embedding (a pass that counts and weighs)."""
        out = []
        for column in COLUMNS:
            kind = self.types[column]
            if light and column in ("content", "embedding"):
                expr = "''::text" if column == "content" else "NULL::jsonb"
            elif column == "id":
                expr = "t.id::text"
            elif column == "supersedes":
                expr = "t.supersedes::text[]"
            elif column in TIMES:
                expr = {
                    "timestamp": f"t.{column} AT TIME ZONE 'UTC'",
                    "timestamptz": f"t.{column}",
                    "date": f"t.{column}::timestamp AT TIME ZONE 'UTC'",
                }[kind]
            else:
                expr = f"t.{self._cast(column) or column}"
            out.append(sql.SQL(expr))
        return sql.SQL(", ").join(out)

    def db_value(self, column: str, value: Any) -> Any:
        """An image's value as the column takes it."""
        if value is None:
            return None
        kind = self.types[column]
        if column in TIMES:
            when = parse_iso(value)
            if when is None:
                return None
            return when.date() if kind == "date" else when.replace(tzinfo=None)
        if column == "embedding":
            if kind == "jsonb":
                return Jsonb(value)
            if kind in _JSON_TEXT and not isinstance(value, str):
                return orjson.dumps(value).decode()
        return value

    def stored(self, row: Row) -> Row:
        """`row` as the table will hold it once written (rounded, truncated, as text)."""
        out = dict(row)
        importance = out["importance"]
        if isinstance(importance, float):
            if self.types["importance"] == "float4":
                out["importance"] = struct.unpack("f", struct.pack("f", importance))[0]
            elif self.scale is not None:
                step = Decimal(1).scaleb(-self.scale)
                out["importance"] = float(Decimal(repr(importance)).quantize(step, ROUND_HALF_UP))
        for column in TIMES:
            when = parse_iso(out.get(column))
            if when is None:
                continue
            if self.types[column] == "date":
                out[column] = format_iso(datetime(when.year, when.month, when.day, tzinfo=UTC))
            elif column in self.precision:  # rounded half up, as the server rounds
                step = 10 ** (6 - self.precision[column])
                kept = (when.microsecond + step // 2) // step * step
                out[column] = format_iso(when.replace(microsecond=0) + timedelta(microseconds=kept))
        if self.types["embedding"] in _JSON_TEXT and isinstance(out["embedding"], list):
            out["embedding"] = orjson.dumps(out["embedding"]).decode()
        return out
