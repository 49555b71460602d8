"""memtui at 1,000,000 entries of 1,000 users: time, CPU and peak memory of each step a person
takes, each as a whole process (start-up and worker processes included).

    flock /tmp/memtui-big.lock python bench/million_bench.py [--entries 1000000] [--users 1000]
        [--jobs N] [--also-jobs-1] [--baseline REF] [--keep DIR]

1. open: loading the native store (`open_store(...).memories()`);
2. plan: `memtui plan STORE --profile longterm|default --out F` (the version-2 file), at
   memtui's default `--jobs` unless `--jobs N` is given;
3. apply: `memtui apply STORE F --yes` of the longterm plan (every pre-approved action);
4. undo: `memtui undo STORE` of that apply;
5. first paint: `memtui STORE` in a pseudo-terminal (120×40), process start until the table's
   header ("importance") is on the screen, as bench/tui_bench.py measures it at 100k.

`--also-jobs-1` plans both profiles again at `--jobs 1`; `--baseline REF` plans them with the
code of commit REF too (unpacked by before_tree.py), in the same run, so each figure has its
baseline beside it on the same machine load.

Each line: wall seconds; CPU seconds (user + system of the process and its children); the peak
RSS of the largest single process (GNU time's maxrss, which covers reaped workers); the peak of
the process tree's summed PSS (sampled every 0.5 s from /proc/PID/smaps_rollup: the parent
and its workers together, shared copy-on-write pages counted once) with how many processes
were alive then; and the load average before and after.

Everything is written to a temporary folder that is removed at the end (1M entries are a
360 MB store and plans of 150-300 MB), or to `--keep DIR`, which is kept.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import unpack
from pairs_bench import ENV, ROOT


@dataclass
class Figures:
    wall: float
    cpu: float
    peak: float  # MB, the largest single process
    tree: float  # MB, the largest sampled PSS sum over the process tree
    procs: int  # processes alive at that sample


def _tree_rss(root: int) -> tuple[float, int]:
    """Summed PSS (MB) of `root` and its descendants, and how many they are. PSS, not RSS:
    forked workers share the parent's pages (copy on write), which RSS would count in each."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    members = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in members and pid not in members:
                members.add(pid)
                grew = True
    total_kb = 0
    for pid in members:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        pss = next((x for x in rollup.splitlines() if x.startswith("Pss:")), "Pss: 0 kB")
        total_kb += int(pss.split()[1])
    return total_kb / 1024, len(members)


class TreeSampler(threading.Thread):
    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak = 0.0
        self.procs = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            rss, count = _tree_rss(self.root)
            if rss > self.peak:
                self.peak, self.procs = rss, count


def measure(args: list[str], env: dict[str, str], cwd: Path) -> Figures:
    timing = Path(tempfile.mktemp(suffix=".time"))
    cmd = ["/usr/bin/time", "-o", str(timing), "-f", "%e %U %S %M", *args]
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    sampler = TreeSampler(child.pid)
    sampler.start()
    code = child.wait()
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    fields = timing.read_text().split()
    timing.unlink()
    if code:
        raise subprocess.CalledProcessError(code, args)
    user, system, peak_kb = (float(x) for x in fields[-3:])
    return Figures(wall, user + system, peak_kb / 1024, sampler.peak, sampler.procs)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def line(label: str, fig: Figures, before: str, note: str = "") -> None:
    print(
        f"{label:<44} {fig.wall:>7.1f} s {fig.cpu:>7.1f} s cpu {fig.peak:>7.0f} MB"
        f" {fig.tree:>7.0f} MB tree pss ({fig.procs} procs)  load {before} -> {load()}  {note}",
        flush=True,
    )


class Code:
    """Where a memtui runs from: this checkout, or an earlier commit unpacked."""

    def __init__(self, name: str, source: Path, env: dict[str, str]) -> None:
        self.name, self.source = name, source
        self.env = {**env, "PYTHONPATH": str(source)}

    def memtui(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "memtui", *args]

    def step(self, label: str, *args: str, note: str = "") -> Figures | None:
        before = load()
        try:
            fig = measure(self.memtui(*args), self.env, self.source)
        except subprocess.CalledProcessError as failed:  # memtui said why on stderr
            print(f"{self.name} {label}: exit {failed.returncode}", flush=True)
            return None
        line(f"{self.name} {label}", fig, before, note)
        return fig


