"""The consolidation commands: sim, pairs, plan, apply, decay. Thin: parses arguments, calls
the service, prints."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from memtui.cli.common import UsageError, check_fraction, emit_json, print_done, usage_checked
from memtui.cli.registry import arg, command, later
from memtui.textsafe import json_safe, one_line

if TYPE_CHECKING:
    from datetime import datetime

    from memtui.engine.plan import Action
    from memtui.engine.planner import Progress
    from memtui.engine.profiles import Profile
    from memtui.service import Service
    from memtui.service.plan_stream import StreamedPlan
    from memtui.stores.progress import CommitProgress
    from memtui.stores.protocol import MemoryStore


def _ids(text: str | None) -> list[str] | None:
    return [i.strip() for i in text.split(",") if i.strip()] if text else None


def _methods() -> list[str]:
    from memtui.engine.similarity import METHODS

    return list(METHODS)


def _profiles() -> list[str]:
    from memtui.engine.profiles import PROFILE_NAMES

    return list(PROFILE_NAMES)


def _decay_models() -> list[str]:
    from memtui.engine.decay import MODELS

    return list(MODELS)


@command(
    "sim",
    "similarity of two texts",
    json=True,
    arguments=(
        arg("a", metavar="A"),
        arg("b", metavar="B"),
        arg("--method", default="pi", choices=later(lambda: [*_methods(), "all"])),
    ),
)
def cmd_sim(args: argparse.Namespace, svc: Service) -> int:
    from memtui.engine.similarity import METHODS

    methods = list(METHODS) if args.method == "all" else [args.method]
    scores = {m: svc.profiles.similarity(args.a, args.b, m) for m in methods}
    if args.json:
        emit_json({"a": args.a, "b": args.b, "scores": scores})
    elif len(scores) == 1:
        print(f"{next(iter(scores.values())):.6g}")
    else:
        for method, score in scores.items():
            print(f"{method:<13} {score:.6g}")
    return 0


def _check_pairs(args: argparse.Namespace) -> None:
    check_fraction("--threshold", args.threshold, zero=False)
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")


@command(
    "pairs",
    "pairs of entries (same user) at or above a threshold",
    store=True,
    json=True,
    check=_check_pairs,
    arguments=(
        arg("--method", choices=later(_methods), help="default: the store's profile"),
        arg("--threshold", type=float, metavar="T", help="default: the profile's merge line"),
        arg("--limit", type=int, metavar="N"),
    ),
)
def cmd_pairs(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import shorten

    pairs, method, threshold = svc.profiles.pairs(store, args.method, args.threshold)
    if args.limit is not None:
        pairs = pairs[: args.limit]
    if args.json:
        emit_json([{"a": p.a, "b": p.b, "score": p.score} for p in pairs])
        return 0
    for p in pairs:
        left, right = one_line(store.get(p.a).content), one_line(store.get(p.b).content)
        print(
            f"{p.score:.3f}  {one_line(p.a)}  {one_line(p.b)}  "
            f"{shorten(left, 40)} | {shorten(right, 40)}"
        )
    print(f"{len(pairs)} pairs at {method} ≥ {threshold:g}", file=sys.stderr)
    return 0


LISTED_MOST = 200
"""Action lines `memtui plan --out` prints: the rest are in the file (and `--json` lists
every action); without `--out` every action is listed, since the output is the plan."""
LISTED_PER_KIND = 20
"""Of which at most this many of one kind, in plan order: a plan's actions come user by user
and mostly decays, so the first 200 would show one user's decays and nothing else."""


WARNINGS_MOST = 10
"""Warning lines `memtui plan` prints before its summary (a store of many users may have one
a user); the plan file and `--json` hold them all."""


def _action_line(action: Action) -> str:
    from memtui.views import action_subject, shorten

    mark = "?" if action.needs_decision else " "
    subject = shorten(one_line(action_subject(action)), 50)
    return f"{mark}{action.id:>6} {action.kind:<9} {subject}  · {one_line(action.reason)}"


