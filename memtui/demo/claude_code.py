"""The Claude Code demo: an auto memory folder as Claude Code leaves it after some weeks of
work on one project, with what memtui is for: an index line to a file the agent deleted, a
near-duplicate pair it wrote twice, feedback memories with **Why:** / **How to apply:** lines,
a file it never listed in MEMORY.md, and a team memory."""

from __future__ import annotations

_FILES: dict[str, tuple[str, str, str, str]] = {
    # file: (name, description, type, body)
    "feedback_real_database.md": (
        "Integration tests hit a real database",
        "Integration tests must use a real database, never mocks",
        "feedback",
        "Integration tests must hit a real database, not mocks.\n\n"
        "**Why:** last quarter a mocked test passed while the production migration failed.\n"
        "**How to apply:** in `tests/integration/`, use the `pg_container` fixture; mocks are "
        "fine in unit tests only.",
    ),
    "feedback_no_recap.md": (
        "No recap at the end of replies",
        "The user reads the diff; don't summarise it",
        "feedback",
        "Don't end a reply with a summary of what was just done; the user reads the diff.\n\n"
        '**Why:** the user said so twice ("I can read the diff").\n'
        "**How to apply:** stop after the result, or ask the one question that is open.",
    ),
    "feedback_no_summaries.md": (
        "Skip trailing summaries",
        "No summary paragraph at the end of responses",
        "feedback",
        "Don't end replies with a summary of what was just done — the user reads the diff.\n\n"
        '**Why:** the user asked for it ("I can read the diff").\n'
        "**How to apply:** stop after the result.",
    ),
    "user_role.md": (
        "User is a data scientist",
        "The user's role and background, to pitch explanations right",
        "user",
        "The user is a data scientist working on observability and logging. This is their "
        "first time in this Go codebase: explain Go idioms by analogy to Python.",
    ),
    "project_merge_freeze.md": (
        "Merge freeze from 2026-03-05",
        "Non-critical merges are frozen while mobile cuts a release branch",
        "project",
        "Merge freeze begins 2026-03-05 for the mobile release cut.\n\n"
        "**Why:** the mobile team is cutting a release branch and needs main stable.\n"
        "**How to apply:** flag any non-critical PR work scheduled after that date.",
    ),
    "reference_linear.md": (
        "Pipeline bugs tracker",
        "Where pipeline bugs are tracked",
        "reference",
        'Pipeline bugs are tracked in the Linear project "INGEST".',
    ),
    "project_grafana.md": (
        "Latency dashboard",
        "The dashboard on-call watches",
        "reference",
        "grafana.internal/d/api-latency is the dashboard on-call watches; check it after "
        "touching request handling.",
    ),
    "team/project_oncall.md": (
        "On-call rotation",
        "Who is on call for the ingest service",
        "project",
        'The ingest service\'s on-call rotation is the PagerDuty schedule "ingest-primary".',
    ),
}

_INDEX = (
    "- [Integration tests hit a real database](feedback_real_database.md) — no mocked DB in "
    "integration tests\n"
    "- [No recap at the end of replies](feedback_no_recap.md) — the user reads the diff\n"
    "- [Skip trailing summaries](feedback_no_summaries.md) — no summary paragraph at the end\n"
    "- [User is a data scientist](user_role.md) — new to Go; explain by analogy to Python\n"
    "- [Merge freeze from 2026-03-05](project_merge_freeze.md) — mobile release cut\n"
    "- [Pipeline bugs tracker](reference_linear.md) — Linear project INGEST\n"
    "- [Old deploy notes](deploy_notes.md) — how deploys worked before the CI move\n"
    "- [On-call rotation](team/project_oncall.md) — PagerDuty ingest-primary\n"
)


def demo_files() -> dict[str, bytes]:
    """The folder's files (relative names), each as Claude Code writes it."""
    files = {"MEMORY.md": _INDEX.encode("utf-8")}
    for name, (title, description, kind, body) in _FILES.items():
        text = f"---\nname: {title}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"
        files[name] = text.encode("utf-8")
    return files
