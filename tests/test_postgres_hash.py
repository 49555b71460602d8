"""`content_hash` exactly as Go computes it (docs/formats.md, `postgres`; 16 golden values)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.stores.postgres.content_hash import canonical_json, content_hash, go_float

# computed by Go's own encoding/json and crypto/sha256 (data/longterm/postgres/)
GOLDEN = Path(__file__).parent / "fixtures" / "content_hash_golden.jsonl"


def _golden() -> list[dict[str, object]]:
    path = GOLDEN
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_all_sixteen_golden_records_are_there() -> None:
    assert len(_golden()) == 16


@pytest.mark.parametrize("case", _golden(), ids=lambda c: str(c["record"]["memory_id"]))  # type: ignore[index]
def test_golden_hash(case: dict[str, object]) -> None:
    record = case["record"]
    assert isinstance(record, dict)
    assert canonical_json(record) == case["canonical_json"]
    assert content_hash(record) == case["content_hash"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (3.0, "3"),
        (-0.0, "-0"),
        (1e20, "100000000000000000000"),
        (-2.5e-8, "-2.5e-8"),
    ],
)
def test_go_float_forms(value: float, text: str) -> None:
    assert go_float(value) == text