class _Listing:
    """The action lines `memtui plan --out` prints, told each action in plan order: all of a
    plan of up to `LISTED_MOST` actions, else the first `LISTED_PER_KIND` of each kind
    (`LISTED_MOST` in all), and how many more the file holds."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []
        self.picked: list[str] = []
        self.kinds: Counter[str] = Counter()

    def add(self, action: Action) -> None:
        self.count += 1
        line = _action_line(action) if self.count <= LISTED_MOST else None
        if line is not None:
            self.first.append(line)
        if len(self.picked) < LISTED_MOST and self.kinds[action.kind] < LISTED_PER_KIND:
            self.kinds[action.kind] += 1
            self.picked.append(line or _action_line(action))

    def print(self, out: str) -> None:
        lines = self.first if self.count <= LISTED_MOST else self.picked
        for line in lines:
            print(line)
        if self.count > len(lines):
            print(f"… {self.count - len(lines):,} more actions in {out} (--json lists them all)")


def _check_plan(args: argparse.Namespace) -> None:
    from memtui.service.base import parse_time

    if args.now:
        usage_checked(lambda: parse_time(args.now, "--now"))
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")


@command(
    "plan",
    "propose a consolidation plan (changes nothing)",
    store=True,
    json=True,
    check=_check_plan,
    by_user=lambda a: not (a.llm or a.llm_strategy or a.embed or (a.json and a.plan_version == 1)),
    arguments=(
        arg("--profile", choices=later(_profiles), help="default: by store format"),
        arg(
            "--config",
            dest="profile_config",
            metavar="FILE",
            help="the config file (same as the global --config; [profiles.NAME] overrides)",
        ),
        arg("--now", metavar="ISO8601", help="plan as of this time"),
        arg("--out", metavar="FILE", help="also write the plan (JSON) here"),
        arg(
            "--jobs",
            type=int,
            metavar="N",
            help="plan users in N worker processes (default: one a core, up to 4, for a store "
            "of 50,000 entries or more and two users or more; else 1); the plan is the same",
        ),
        arg(
            "--embed",
            action="store_true",
            help='add local sentence embeddings to the memtui method (pip install "memtui[embed]")',
        ),
        arg(
            "--plan-version",
            type=int,
            choices=(1, 2),
            help="2: compact (the default for --out); 1: a whole record per change (the default "
            "for --json, written as earlier memtui wrote it)",
        ),
        arg("--llm", action="store_true", help="let a model word merges, judge conflicts…"),
        arg("--llm-strategy", metavar="S,...", help="merge, conflict, insight (implies --llm)"),
        arg("--llm-url", metavar="URL", help="OpenAI-compatible API base URL"),
        arg("--llm-model", metavar="NAME", help="model name"),
    ),
)
def cmd_plan(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.service.base import parse_time
    from memtui.service.plans import LlmRequest, plan_summary

    now = usage_checked(lambda: parse_time(args.now, "--now")) if args.now else None
    profile = svc.profiles.profile(store, args.profile)
    model = args.llm or args.llm_strategy
    if svc.plans.streams(store) and not (model or (args.json and args.plan_version == 1)):
        return _plan_streamed(args, svc, store, profile, now)
    with _planning_line() as progress:
        plan = svc.plans.plan(
            store, profile, now=now, progress=progress, embeddings=args.embed, jobs=args.jobs
        )
    for line in svc.notices():
        print(line, file=sys.stderr)
    if args.llm or args.llm_strategy:
        request = LlmRequest(_ids(args.llm_strategy) or (), args.llm_url, args.llm_model)
        plan = svc.plans.improve_plan(plan, store, profile, request)
    if args.out:
        svc.plans.write_plan(plan, args.out, args.plan_version or 2)
    if args.json:
        if args.plan_version == 1:  # as earlier memtui printed it
            emit_json(plan.to_dict())
        else:  # whole records unless version 2 is asked for
            for part in svc.plans.plan_json_parts(plan, args.plan_version or 1):
                sys.stdout.write(json_safe(part.decode("utf-8", "surrogatepass")))
            sys.stdout.write("\n")
        return 0
    print(plan_summary(plan, WARNINGS_MOST))
    similarity = plan.params.get("similarity") or {}
    if similarity.get("model"):
        print(f"similarity {similarity['method']} (model {similarity['model']})")
    if "llm" in plan.params:
        llm = plan.params["llm"]
        print(f"model {llm['model']}: {llm['calls']} requests ({', '.join(llm['strategies'])})")
    if not args.out:
        for action in plan.actions:
            print(_action_line(action))
        return 0
    listing = _Listing()
    for action in plan.actions:
        listing.add(action)
    listing.print(args.out)
    print(f"plan written to {args.out}; apply it with: memtui apply {plan.store} {args.out}")
    return 0


def _plan_streamed(
    args: argparse.Namespace,
    svc: Service,
    store: MemoryStore,
    profile: Profile,
    now: datetime | None,
) -> int:
    """`memtui plan` written and printed as the users' parts stream (service/plan_stream.py):
    the same file and output as the whole plan's, in less memory."""
    status = _Forward()  # the users are planned as the plan is written: shown from then on
    plan = svc.plans.plan_stream(
        store, profile, now=now, progress=status, embeddings=args.embed, jobs=args.jobs
    )
    for line in svc.notices():
        print(line, file=sys.stderr)
    version = args.plan_version or 2
    if args.json:

        def out(part: bytes) -> None:
            sys.stdout.write(json_safe(part.decode("utf-8", "surrogatepass")))

        json_version = args.plan_version or 1
        # a line of progress on the terminal would break JSON printed to it, not to a file
        with status.shown() if not sys.stdout.isatty() else contextlib.nullcontext():
            svc.plans.write_stream(plan, args.out, version, json_out=out, json_version=json_version)
        sys.stdout.write("\n")
        return 0

    # the summary is known once every user is planned, and comes first: the lines wait
    if args.out:
        listing = _Listing()
        with status.shown():
            svc.plans.write_stream(plan, args.out, version, each=listing.add)
        _print_head(plan)
        listing.print(args.out)
        print(
            f"plan written to {args.out}; apply it with: memtui apply {plan.head.store} {args.out}"
        )
        return 0
    with tempfile.SpooledTemporaryFile(1 << 23, "w+", encoding="utf-8", newline="\n") as lines:

        def listed(action: Action) -> None:
            lines.write(_action_line(action) + "\n")

        with status.shown():
            svc.plans.write_stream(plan, None, version, each=listed)
        _print_head(plan)
        sys.stdout.flush()
        lines.seek(0)
        shutil.copyfileobj(lines, sys.stdout)
    return 0


