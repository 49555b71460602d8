"""The docs stay true of the code: the README starts with the two commands CI runs and stays
under 25 KB; every `memtui COMMAND --flag` the docs show exists; every relative link and every
`docs/…#anchor` a docstring cites resolves."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from memtui.cli import build_parser

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCS = [README, ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FIRST_COMMANDS = 'pip install -e ".[dev]" && memtui demo\npython -m pytest'


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _code(text: str) -> list[str]:
    """The lines of every fenced block and every inline code span."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    return [line for block in blocks for line in block.splitlines()] + spans


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a markdown file."""
    found: set[str] = set()
    for heading in re.findall(
        r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), flags=re.M
    ):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = 0
        while (slug if n == 0 else f"{slug}-{n}") in found:
            n += 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def test_the_readme_starts_with_the_commands_for_a_fresh_machine() -> None:
    text = README.read_text()
    assert text.startswith(f"# memtui\n\n```sh\n{FIRST_COMMANDS}\n```\n")
    test_command = FIRST_COMMANDS.splitlines()[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci, ".ci/run no longer runs the README's test command"


def test_the_readme_is_under_25_kb() -> None:
    size = len(README.read_bytes())
    assert size < 25_000, f"README.md is {size:,} bytes"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_and_option_shown_exists(doc: Path) -> None:
    commands = _subcommands()
    wrong = []
    for line in _code(doc.read_text()):
        code = re.sub(r"\s#.*", "", line)  # a shell or TOML comment is prose
        for shown in re.findall(r"\bmemtui ([a-z][a-z-]*)\b(.*)", code):
            name, rest = shown
            if name not in commands:
                wrong.append(f"`memtui {name}`")
                continue
            known = {o for a in commands[name]._actions for o in a.option_strings}
            wrong += [
                f"`memtui {name} {o}`"
                for o in re.findall(r"--[a-z][a-z-]*", rest)
                if o not in known
            ]
    assert not wrong, f"{doc.name} shows what `memtui --help` does not have: {wrong}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    text = doc.read_text()
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        anchored = not anchor or file.suffix != ".md" or anchor in _anchors(file.read_text())
        if not file.exists() or not anchored:
            broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)}: links that lead nowhere: {broken}"


def _citations() -> list[tuple[str, str]]:
    """(file, what it cites): `docs/design.md#anchor`, `bench/README.md#anchor`, and a format's
    section as `docs/formats.md, `pi``."""
    found = []
    for source in [
        *ROOT.glob("memtui/**/*.py"),
        *ROOT.glob("tests/*.py"),
        *ROOT.glob("bench/*.py"),
    ]:
        if source.name == "test_docs.py":
            continue
        text = source.read_text()
        found += re.findall(r"\b((?:docs/[a-z]+|bench/README)\.md)(#[\w-]+)", text)
        found += re.findall(r"\b(docs/formats\.md), (`[\w-]+`)", text)
    return found


def test_every_cited_section_exists() -> None:
    citations = _citations()
    assert ("docs/design.md", "#transactions") in citations
    missing = []
    for doc, section in sorted(set(citations)):
        if not (ROOT / doc).exists():
            if doc != "docs/formats.md":  # formats.md comes from another branch (issue 21)
                missing.append(doc)
            continue
        text = (ROOT / doc).read_text()
        if section.startswith("#"):
            found = section[1:] in _anchors(text)
        else:  # a format's own section: a heading that starts with its name
            found = re.search(rf"^## {re.escape(section)}", text, flags=re.M) is not None
        if not found:
            missing.append(f"{doc} {section}")
    assert not missing, f"docstrings cite sections that do not exist: {missing}"


_PACKAGE_DIRS = "engine|stores|service|tui|planfile|cli|demo"


def _cited_modules(text: str) -> set[str]:
    """The repository paths of the Python files a doc cites: `memtui/…py`, a path inside a
    package (`stores/formats/pi.py`, read under memtui/), and `tests/`, `bench/`, `scripts/`
    files."""
    cited = set(re.findall(r"(?<![\w/.])((?:memtui|tests|bench|scripts)/[\w/]+\.py)\b", text))
    cited |= {
        f"memtui/{path}"
        for path in re.findall(rf"(?<![\w/.])((?:{_PACKAGE_DIRS})/[\w/]+\.py)\b", text)
    }
    return cited


def test_the_module_paths_read_as_repository_paths() -> None:
    text = "`memtui/traits.py`, `stores/formats/pi.py`, `tests/test_x.py`, `x/engine/y.py`, `a.py`"
    assert _cited_modules(text) == {
        "memtui/traits.py",
        "memtui/stores/formats/pi.py",
        "tests/test_x.py",
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_cited_exists(doc: Path) -> None:
    missing = sorted(path for path in _cited_modules(doc.read_text()) if not (ROOT / path).exists())
    assert not missing, f"{doc.relative_to(ROOT)} cites files that do not exist: {missing}"
