"""What varies between store formats is declared once, in each format's `FormatTraits`: no code
outside a format's own module asks which format a store is (checked on the source, as the
import contracts are), and every registered format has its traits and its docs section."""

from __future__ import annotations

import re
from pathlib import Path

from memtui.stores.formats.registry import FORMATS
from memtui.stores.transfer import EXPORT_FORMATS
from memtui.traits import FormatTraits

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "memtui"
# a format's name compared with a literal, looked up in a table, or tested against a list
FORMAT_CHECK = re.compile(
    r"(format_name|store_format)\s*(==|!=)\s*[\"']"
    r"|[\"']\s*(==|!=)\s*[\w.]*(format_name|store_format)\b"
    r"|(format_name|store_format)\s+(not\s+)?in\s*[(\[{]"
    r"|\.get\(\s*[\w.]*(format_name|store_format)\b"
    r"|\[\s*[\w.]*(format_name|store_format)\s*\]"
)


def _is_format_module(path: Path, root: Path) -> bool:
    relative = path.relative_to(root).as_posix()
    return relative.startswith(("stores/formats/", "stores/postgres/"))


def format_checks(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if _is_format_module(path, root):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FORMAT_CHECK.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_no_code_outside_a_format_asks_which_format_a_store_is() -> None:
    assert format_checks(PACKAGE) == []


def test_the_check_finds_the_kinds_of_format_test_it_forbids(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    sample = tmp_path / "pkg" / "sample.py"
    sample.write_text(
        'if store.format_name == "pi":\n'
        "ok = plan.store_format != store.format_name\n"
        "rules = HAND_RULES.get(store.format_name)\n"
        'if "longterm" == store_format:\n'
        'if store.format_name in ("pi", "hermes"):\n',
        encoding="utf-8",
    )
    found = [line.split(": ", 1)[1] for line in format_checks(tmp_path)]
    assert found == [
        'if store.format_name == "pi":',
        "rules = HAND_RULES.get(store.format_name)",
        'if "longterm" == store_format:',
        'if store.format_name in ("pi", "hermes"):',
    ]


def test_every_format_declares_its_traits_and_is_in_the_docs() -> None:
    docs = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## .*?`(\S+)`", docs, re.MULTILINE)
    for name, fmt in FORMATS.items():
        assert isinstance(fmt.traits, FormatTraits), name
        assert "traits" in type(fmt).__dict__, f"{name} relies on the default traits"
        assert name in headings, f"docs/formats.md has no section for {name}"
    assert "postgres" in headings
    # the export names the traits declare are the ones `memtui export --format` offered
    assert EXPORT_FORMATS == ("native", "pi", "longterm-jsonl")
