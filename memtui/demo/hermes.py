"""The Hermes demo: a `memories` folder as Hermes Agent leaves it after a few weeks of work
(MEMORY.md near its cap, USER.md), with what memtui is for: a near-duplicate pair the agent's
exact-match dedupe missed, a multi-line checklist, entries in Chinese, a `§` inside a line."""

from __future__ import annotations

DELIMITER = "\n§\n"

MEMORY_ENTRIES = (
    "User's project lives in ~/code/atlas; run tests with `make test` (takes ~40 s).",
    "Deploy checklist:\n"
    "- bump the version in pyproject.toml\n"
    "- run `make test` and `make lint`\n"
    "- tag the release (vX.Y.Z) and push tags to origin\n"
    "- watch the CI deploy job; roll back with `make rollback` if it fails",
    "项目代码使用中文注释，提交信息用英文。",
    "Python 3.11 is the system interpreter on the build host; avoid 3.12-only syntax.",
    "The atlas project is in ~/code/atlas — its test suite runs with `make test`.",
    "Contract clause § 4.2 caps liability; quote the § sign exactly as written.",
    "The CI runner has no network access after the install step: vendor test data.",
    "数据库迁移脚本放在 migrations/ 目录下，按日期命名，不要手动修改已发布的迁移。",
    "Staging database is reset every Monday 03:00 UTC; don't keep test fixtures there.",
    "User wants summaries of long logs, not the raw output; keep replies under 15 lines.",
)

USER_ENTRIES = (
    "Name: Lin Wei. Backend engineer, works in UTC+8; prefers replies in English.",
    "Prefers short, direct answers – no preamble, code first, explanation after.",
    "喜欢用中文讨论设计问题，但代码和提交信息要用英文。",
    "Uses Neovim and tmux; asks for shell one-liners rather than GUI steps.",
)


def demo_files() -> dict[str, bytes]:
    """MEMORY.md and USER.md, each exactly as Hermes writes them."""
    return {
        "MEMORY.md": DELIMITER.join(MEMORY_ENTRIES).encode("utf-8"),
        "USER.md": DELIMITER.join(USER_ENTRIES).encode("utf-8"),
    }