def _print_head(plan: StreamedPlan) -> None:
    """What a streamed plan's listing starts with, once its actions have all come."""
    from memtui.service.plans import plan_summary

    print(plan_summary(plan, WARNINGS_MOST))
    similarity = plan.head.params.get("similarity") or {}
    if similarity.get("model"):
        print(f"similarity {similarity['method']} (model {similarity['model']})")


@contextlib.contextmanager
def _status_line() -> Iterator[Callable[[str], None] | None]:
    """A line on stderr rewritten in place and cleared at the end; None unless stderr is a
    terminal."""
    if not sys.stderr.isatty():
        yield None
        return

    def show(text: str) -> None:
        sys.stderr.write(f"\r\x1b[K{text}")
        sys.stderr.flush()

    try:
        yield show
    finally:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


@contextlib.contextmanager
def _progress_line() -> Iterator[CommitProgress | None]:
    """A one-line progress on stderr while a commit runs (its stages with counts)."""
    with _status_line() as line:
        if line is None:
            yield None
            return

        def show(stage: str, done: int, total: int) -> None:
            line(f"{stage}{f' {done:,}/{total:,}' if total > 1 else ''}")

        yield show


@contextlib.contextmanager
def _planning_line() -> Iterator[Progress | None]:
    """A one-line progress on stderr while a plan is made (its step, or the users planned),
    at most ten times a second."""
    with _status_line() as line:
        if line is None:
            yield None
            return
        last = [0.0]

        def show(name: str, fraction: float) -> None:
            now = time.monotonic()
            if now - last[0] >= _REDRAW or fraction >= 1.0:
                last[0] = now
                line(f"planning: {name} ({fraction:.0%})")

        yield show


_REDRAW = 0.1  # seconds between two redraws of the planning line


class _Forward:
    """A plan's progress, passed on to the planning line while it is `shown`."""

    def __init__(self) -> None:
        self.to: Progress | None = None

    def __call__(self, name: str, fraction: float) -> None:
        if self.to is not None:
            self.to(name, fraction)

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        with _planning_line() as line:
            self.to = line
            try:
                yield
            finally:
                self.to = None


def _check_apply(args: argparse.Namespace) -> None:
    if not args.yes and (sys.stdin is None or not sys.stdin.isatty()):
        raise UsageError("apply asks before it writes, and no terminal is there to ask: add --yes")


