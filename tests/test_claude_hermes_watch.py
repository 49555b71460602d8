"""`memtui watch` on folder stores: a test agent adds, rewrites and deletes memory files in
bursts — Claude Code's way (plain writes of the memory file and of MEMORY.md, no lock) and
Hermes' way (each file replaced whole under its flock) — while `memtui watch` runs as its own
process; after each burst the agent waits until watch has reported every entry it touched,
never for a fixed time. Then every memory the agent removed or rewrote is in the record with
its text as it was, and `restore --outside` brings each back byte for byte."""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

from memtui.service import Service
from tests.conftest import FIXTURES, CliResult
from tests.test_watch import Watcher

Cli = Callable[..., CliResult]
DELIMITER = "\n§\n"


def _recorded(store: Path) -> dict[str, set[str]]:
    """id → every text the record holds of it as it was before an outside change."""
    svc = Service()
    out: dict[str, set[str]] = {}
    for event in svc.outside.events(svc.stores.open(str(store)), archived=True):
        for c in event.changes:
            if c.before_raw is not None:
                text = c.before_raw.get("text", c.before_raw.get("content"))
                out.setdefault(c.id, set()).add(str(text))
    return out


# -- Claude Code -------------------------------------------------------------------------------


class ClaudeAgent:
    """Claude Code's way: a memory file written with a plain write, then MEMORY.md."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files = {
            p.name: p.read_text(encoding="utf-8")
            for p in folder.glob("*.md")
            if p.name != "MEMORY.md"
        }
        self.gone: list[tuple[str, str]] = []  # (file, its text before the change)
        self.rng = random.Random(7)
        self.made = 0

    def _index(self) -> None:
        lines = "".join(f"- [{n[:-3]}]({n}) — {n[:-3]} hook\n" for n in sorted(self.files))
        with open(self.folder / "MEMORY.md", "w", encoding="utf-8") as f:
            f.write(lines)

    def _write(self, name: str, text: str) -> None:
        with open(self.folder / name, "w", encoding="utf-8") as f:
            f.write(text)

    def burst(self) -> set[str]:
        touched: set[str] = set()
        for _ in range(self.rng.randint(2, 3)):
            self.made += 1
            name = f"feedback_agent_{self.made}.md"
            text = (
                f"---\nname: Agent rule {self.made}\ndescription: rule {self.made}\n"
                f"type: feedback\n---\n\nRule {self.made}.\n\n**Why:** asked.\n"
            )
            self.files[name] = text
            self._write(name, text)
            touched.add(name)
            old = sorted(n for n in self.files if n not in touched)
            rewrite, delete = self.rng.sample(old, 2)
            self.gone.append((rewrite, self.files[rewrite]))
            self.files[rewrite] += f"\nRewritten in burst {self.made}.\n"
            self._write(rewrite, self.files[rewrite])
            self.gone.append((delete, self.files.pop(delete)))
            os.unlink(self.folder / delete)
            self._index()
            touched |= {rewrite, delete}
        return touched


def test_watch_records_every_change_claude_code_makes_to_its_folder(
    tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURES / "claude_code" / "basic", folder)
    shutil.rmtree(folder / "team")
    agent = ClaudeAgent(folder)
    agent._index()  # every file listed, as the agent keeps it
    for n in range(6):  # enough memories for a few bursts
        agent._write(
            f"project_seed_{n}.md", f"---\nname: Seed {n}\ntype: project\n---\n\nSeed {n}.\n"
        )
        agent.files[f"project_seed_{n}.md"] = (folder / f"project_seed_{n}.md").read_text()
    agent._index()
    watcher = Watcher(str(folder))
    for _ in range(4):
        watcher.wait_for(agent.burst())
    assert watcher.stop() == 0

    recorded = _recorded(folder)
    for name, before in agent.gone:
        assert before in recorded.get(name, set()), name
    removed = sorted({n for n, _ in agent.gone if n not in agent.files})
    # each as `memtui outside` shows it: before the agent's first change since the last look;
    # a memory the agent itself added (and then changed and removed): as it was last
    first_before: dict[str, str] = {}
    for name, before in agent.gone:
        first_before.setdefault(name, before)
    first_before.update({n: b for n, b in agent.gone if n.startswith("feedback_agent_")})
    result = cli("restore", folder, *[a for n in removed for a in ("--outside", n)])
    assert result.code == 0, result.err
    for name in removed:
        assert (folder / name).read_text(encoding="utf-8") == first_before[name]
        assert f"]({name})" in (folder / "MEMORY.md").read_text(encoding="utf-8")
    undo = cli("undo", folder)
    assert undo.code == 0, undo.err
    assert not any((folder / n).exists() for n in removed)


# -- Hermes ------------------------------------------------------------------------------------


def _hermes_id(text: str) -> str:
    return "h" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


class HermesAgent:
    """Hermes' way: under an exclusive flock on `<file>.lock`, the file's entries joined by
    the delimiter written to a temp file and renamed over it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.entries = {
            name: [e.strip() for e in (folder / name).read_text().split(DELIMITER) if e.strip()]
            for name in ("MEMORY.md", "USER.md")
        }
        self.gone: list[tuple[str, str, str]] = []  # (file, id, text)
        self.rng = random.Random(3)
        self.made = 0

    def _write(self, name: str) -> None:
        with open(self.folder / (name + ".lock"), "a+", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            tmp = self.folder / f".{name}.tmp"
            tmp.write_text(DELIMITER.join(self.entries[name]), encoding="utf-8")
            os.replace(tmp, self.folder / name)
            fcntl.flock(lock, fcntl.LOCK_UN)

    def burst(self) -> set[str]:
        touched: set[str] = set()
        for _ in range(self.rng.randint(2, 3)):
            self.made += 1
            name = self.rng.choice(("MEMORY.md", "USER.md"))
            entries = self.entries[name]
            new = f"Agent note {self.made}: the nightly build runs at 02:{self.made:02d}."
            old = [e for e in entries if _hermes_id(e) not in touched]
            rewrite, delete = self.rng.sample(old, 2)
            for text in (rewrite, delete):
                self.gone.append((name, _hermes_id(text), text))
            rewritten = f"{rewrite} (rewritten {self.made})"
            entries[entries.index(rewrite)] = rewritten
            entries.remove(delete)
            entries.append(new)
            self._write(name)
            touched |= {_hermes_id(t) for t in (rewrite, delete, rewritten, new)}
        return touched


def test_watch_records_every_change_hermes_makes_to_its_folder(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    for name in ("MEMORY.md", "USER.md"):
        shutil.copyfile(FIXTURES / "hermes" / "basic" / name, folder / name)
    agent = HermesAgent(folder)
    for name in ("MEMORY.md", "USER.md"):  # enough entries for a few bursts
        agent.entries[name] += [f"Seed {name[:-3].lower()} fact {n}." for n in range(8)]
        agent._write(name)
    watcher = Watcher(str(folder))
    for _ in range(4):
        watcher.wait_for(agent.burst())
    assert watcher.stop() == 0

    recorded = _recorded(folder)
    for _name, ident, text in agent.gone:
        assert text in recorded.get(ident, set()), ident
    gone = {ident: (name, text) for name, ident, text in agent.gone}
    result = cli("restore", folder, *[a for i in gone for a in ("--outside", i)])
    assert result.code == 0, result.err
    for name, text in gone.values():
        raw = (folder / name).read_text(encoding="utf-8")
        assert text in raw.split(DELIMITER)  # whole, as its own entry
        assert raw == DELIMITER.join(e.strip() for e in raw.split(DELIMITER))  # Hermes' layout
