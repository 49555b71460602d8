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
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

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
    # every string that may be (part of) the password, longest first (`scrub`)
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def parse(cls, location: str) -> PgLocation:
        url, fragment = _split_fragment(location)
        options = dict(parse_qsl(fragment))
        unknown = sorted(options.keys() - {"table", "user"})
        if unknown:
            raise MemtuiError(f"unknown option {unknown[0]!r} after '#' (use table= and user=)")
        table = options.get("table") or DEFAULT_TABLE
        if not _TABLE.match(table):
            raise MemtuiError(f"{table!r} is not a table name")
        params = _libpq_params(url)
        secrets = _secrets(url, params)
        display = _display(url, params)
        if options:
            display += "#" + urlencode(sorted(options.items()))
        return cls(
            url,
            PgPath(display),
            table,
            options.get("user") or None,
            params.get("password"),
            tuple(sorted(secrets, key=len, reverse=True)),
        )

    def scrub(self, text: str) -> str:
        """`text` (a driver's message) without the password, should it quote it."""
        for secret in self.secrets or ((self.password,) if self.password else ()):
            text = text.replace(secret, "***")
        return text


_AMBIGUOUS = (
    "the PostgreSQL URL's user or password holds a character that must be percent-encoded "
    "('@' %40, '/' %2F, '#' %23, '?' %3F, ':' %3A) — or leave the password out of the URL and "
    "use PGPASSWORD or ~/.pgpass"
)
_FRAGMENT = re.compile(r"^\w+=[^&@/#]*(&\w+=[^&@/#]*)*$")


def _split_fragment(location: str) -> tuple[str, str]:
    """The URL and memtui's own `#key=value&…` after it; a '#' that does not start such a
    fragment is part of the URL (a password may hold one)."""
    url, hashed, fragment = location.rpartition("#")
    if hashed and (not fragment or _FRAGMENT.match(fragment)):
        return url, fragment
    return location, ""


def _libpq_params(url: str) -> dict[str, str]:
    """The connection parameters libpq reads from `url` (its own parser), checked for what
    only a mistyped password gives: a host with '@' in it, a port that is not a number."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # without the driver: the URL as Python splits it
        return _split_params(url)
    try:
        params = {k: str(v) for k, v in conninfo_to_dict(url).items() if v is not None}
    except Exception:  # any refusal: psycopg's message may quote the password
        raise MemtuiError(f"not a PostgreSQL URL libpq can read; {_AMBIGUOUS}") from None
    ports = params.get("port", "")
    if "@" in params.get("host", "") or any(p and not p.isdigit() for p in ports.split(",")):
        raise MemtuiError(_AMBIGUOUS)
    return params


def _split_params(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    params = {k: v for k, v in parse_qsl(parts.query, keep_blank_values=True)}
    if parts.password is not None:
        params.setdefault("password", unquote(parts.password))
    return params


def _secrets(url: str, params: dict[str, str]) -> set[str]:
    """The password as libpq reads it, as a URL reader would, and as written."""
    found = {params.get("password", "")}
    found |= {v for k, v in parse_qsl(urlsplit(url).query) if k == "password"}
    rest = url.split("://", 1)[-1]
    credentials = rest[: rest.rfind("@")] if "@" in rest else ""
    if ":" in credentials:
        written = credentials.split(":", 1)[1]
        found |= {written, unquote(written)}
    return {s for s in found if s}


def _display(url: str, params: dict[str, str]) -> str:
    """The URL without its password: as written where Python reads it as libpq does, else
    rebuilt from what libpq reads."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        login, _, host = netloc.rpartition("@")
        netloc = login.partition(":")[0] + "@" + host
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    shown = urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))
    wanted = {k: v for k, v in params.items() if k != "password"}
    if _split_shown(shown) == wanted:
        return shown
    rebuilt = _rebuilt(parts.scheme or "postgresql", wanted)
    if _split_shown(rebuilt) not in (wanted, None):
        raise MemtuiError(_AMBIGUOUS)
    return rebuilt


def _split_shown(shown: str) -> dict[str, str] | None:
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return None
    try:
        return {k: str(v) for k, v in conninfo_to_dict(shown).items() if v is not None}
    except Exception:  # not readable back: rebuilt instead
        return None


def _rebuilt(scheme: str, params: dict[str, str]) -> str:
    rest = dict(params)
    user = quote(rest.pop("user", ""), safe="")
    host, port = rest.pop("host", ""), rest.pop("port", "")
    dbname = quote(rest.pop("dbname", ""), safe="")
    login = f"{user}@" if user else ""
    netloc = f"{quote(host, safe='.,[]')}{':' + port if port else ''}"
    query = urlencode(sorted(rest.items()))
    return f"{scheme}://{login}{netloc}/{dbname}" + (f"?{query}" if query else "")


def with_user(location: str, user: str) -> str:
    """`location` naming one user (`#user=U`), its other options kept."""
    url, fragment = _split_fragment(location)
    options = dict(parse_qsl(fragment))
    options["user"] = user
    return f"{url}#{urlencode(sorted(options.items()))}"
