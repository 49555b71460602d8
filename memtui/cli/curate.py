"""The consolidation commands of `memtui`: sim, pairs, plan, apply, merge, supersede,
restore, chain, decay. Thin: parses arguments, calls the service, prints."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.cli import outside as cli_outside
from memtui.cli.common import UsageError, check_fraction, emit_json, print_done, usage_checked
from memtui.engine.calibration import DEFAULT_TARGET_PRECISION
from memtui.engine.decay import MODELS as DECAY_MODELS
from memtui.engine.profiles import PROFILE_NAMES
from memtui.engine.similarity import METHODS
from memtui.model import Status
from memtui.service import CALIBRATION_METHODS, LlmRequest, Service, parse_time, plan_summary
from memtui.stores.progress import CommitProgress
from memtui.textsafe import json_safe, one_line

if TYPE_CHECKING:
    from memtui.engine.plan import Action
    from memtui.engine.profiles import Profile
    from memtui.stores.protocol import MemoryStore
from memtui.views import (
    action_subject,
    counted,
    entry_count,
    kind_counts,
    memory_record,
    shorten,
    transaction_record,
)


def _ids(text: str | None) -> list[str] | None:
    return [i.strip() for i in text.split(",") if i.strip()] if text else None


def cmd_sim(args: argparse.Namespace, svc: Service) -> int:
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


def cmd_pairs(args: argparse.Namespace, svc: Service) -> int:
    check_fraction("--threshold", args.threshold, zero=False)
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    store = svc.stores.open(args.store)
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


def cmd_plan(args: argparse.Namespace, svc: Service) -> int:
    now = usage_checked(lambda: parse_time(args.now, "--now")) if args.now else None
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    store = svc.stores.open(args.store)
    profile = svc.profiles.profile(store, args.profile)
    if not (args.llm or args.llm_strategy or (args.json and args.plan_version == 1)):
        return _plan_streamed(args, svc, store, profile, now)
    plan = svc.plans.plan(store, profile, now=now, embeddings=args.embed, jobs=args.jobs)
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
    print(plan_summary(plan))
    similarity = plan.params.get("similarity") or {}
    if similarity.get("model"):
        print(f"similarity {similarity['method']} (model {similarity['model']})")
    if "llm" in plan.params:
        llm = plan.params["llm"]
        print(f"model {llm['model']}: {llm['calls']} requests ({', '.join(llm['strategies'])})")
    for action in plan.actions:
        mark = "?" if action.needs_decision else " "
        subject = shorten(one_line(action_subject(action)), 50)
        print(f"{mark}{action.id:>6} {action.kind:<9} {subject}  · {one_line(action.reason)}")
    if args.out:
        print(f"plan written to {args.out}; apply it with: memtui apply {plan.store} {args.out}")
    return 0


def _plan_streamed(
    args: argparse.Namespace,
    svc: Service,
    store: MemoryStore,
    profile: Profile,
    now: datetime | None,
) -> int:
    """`memtui plan` written and printed as the users' parts stream (service/plan_stream.py)."""
    plan = svc.plans.plan_stream(store, profile, now=now, embeddings=args.embed, jobs=args.jobs)
    for line in svc.notices():
        print(line, file=sys.stderr)
    version = args.plan_version or 2
    if args.json:

        def out(part: bytes) -> None:
            sys.stdout.write(json_safe(part.decode("utf-8", "surrogatepass")))

        json_version = args.plan_version or 1
        svc.plans.write_stream(plan, args.out, version, json_out=out, json_version=json_version)
        sys.stdout.write("\n")
        return 0

    def head() -> None:
        print(plan_summary(plan))
        similarity = plan.head.params.get("similarity") or {}
        if similarity.get("model"):
            print(f"similarity {similarity['method']} (model {similarity['model']})")

    def listed(action: Action) -> None:
        mark = "?" if action.needs_decision else " "
        subject = shorten(one_line(action_subject(action)), 50)
        print(f"{mark}{action.id:>6} {action.kind:<9} {subject}  · {one_line(action.reason)}")

    svc.plans.write_stream(plan, args.out, version, each=listed, before=head)
    if args.out:
        print(
            f"plan written to {args.out}; apply it with: memtui apply {plan.head.store} {args.out}"
        )
    return 0


