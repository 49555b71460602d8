"""A PostgreSQL store location: `postgresql://user[:password]@host:port/dbname[#table=T&user=U]`.

libpq gets the URL (it reads `PG*` environment variables and `~/.pgpass` for what the URL leaves
out); everything memtui shows, writes to a plan or keeps in its ledger is `display`, the URL
without its password. The fragment is memtui's own: the table (default `long_term_memory`) and
one agent user to open instead of all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from memtui.errors import MemtuiError

SCHEMES = ("postgresql://", "postgres://")
DEFAULT_TABLE = "long_term_memory"
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")


def is_postgres_location(location: object) -> bool:
    return isinstance(location, str) and location.lower().startswith(SCHEMES)


class PgPath(str):
    """The display URL, answering the few `Path` questions callers ask a store's path (plan
    files are suggested in the current folder, named after the database)."""

    __slots__ = ()

    def resolve(self) -> Path:
        return Path(str(self)).resolve()

    @property
    def stem(self) -> str:
        return urlsplit(str(self)).path.strip("/") or "postgres"

    def with_name(self, name: str) -> Path:
        return Path(name)


@dataclass(frozen=True)
class PgLocation:
    conninfo: str = field(repr=False)
    display: PgPath
    table: str = DEFAULT_TABLE
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, location: str) -> PgLocation:
        url, _, fragment = location.partition("#")
        options = dict(parse_qsl(fragment))
        unknown = sorted(options.keys() - {"table", "user"})
        if unknown:
            raise MemtuiError(f"unknown option {unknown[0]!r} after '#' (use table= and user=)")
        table = options.get("table") or DEFAULT_TABLE
        if not _TABLE.match(table):
            raise MemtuiError(f"{table!r} is not a table name")
        parts = urlsplit(url)
        password = unquote(parts.password) if parts.password is not None else None
        netloc = parts.netloc
        if password is not None:
            login, _, host = netloc.rpartition("@")
            netloc = login.partition(":")[0] + "@" + host
        query = parse_qsl(parts.query, keep_blank_values=True)
        for key, value in query:
            if key == "password":
                password = value
        shown_query = urlencode([(k, v) for k, v in query if k != "password"])
        display = urlunsplit((parts.scheme, netloc, parts.path, shown_query, ""))
        if options:
            display += "#" + urlencode(sorted(options.items()))
        return cls(url, PgPath(display), table, options.get("user") or None, password)

    def scrub(self, text: str) -> str:
        """`text` (a driver's message) without the password, should it quote it."""
        if self.password:
            text = text.replace(self.password, "***")
        return text
