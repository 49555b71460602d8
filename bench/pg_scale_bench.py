"""A PostgreSQL table planned user by user against the whole loaded table, in the same run, on a
throwaway server (needs initdb/pg_ctl; tables made by the server, tests/pg_scale_rows.py).

    flock /tmp/memtui-big.lock python bench/pg_scale_bench.py [--sizes 100000:100,1000000:1000]
        [--big 10000000:5000] [--profile longterm]

For each ROWS:USERS of `--sizes`: `memtui plan URL --out F` as the CLI runs it, each way in a
fresh process: "by-user" (`PgTable`, service/pg_plan.py: a pass without content in id order,
then one server-side cursor sorted by user) and "whole" (`PgStore` loads every row, then the
streamed plan). Wall time, CPU time and peak RSS are memtui's process alone: the server's own
time and memory (its sort of the table by user, its buffers) are not counted. The two plan files
must be byte-identical (the run stops otherwise). `--big`: one table planned by user only
(time and peak), the way the 10M-row figure was measured.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import NOW
from tests.pg_scale_rows import fill
from tests.pg_server import running_server

_PLAN = """
import json, resource, sys, time
from memtui.service import Service, parse_time
dsn, how, profile, out = sys.argv[1:5]
start = time.perf_counter()
svc = Service()
store = svc.stores.open(dsn, by_user=how == "by-user")
opened = time.perf_counter() - start
chosen = svc.profiles.profile(store, profile)
plan = svc.plans.plan_stream(store, chosen, now=parse_time(sys.argv[5], "--now"))
svc.plans.write_stream(plan, out)
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "wall": time.perf_counter() - start, "open": opened, "cpu": use.ru_utime + use.ru_stime,
    "peak_mb": use.ru_maxrss / 1024, "rows": len(store),
}))
"""


def _plan(dsn: str, how: str, profile: str, out: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _PLAN, dsn, how, profile, str(out), NOW.isoformat()],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{how}: {done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout)
    figures["sha256_12"] = hashlib.sha256(out.read_bytes()).hexdigest()[:12]  # type: ignore[assignment]
    figures["plan_mb"] = out.stat().st_size / 2**20
    out.unlink()
    return figures


def _size(text: str) -> tuple[int, int]:
    rows, _, users = text.partition(":")
    return int(rows), int(users or 1000)


def _show(rows: int, users: int, how: str, f: dict[str, float], generated: float) -> None:
    print(
        f"{rows:>10,} rows {users:>6,} users  {how:<8} wall {f['wall']:7.1f} s "
        f"(open {f['open']:6.1f})  cpu {f['cpu']:7.1f} s  peak {f['peak_mb']:7.0f} MB  "
        f"plan {f['plan_mb']:6.1f} MB  sha {f['sha256_12']}  (table made in {generated:.0f} s)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000:100,1000000:1000")
    parser.add_argument("--big", default="", help="ROWS:USERS planned by user only, once")
    parser.add_argument("--profile", default="longterm")
    parser.add_argument("--out", default="/tmp/pgscale", help="a folder for the plan files")
    args = parser.parse_args()
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    made = NOW - timedelta(days=2)
    with running_server() as server:
        for text in [s for s in args.sizes.split(",") if s]:
            rows, users = _size(text)
            dsn = server.create_database()
            start = time.perf_counter()
            fill(dsn, rows, users, made, seed=1)
            generated = time.perf_counter() - start
            got = {}
            for how in ("by-user", "whole"):
                got[how] = _plan(dsn, how, args.profile, folder / f"plan-{how}.json")
                _show(rows, users, how, got[how], generated)
            if got["by-user"]["sha256_12"] != got["whole"]["sha256_12"]:
                raise SystemExit("the plans differ")
            print(f"{'':>28}plans byte-identical", flush=True)
        if args.big:
            rows, users = _size(args.big)
            dsn = server.create_database()
            start = time.perf_counter()
            fill(dsn, rows, users, made, seed=1)
            generated = time.perf_counter() - start
            _show(
                rows,
                users,
                "by-user",
                _plan(dsn, "by-user", args.profile, folder / "big.json"),
                generated,
            )


if __name__ == "__main__":
    main()
