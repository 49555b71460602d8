"""Generated `long_term_memory` tables for the user-by-user tests and the benchmark, made by the
server (`generate_series`), so that a 10M-row table takes minutes, not hours.

Row `i`'s values are a hash of `i` and the seed: users interleaved in id order, rows of no user
(`legacy`: NULL, empty or named so; as many as one user has), repeated and near-repeated wording
within a user (absorbs, merges, conflicts), ages up to `days` (decay, expiry), rows never used
and used, tombstones, quarantined rows, and superseded chains within a user and across users.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

WORDS = [
    *("coffee", "tea", "rust", "python", "tabs", "spaces", "vim", "emacs", "berlin", "paris"),
    *("dark", "light", "jazz", "rock", "cats", "dogs", "running", "cycling", "sushi", "pasta"),
    *("mornings", "nights", "linux", "macos"),
]

_FILL = """
INSERT INTO long_term_memory (id, user_id, content, importance, created_at, last_accessed,
    updated_at, category, tags, quarantined, deleted_at, version)
SELECT i,
    CASE mod(h, 3 * %(users)s) WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'legacy'
         ELSE 'u' || mod(h, %(users)s) END,
    CASE WHEN mod(h, 9) = 0 THEN
        CASE WHEN mod(h, 5) = 0 THEN 'the user does not like ' ELSE 'the user likes ' END
        || (%(words)s::text[])[1 + mod(h / 7, %(topics)s)]
        || CASE WHEN mod(h, 3) = 0 THEN ' a lot' WHEN mod(h, 11) = 0 THEN ' in the ' ||
             (%(words)s::text[])[1 + mod(h / 13, 24)] ELSE '' END
    ELSE 'note w' || mod(h / 3, 5000) || ' w' || mod(h / 11, 5000) || ' w' || mod(h / 17, 5000)
        || ' w' || mod(h / 23, 5000) END,
    round((mod((h / 17), 100)) / 100.0, 2),
    %(now)s::timestamp
        - make_interval(days => (mod((h / 19), %(days)s))::int, secs => mod(h, 86400)::int),
    CASE WHEN %(used)s AND mod(h, 4) = 0
         THEN %(now)s::timestamp - make_interval(days => (mod((h / 23), 30))::int)
         ELSE NULL END,
    %(now)s::timestamp - make_interval(days => (mod((h / 19), %(days)s))::int),
    (ARRAY['general', 'preference', 'fact', 'project'])[1 + mod(h / 29, 4)],
    CASE WHEN mod(h, 7) = 0 THEN ARRAY['src:user'] ELSE '{}' END,
    mod(h, 61) = 0,
    CASE WHEN mod(h, 53) = 0 THEN %(now)s::timestamp - interval '1 day' ELSE NULL END,
    1 + mod(h / 31, 3)
FROM generate_series(1, %(rows)s) AS i,
    LATERAL (SELECT (mod((i::bigint * 2654435761 + %(seed)s), 4294967291)) AS h) AS x
"""

# a row supersedes its user's previous row (now and then), or some other user's row
_CHAINS = """
UPDATE long_term_memory AS t SET supersedes = ARRAY[p.prev]
FROM (SELECT id, lag(id) OVER (PARTITION BY coalesce(user_id, 'legacy') ORDER BY id) AS prev
      FROM long_term_memory) AS p
WHERE t.id = p.id AND p.prev IS NOT NULL AND mod((t.id * 7 + %(seed)s), 37) = 0
"""
_ACROSS = """
UPDATE long_term_memory SET supersedes = supersedes || ARRAY[id - 1 - mod(id, 5)]
WHERE mod((id * 3 + %(seed)s), 211) = 0 AND id > 10
"""
_SUPERSEDED = """
UPDATE long_term_memory AS t SET superseded = true, superseded_at = t.created_at
WHERE t.id IN (SELECT unnest(supersedes) FROM long_term_memory) AND mod(t.id, 2) = 0
"""


def fill(
    dsn: str,
    rows: int,
    users: int,
    now: datetime,
    *,
    seed: int = 0,
    used: bool = True,
    days: int = 400,
) -> None:
    """`rows` rows over about `users` users (and the legacy ones), as of `now` (naive UTC);
    `used`: some rows record a use (otherwise the default profile decays by half-life);
    `days`: the oldest row's age."""
    topics = max(2, min(len(WORDS), rows // max(1, users) // 40))
    params: dict[str, Any] = {
        "rows": rows,
        "users": users,
        "seed": seed,
        "words": list(WORDS),
        "topics": topics,
        "now": now.replace(tzinfo=None),
        "used": used,
        "days": days,
    }
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(_FILL, params)
        conn.execute(_CHAINS, {"seed": seed})
        conn.execute(_ACROSS, {"seed": seed})
        conn.execute(_SUPERSEDED)
        conn.execute("SELECT setval(pg_get_serial_sequence('long_term_memory', 'id'), %s)", [rows])
        conn.execute("VACUUM ANALYZE long_term_memory")
