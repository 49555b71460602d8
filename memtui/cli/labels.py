"""The commands about labels (pairs a person said are, or are not, one memory): label, labels,
calibrate."""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.cli.common import UsageError, emit_json, run_tui
from memtui.cli.registry import arg, command, later
from memtui.textsafe import one_line

if TYPE_CHECKING:
    from memtui.service import Service
    from memtui.stores.protocol import MemoryStore


def _labelling(args: argparse.Namespace) -> bool:
    return bool(args.ids or args.same or args.different)


def _check_label(args: argparse.Namespace) -> None:
    if not _labelling(args):
        return
    if not args.ids and (args.same or args.different):
        raise UsageError("--same and --different need the entries' ids")
    if len(args.ids) < 2:
        raise UsageError("a label needs two or more ids (or none: the labelling screen)")
    if args.same == args.different:
        raise UsageError("say --same (one memory) or --different")


@command(
    "label",
    "label entries as the same memory or not",
    store=True,
    check=_check_label,
    arguments=(
        arg(
            "ids",
            nargs="*",
            metavar="ID",
            help="two entries (a pair) or more (a group); none: the labelling screen",
        ),
        arg("--same", action="store_true", help="they are one memory"),
        arg("--different", action="store_true", help="they are not one memory"),
    ),
)
def cmd_label(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    """`memtui label STORE` opens the labelling screen; with ids (and a verdict) it labels."""
    if not _labelling(args):
        return run_tui(str(store.path), svc, start_screen="label")
    if args.different and len(args.ids) > 2:  # no two of them are one memory, as `n` on a cluster
        labels = svc.labels.label_groups(store, [list(p) for p in combinations(args.ids, 2)], False)
        print(f"labelled {len(labels)} pairs of {len(args.ids)} entries: not the same memory")
        return 0
    label = svc.labels.label(store, args.ids, same=args.same)
    verdict = "the same memory" if label.same else "not the same memory"
    print(f"labelled {', '.join(one_line(i) for i in label.ids)}: {verdict}")
    return 0


@command(
    "labels",
    "the labels kept beside a store",
    store=True,
    json=True,
    arguments=(arg("--export", metavar="FILE", help="also write them to FILE (JSON Lines)"),),
)
def cmd_labels(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import shorten

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


def _calibration_methods() -> list[str]:
    from memtui.service.calibration import CALIBRATION_METHODS

    return list(CALIBRATION_METHODS)


def _target_precision() -> float:
    from memtui.engine.calibration import DEFAULT_TARGET_PRECISION

    return DEFAULT_TARGET_PRECISION


def _check_calibrate(args: argparse.Namespace) -> None:
    if args.precision is not None and not 0.0 < args.precision <= 1.0:
        raise UsageError(f"the precision target must be in (0, 1], got {args.precision:g}")


@command(
    "calibrate",
    "precision and recall per threshold from the labels",
    store=True,
    json=True,
    check=_check_calibrate,
    arguments=(
        arg(
            "--method",
            choices=later(_calibration_methods),
            help="only this method (default: every lexical one; memtui+embed needs memtui[embed])",
        ),
        arg(
            "--precision",
            type=float,
            default=later(_target_precision),
            metavar="P",
            help="the precision the recommended threshold must reach (default 0.8)",
        ),
    ),
)
def cmd_calibrate(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
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
