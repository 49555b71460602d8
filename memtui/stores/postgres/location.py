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
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from memtui.errors import MemtuiError

INSTALL_HINT = 'PostgreSQL stores need psycopg: pip install "memtui[postgres]"'
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
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Every spelling of the password the URL holds (as written, percent-decoded)."""

    @classmethod
    def parse(cls, location: str) -> PgLocation:
        """Read as libpq reads the URL (`psycopg.conninfo`); the display is the URL as written
        with its password cut out. A URL libpq cannot read, or whose host would take part of an
        unencoded password, is refused naming only the redacted URL."""
        url, fragment = _split_fragment(location)
        options = dict(parse_qsl(fragment))
        unknown = sorted(options.keys() - {"table", "user"})
        if unknown:
            raise MemtuiError(f"unknown option {unknown[0]!r} after '#' (use table= and user=)")
        table = options.get("table") or DEFAULT_TABLE
        if not _TABLE.match(table):
            raise MemtuiError(f"{table!r} is not a table name")
        head, userinfo, rest = _libpq_parts(url)
        if "@" in rest.partition("?")[0]:
            raise MemtuiError(
                f"{redacted(location)}: a password with '@' or '/' must be percent-encoded "
                "(%40, %2F): as written, part of it would be taken for the host"
            )
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise MemtuiError(INSTALL_HINT) from None
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error:
            raise MemtuiError(
                f"{redacted(location)}: not a database URL libpq reads (characters such as % "
                "in a password must be percent-encoded)"
            ) from None
        secrets: list[str] = []
        login = userinfo
        if userinfo is not None and ":" in userinfo:
            login, _, written = userinfo.partition(":")
            secrets += [written, unquote(written)]
        path, mark, query = rest.partition("?")
        kept = []
        for item in query.split("&") if mark else []:
            key, _, value = item.partition("=")
            if unquote(key) == "password":
                secrets += [value, unquote(value)]
            else:
                kept.append(item)
        password = str(params["password"]) if params.get("password") else None
        if password:
            secrets.append(password)
        display = head + (f"{login}@" if login is not None else "") + path
        if kept:
            display += "?" + "&".join(kept)
        if options:
            display += "#" + urlencode(sorted(options.items()))
        shown = tuple(sorted({x for x in secrets if x}, key=len, reverse=True))
        return cls(url, PgPath(display), table, options.get("user") or None, password, shown)

    def scrub(self, text: str) -> str:
        """`text` (a driver's message) without the password, should it quote it."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def _split_fragment(location: str) -> tuple[str, str]:
    """The URL and memtui's `#…` options: the last `#` after the user info (a password may
    hold a `#`; libpq gives the character no meaning)."""
    head, userinfo, _ = _libpq_parts(location)
    start = len(head) + (len(userinfo) + 1 if userinfo is not None else 0)
    cut = location.rfind("#", start)
    if cut < 0:
        return location, ""
    return location[:cut], location[cut + 1 :]


def _libpq_parts(url: str) -> tuple[str, str | None, str]:
    """(`scheme://`, the user info or None, the rest) as libpq splits a URL: the user info
    runs to the first `@` unless a `/` comes first."""
    scheme, sep, rest = url.partition("://")
    head = scheme + sep
    for index, char in enumerate(rest):
        if char == "/":
            break
        if char == "@":
            return head, rest[:index], rest[index + 1 :]
    return head, None, rest


def redacted(location: str) -> str:
    """A location as a message may quote it whatever it holds: everything before its last
    `@` but the user name, and every `password=` value, replaced by `***`."""
    scheme, sep, rest = location.partition("://")
    if "@" in rest:
        login, _, host = rest.rpartition("@")
        user = login.partition(":")[0].partition("/")[0]
        rest = f"{user}:***@{host}" if user else f"***@{host}"
    rest = re.sub(r"(?i)(password=)[^&#]*", r"\1***", rest)
    return scheme + sep + rest