@contextlib.contextmanager
def _progress_line() -> Iterator[CommitProgress | None]:
    """A one-line progress on stderr while a commit runs, cleared at the end; nothing unless
    stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return

    def show(stage: str, done: int, total: int) -> None:
        counts = f" {done:,}/{total:,}" if total > 1 else ""
        sys.stderr.write(f"\r\x1b[K{stage}{counts}")
        sys.stderr.flush()

    try:
        yield show
    finally:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def cmd_apply(args: argparse.Namespace, svc: Service) -> int:
    if not args.yes and (sys.stdin is None or not sys.stdin.isatty()):
        raise UsageError("apply asks before it writes, and no terminal is there to ask: add --yes")
    store = svc.stores.open(args.store)
    plan = svc.plans.load_plan(args.plan, store)
    approved = _ids(args.only) or plan.default_approved()
    skip = set(_ids(args.skip) or [])
    approved = [a for a in approved if a not in skip]
    for ident in approved:
        plan.action(ident)
    kinds = [plan.action(a).kind for a in approved]
    touched = len({t for a in approved for t in plan.action(a).targets})
    what = kind_counts(kinds)
    if not args.yes:
        answer = input(
            f"apply {len(approved)} actions ({what}): {entry_count(touched)} touched, "
            "a backup is kept. Continue? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing applied", file=sys.stderr)
            return 1
    before = sum(1 for m in store.memories() if m.visible)
    with _progress_line() as progress:
        tx = svc.plans.apply(store, plan, approved, progress)
    after = sum(1 for m in store.memories() if m.visible)
    if args.json:
        emit_json(transaction_record(tx))
        return 0
    print_done(
        f"applied {len(approved)} actions ({what}) in transaction {tx.id}: "
        f"{before} entries → {after}",
        store,
        tx,
    )
    if not args.only:
        chosen = set(approved) | skip
        waiting = [a.kind for a in plan.actions if a.id not in chosen]
        if waiting:
            print(
                f"left out {counted(len(waiting), 'action')} that "
                f"{'waits' if len(waiting) == 1 else 'wait'} for a decision "
                f"({kind_counts(waiting)}): approve them in the plan screen, or name them "
                "with --only"
            )
    return 0


def cmd_merge(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    tx = svc.merges.merge(store, args.ids, strategy=args.strategy, content=args.content)
    merged = store.get(tx.details["merged"]) if store.find(tx.details["merged"]) else None
    if args.json:
        emit_json(
            {
                "transaction": transaction_record(tx),
                "merged": memory_record(merged) if merged else tx.details["merged"],
            }
        )
        return 0
    said = f"merged {entry_count(len(args.ids))} into {tx.details['merged']} (transaction {tx.id})"
    if merged is not None:
        said += f"\n  {one_line(merged.content)}"
    print_done(said, store, tx)
    return 0


def cmd_supersede(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    tx = svc.merges.supersede(store, args.old, args.new, args.reason or "")
    print_done(f"{args.new} now supersedes {args.old} (transaction {tx.id})", store, tx)
    return 0


def cmd_restore(args: argparse.Namespace, svc: Service) -> int:
    if cli_outside.wants_outside(args):
        return cli_outside.cmd_restore_outside(args, svc)
    if args.id is None:
        raise UsageError("give the entry id to restore, or --outside ID / --since DATE")
    store = svc.stores.open(args.store)
    tx = svc.merges.restore(store, args.id)
    print_done(f"{tx.reason} (transaction {tx.id})", store, tx)
    return 0


def cmd_chain(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    chain = svc.merges.lineage(store, args.id)
    if args.json:
        emit_json(chain.to_dict())
        return 0
    for label, ids in (("replaced", chain.supersedes), ("replaced by", chain.superseded_by)):
        for ident in ids:
            record = chain.records.get(ident)
            text = one_line(record.content) if record else "(not found)"
            status = record.status.value if record else "?"
            print(f"{label:>12}  {one_line(ident)} [{status}]  {shorten(text, 70)}")
    me = chain.records[chain.id]
    print(
        f"{'this':>12}  {one_line(chain.id)} [{me.status.value}]  "
        f"{shorten(one_line(me.content), 70)}"
    )
    for event in chain.events:
        tx = f"tx {event['tx']}" if event["tx"] else "source"
        print(
            f"  {event['at'][:19]}  {tx:<7} {event['actor']:<6} {event['kind']:<10} "
            f"{one_line(event['reason'])}"
        )
    return 0


def cmd_decay(args: argparse.Namespace, svc: Service) -> int:
    if args.days < 1 or args.days > 36500:
        raise UsageError("--days must be between 1 and 36500")
    store = svc.stores.open(args.store)
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


def cmd_label(args: argparse.Namespace, svc: Service) -> int:
    if not args.ids and (args.same or args.different):
        raise UsageError("--same and --different need the entries' ids")
    if len(args.ids) < 2:
        raise UsageError("a label needs two or more ids (or none: the labelling screen)")
    if args.same == args.different:
        raise UsageError("say --same (one memory) or --different")
    store = svc.stores.open(args.store)
    if args.different and len(args.ids) > 2:  # no two of them are one memory, as `n` on a cluster
        labels = svc.labels.label_groups(store, [list(p) for p in combinations(args.ids, 2)], False)
        print(f"labelled {len(labels)} pairs of {len(args.ids)} entries: not the same memory")
        return 0
    label = svc.labels.label(store, args.ids, same=args.same)
    verdict = "the same memory" if label.same else "not the same memory"
    print(f"labelled {', '.join(one_line(i) for i in label.ids)}: {verdict}")
    return 0


def cmd_labels(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    labels = svc.labels.labels(store)
    records = [label.to_dict() for label in labels]
    if args.export:
        svc.labels.export_labels(labels, Path(args.export).expanduser())
        print(f"exported {len(labels)} labels to {args.export}", file=sys.stderr)
    if args.json:
        emit_json(records)
        return 0
    if not labels and not args.export:
        print("no labels yet (memtui label STORE ID ID --same|--different)", file=sys.stderr)
    for label in labels:
        mark = "same" if label.same else "diff"
        texts = " | ".join(shorten(one_line(t), 40) for t in label.texts)
        print(f"{mark}  {', '.join(one_line(i) for i in label.ids)}  {texts}")
    return 0


def cmd_calibrate(args: argparse.Namespace, svc: Service) -> int:
    if args.precision is not None and not 0.0 < args.precision <= 1.0:
        raise UsageError(f"the precision target must be in (0, 1], got {args.precision:g}")
    store = svc.stores.open(args.store)
    methods = [args.method] if args.method else None
    report = svc.calibration.calibrate(store, methods, args.precision)
    if args.json:
        emit_json(report.to_dict())
        return 0
    print(
        f"{report.pairs} labelled pairs ({report.positives} the same memory, "
        f"{report.pairs - report.positives} not); precision target {report.target_precision:g}"
    )
    for result in report.methods:
        print(f"\n{result.method}")
        print("  threshold  precision  recall     F1    tp   fp   fn")
        for point in result.curve:
            mark = "◀" if point is result.recommended else " "
            print(
                f"  {point.threshold:9.2f}  {point.precision:9.3f}  {point.recall:6.3f}  "
                f"{point.f1:5.3f}  {point.tp:4d} {point.fp:4d} {point.fn:4d} {mark}"
            )
        if result.recommended is None:
            print(f"  no threshold reaches precision {report.target_precision:g}")
    config = report.config_lines()
    if report.shortfall is not None:
        print(f"\nno recommendation yet: {report.shortfall}")
    elif config is None:
        print("\nno method reaches the precision target: label more pairs, or lower --precision")
    else:
        print("\nrecommended (best F1 at the precision target); in the config file:\n")
        print(config)
    return 0


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command("sim", cmd_sim, "similarity of two texts", store=False)
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--method", default="pi", choices=[*METHODS, "all"])

    p = command("pairs", cmd_pairs, "pairs of entries (same user) at or above a threshold")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--method", choices=METHODS, help="default: the store's profile")
    p.add_argument("--threshold", type=float, metavar="T", help="default: the profile's merge line")
    p.add_argument("--limit", type=int, metavar="N")

    p = command("plan", cmd_plan, "propose a consolidation plan (changes nothing)")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--profile", choices=PROFILE_NAMES, help="default: by store format")
    p.add_argument(
        "--config",
        dest="profile_config",
        metavar="FILE",
        help="the config file (same as the global --config; [profiles.NAME] overrides)",
    )
    p.add_argument("--now", metavar="ISO8601", help="plan as of this time")
    p.add_argument("--out", metavar="FILE", help="also write the plan (JSON) here")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="plan users in N worker processes (default 1: the whole store in this one); "
        "the plan is the same",
    )
    p.add_argument(
        "--embed",
        action="store_true",
        help='add local sentence embeddings to the memtui method (pip install "memtui[embed]")',
    )
    p.add_argument(
        "--plan-version",
        type=int,
        choices=(1, 2),
        help="2: compact (the default for --out); 1: a whole record per change (the default "
        "for --json, written as earlier memtui wrote it)",
    )
    p.add_argument("--llm", action="store_true", help="let a model word merges, judge conflicts…")
    p.add_argument(
        "--llm-strategy", metavar="S,...", help="merge, conflict, insight (implies --llm)"
    )
    p.add_argument("--llm-url", metavar="URL", help="OpenAI-compatible API base URL")
    p.add_argument("--llm-model", metavar="NAME", help="model name")

    p = command("apply", cmd_apply, "apply a plan file (all, or chosen actions) as one transaction")
    p.add_argument("store", metavar="STORE")
    p.add_argument("plan", metavar="PLAN_FILE")
    p.add_argument("--only", metavar="ID,...", help="apply just these actions")
    p.add_argument("--skip", metavar="ID,...", help="leave these actions out")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    p = command("merge", cmd_merge, "merge two or more entries by hand (one transaction)")
    p.add_argument("store", metavar="STORE")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--content", metavar="TEXT", help="the merged wording (default: by strategy)")
    p.add_argument("--strategy", default="rule", choices=("rule", "keep-base"))

    p = command("supersede", cmd_supersede, "mark OLD as replaced by NEW", json_flag=False)
    p.add_argument("store", metavar="STORE")
    p.add_argument("old", metavar="OLD_ID")
    p.add_argument("new", metavar="NEW_ID")
    p.add_argument("--reason", metavar="TEXT")

    p = command(
        "restore", cmd_restore, "bring back a merged, superseded or archived entry", json_flag=False
    )
    p.add_argument("store", metavar="STORE")
    p.add_argument("id", metavar="ID", nargs="?")
    cli_outside.add_restore_options(p)

    p = command("chain", cmd_chain, "an entry's lineage: what it replaced and what replaced it")
    p.add_argument("store", metavar="STORE")
    p.add_argument("id", metavar="ID")

    p = command("label", cmd_label, "label entries as the same memory or not", json_flag=False)
    p.add_argument("store", metavar="STORE")
    p.add_argument(
        "ids",
        nargs="*",
        metavar="ID",
        help="two entries (a pair) or more (a group); none: the labelling screen",
    )
    p.add_argument("--same", action="store_true", help="they are one memory")
    p.add_argument("--different", action="store_true", help="they are not one memory")

    p = command("labels", cmd_labels, "the labels kept beside a store")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--export", metavar="FILE", help="also write them to FILE (JSON Lines)")

    p = command("calibrate", cmd_calibrate, "precision and recall per threshold from the labels")
    p.add_argument("store", metavar="STORE")
    p.add_argument(
        "--method",
        choices=CALIBRATION_METHODS,
        help="only this method (default: every lexical one; memtui+embed needs memtui[embed])",
    )
    p.add_argument(
        "--precision",
        type=float,
        default=DEFAULT_TARGET_PRECISION,
        metavar="P",
        help="the precision the recommended threshold must reach (default 0.8)",
    )

    p = command("decay", cmd_decay, "projected importance and when entries cross the line")
    p.add_argument("store", metavar="STORE")
    p.add_argument("id", nargs="?", metavar="ID")
    p.add_argument("--model", choices=DECAY_MODELS, help="default: the store's profile")
    p.add_argument("--days", type=int, default=30, metavar="N")