def paint(cmd: list[str], marker: bytes, timeout: float) -> tuple[float, float]:
    """Seconds from process start until `marker` is on the terminal, and the peak RSS (MB)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({**ENV, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"})
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.perf_counter()
    seen = b""
    took = float("nan")
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen = (seen + os.read(fd, 65536))[-4096:]
                except OSError:
                    break
                if marker in seen:
                    took = time.perf_counter() - start
                    break
        return took, _peak_mb(pid)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def _peak_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    found = next((x for x in status.splitlines() if x.startswith("VmHWM:")), "VmHWM: nan kB")
    return float(found.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--jobs", help="pass --jobs N to plan (default: memtui's own)")
    parser.add_argument("--also-jobs-1", action="store_true", help="plan again at --jobs 1")
    parser.add_argument("--baseline", help="plan with the code of this commit too")
    parser.add_argument(
        "--steps",
        default="open,plan,apply,undo,default,paint",
        help="comma-separated subset of open,plan,apply,undo,default,paint",
    )
    parser.add_argument("--keep", help="use (and keep) this folder instead of a temporary one")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memtui-million-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        bench(folder, args)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def bench(folder: Path, args: argparse.Namespace) -> None:
    steps = set(args.steps.split(","))
    env = {**ENV, "MEMTUI_DATA": str(folder / "data")}  # backups and caches stay in the folder
    ENV.update(env)
    here = Code("now", ROOT, env)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    store = folder / "store.json"
    if not store.exists():
        before = load()
        fig = measure(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; sys.path.insert(0, 'bench');"
                "from pairs_bench import make_store;"
                f"make_store(Path({str(folder)!r}), 'store', {args.entries}, {args.users})",
            ],
            env,
            ROOT,
        )
        line("make the store (not memtui)", fig, before, f"{store.stat().st_size:,} bytes")
    print(f"{args.entries:,} entries, {args.users:,} users; now = {head}; cpus {os.cpu_count()}")
    codes = [here]
    if args.baseline:
        base = folder / f"code-{args.baseline}"
        if not base.exists():
            unpack(args.baseline, base)
        codes.append(Code(args.baseline, base, env))
    if "open" in steps:
        for code in codes:
            before = load()
            fig = measure(
                [
                    sys.executable,
                    "-c",
                    "from memtui.stores import open_store;"
                    f"print(len(open_store({str(store)!r}).memories()))",
                ],
                code.env,
                code.source,
            )
            line(f"{code.name} open (load every entry)", fig, before)
    jobs = ["--jobs", args.jobs] if args.jobs else []
    # the plan names the store it was made for: the longterm plan is made for a copy, which
    # it is then applied to and undone on
    target = folder / "applied.json"
    if "plan" in steps:
        shutil.copyfile(store, target)
        out = folder / "plan-longterm.json"
        label = f"plan --profile longterm --out {' '.join(jobs)}".rstrip()
        if here.step(label, "plan", str(target), "--profile", "longterm", "--out", str(out), *jobs):
            print(f"    plan file {out.stat().st_size:,} bytes", flush=True)
            applied = "apply" in steps and here.step(
                "apply (longterm plan, all approved)", "apply", str(target), str(out), "--yes"
            )
            if applied and "undo" in steps:
                here.step("undo (that apply)", "undo", str(target))
        target.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
    if "paint" in steps:
        before = load()
        wall, peak = paint([sys.executable, "-m", "memtui", str(store)], b"importance", 600.0)
        line(
            "now first paint of the table (pty)",
            Figures(wall, float("nan"), peak, peak, 1),
            before,
            "(cpu and tree not measured here)",
        )

    variants: list[tuple[Code, list[str]]] = []
    if args.also_jobs_1:
        variants.append((here, ["--jobs", "1"]))
    variants.extend((code, []) for code in codes[1:])
    profiles = ["longterm"] + (["default"] if "default" in steps else [])
    for profile in profiles:
        runs = [(here, jobs)] if profile == "default" else []
        for code, extra in runs + variants:
            if code is here and profile == "longterm" and not extra:
                continue
            out = folder / f"plan-{profile}-{code.name}.json"
            label = f"plan --profile {profile} --out {' '.join(extra)}".rstrip()
            if code.step(
                label, "plan", str(store), "--profile", profile, "--out", str(out), *extra
            ):
                print(f"    plan file {out.stat().st_size:,} bytes", flush=True)
            out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