@command(
    "apply",
    "apply a plan file (all, or chosen actions) as one transaction",
    store=True,
    json=True,
    arguments=(
        arg("plan", metavar="PLAN_FILE"),
        arg("--only", metavar="ID,...", help="apply just these actions"),
        arg("--skip", metavar="ID,...", help="leave these actions out"),
        arg("--yes", action="store_true", help="do not ask for confirmation"),
    ),
    by_user=lambda a: True,  # a table: only the rows the plan names are read
)
def cmd_apply(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import counted, entry_count, kind_counts, transaction_record

    svc.plans.check_plan_file(args.plan)  # said before asking for --yes
    _check_apply(args)
    made = svc.plans.ready_from_file(
        args.plan, store, only=_ids(args.only), skip=set(_ids(args.skip) or [])
    )
    what = kind_counts(made.kinds)
    if not args.yes:
        answer = input(
            f"apply {counted(len(made.chosen), 'action')} ({what}): "
            f"{entry_count(made.touched)} touched, a backup is kept. Continue? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing applied", file=sys.stderr)
            return 1
    applied, waiting = len(made.chosen), made.waiting
    before = svc.plans.visible(store)
    with _progress_line() as progress:
        tx = svc.plans.commit_ready(store, made, progress)
    del made
    after = svc.plans.visible(store)
    if args.json:
        emit_json(transaction_record(tx))
        return 0
    print_done(
        f"applied {counted(applied, 'action')} ({what}) in transaction {tx.id}: "
        f"{before} entries → {after}",
        store,
        tx,
    )
    if waiting:
        print(
            f"left out {counted(len(waiting), 'action')} that "
            f"{'waits' if len(waiting) == 1 else 'wait'} for a decision "
            f"({kind_counts(waiting)}): approve them in the plan screen, or name them "
            "with --only"
        )
    return 0


def _check_decay(args: argparse.Namespace) -> None:
    if args.days < 1 or args.days > 36500:
        raise UsageError("--days must be between 1 and 36500")


@command(
    "decay",
    "projected importance and when entries cross the line",
    store=True,
    json=True,
    check=_check_decay,
    arguments=(
        arg("id", nargs="?", metavar="ID"),
        arg("--model", choices=later(_decay_models), help="default: the store's profile"),
        arg("--days", type=int, default=30, metavar="N"),
    ),
)
def cmd_decay(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.model import Status
    from memtui.views import shorten

    profile = svc.profiles.profile(store)
    decay = svc.profiles.decay_model(profile, args.model, store)
    line = profile.archive_line if profile.archive_line is not None else profile.expire_below
    now = svc.now()
    if args.id:
        memory = store.get(args.id)
        days = sorted({0, *range(0, args.days + 1, max(1, args.days // 10)), args.days})
        curve = [{"day": d, "importance": decay.value_at(memory, now, d)} for d in days]
        crossing = decay.crossing_day(memory, now, line)
        if args.json:
            emit_json(
                {
                    "id": memory.id,
                    "model": decay.name,
                    "line": line,
                    "crosses_line_in_days": crossing,
                    "curve": curve,
                }
            )
            return 0
        print(f"{one_line(memory.id)} under {decay.name} (line {line:g}):")
        for point in curve:
            bar = "█" * round(point["importance"] * 40)
            print(f"  day {point['day']:>5}  {point['importance']:.3f}  {bar}")
        when = "never" if crossing is None else f"in {crossing:.1f} days"
        print(f"crosses {line:g}: {when}")
        return 0
    rows = []
    for memory in store.memories():
        if memory.status is not Status.ACTIVE:
            continue
        crossing = decay.crossing_day(memory, now, line)
        rows.append(
            {
                "id": memory.id,
                "importance": memory.importance,
                "now": decay.value_at(memory, now),
                f"in_{args.days}_days": decay.value_at(memory, now, args.days),
                "crosses_line_in_days": crossing,
            }
        )
    rows.sort(key=lambda r: (r["crosses_line_in_days"] is None, r["crosses_line_in_days"] or 0))
    if args.json:
        emit_json({"model": decay.name, "line": line, "days": args.days, "entries": rows})
        return 0
    within = [
        r
        for r in rows
        if r["crosses_line_in_days"] is not None and r["crosses_line_in_days"] <= args.days
    ]
    print(
        f"{decay.name} decay, line {line:g}: {len(within)} of {len(rows)} active entries cross it "
        f"within {args.days} days"
    )
    if not within:
        return 0
    content = {m.id: m.content for m in store.memories()}
    width = shutil.get_terminal_size((120, 24)).columns
    id_width = max(2, *(len(one_line(str(r["id"]))) for r in within))
    print(f"{'crosses':>9}  {'now':>5}   {f'{args.days}d':>5}  {'id':<{id_width}}  content")
    for r in within:
        crosses = r["crosses_line_in_days"]
        head = (
            f"{'already' if crosses == 0 else f'{crosses:7.1f} d':>9}  {r['now']:.3f} → "
            f"{r[f'in_{args.days}_days']:.3f}  {one_line(str(r['id'])):<{id_width}}  "
        )
        print(head + shorten(one_line(content[str(r["id"])]), max(10, width - len(head))))
    return 0
