"""What `memtui watch` costs: CPU while idle and per change the agent makes, how soon a change
is in the record, and the disk the record takes, for pi stores of a few sizes.

    python bench/watch_bench.py [--sizes 1000,10000] [--changes 20] [--idle 10]

The agent rewrites one entry per change the way pi writes (temp file, rename) and waits for
watch's report before the next, so each change is one event. CPU is the watch process's own
user + system time (Linux /proc): to start (imports, the first read), per second idle over
`--idle` seconds with no change, and per change.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "realistic-store.json"


def make_store(path: Path, size: int) -> dict[str, Any]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    base = doc["memories"]
    doc["memories"] = [
        {
            **base[n % len(base)],
            "id": f"mem_bench_{n}",
            "content": f"{base[n % len(base)]['content']} #{n}",
        }
        for n in range(size)
    ]
    write(path, doc)
    return doc


def write(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".agent")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def start(path: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memtui", "watch", "--json", str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # watching …
    return proc


def cpu_of(pid: int) -> float:
    """The process's user + system CPU seconds so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(size: int, changes: int, idle: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "MEMTUI_DATA": str(folder / "data"),
            "MEMTUI_CONFIG": str(folder / "c"),
        }
        path = folder / "memory-store.json"
        doc = make_store(path, size)
        store_bytes = path.stat().st_size
        proc = start(path, env)
        assert proc.stdout is not None
        at_ready = cpu_of(proc.pid)
        time.sleep(idle)  # nothing changes: what waiting costs
        after_idle = cpu_of(proc.pid)
        lags = []
        for n in range(changes):
            doc["memories"][n]["content"] += " (rewritten)"
            if n % 2:
                doc["memories"].pop(n + 1)
            wrote = time.perf_counter()
            write(path, doc)
            proc.stdout.readline()  # the event is recorded
            lags.append(time.perf_counter() - wrote)
        after_changes = cpu_of(proc.pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        sidecar = path.with_name(path.name + ".memtui")
        record = sum(p.stat().st_size for p in sidecar.iterdir() if p.is_file())
        return {
            "size": size,
            "store_bytes": store_bytes,
            "start_cpu_s": at_ready,
            "idle_cpu_pct": 100 * (after_idle - at_ready) / idle,
            "per_change_cpu_ms": 1000 * (after_changes - after_idle) / changes,
            "median_lag_ms": 1000 * sorted(lags)[len(lags) // 2],
            "max_lag_ms": 1000 * max(lags),
            "record_bytes": record,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    print(
        f"{'entries':>8} {'store bytes':>12} {'start CPU':>10} {'idle CPU':>9} "
        f"{'CPU/change':>11} {'lag median/max':>16} {'record bytes':>13}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        r = run(size, args.changes, args.idle)
        print(
            f"{r['size']:>8,} {r['store_bytes']:>12,} {r['start_cpu_s']:>8.2f} s "
            f"{r['idle_cpu_pct']:>7.2f} % {r['per_change_cpu_ms']:>8.0f} ms "
            f"{r['median_lag_ms']:>7.0f}/{r['max_lag_ms']:.0f} ms {r['record_bytes']:>13,}"
        )


if __name__ == "__main__":
    main()
