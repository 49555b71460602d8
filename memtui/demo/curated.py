"""Hand-written memories of the kind coding and companion agents save, in groups of
near-duplicate wordings (what an agent writes when it sees the same fact in several sessions).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Topic:
    category: str
    wordings: tuple[str, ...]
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()


TOPICS: tuple[Topic, ...] = (
    Topic(
        "convention",
        (
            "Use pnpm as the package manager",
            "This project uses pnpm as its package manager",
            "Package manager is pnpm, not npm or yarn",
        ),
        ("tooling",),
        ("package.json",),
    ),
    Topic(
        "preference",
        (
            "User prefers concise answers without preamble",
            "Keep replies short; the user dislikes long introductions",
            "User wants brief answers, no filler",
        ),
        ("style",),
    ),
    Topic(
        "decision",
        (
            "Auth uses JWT with 15-minute access tokens and refresh tokens in httpOnly cookies",
            "JWT auth: access token lives 15 minutes, refresh token stored in an httpOnly cookie",
        ),
        ("auth",),
        ("src/auth/",),
    ),
    Topic(
        "convention",
        (
            "Tests run with pytest -q; never use unittest in new code",
            "Write new tests for pytest (run as pytest -q), not unittest",
        ),
        ("testing",),
        ("tests/",),
    ),
    Topic(
        "lesson",
        (
            "The staging database is reset every Sunday at 03:00 UTC; do not keep fixtures there",
            "Staging DB gets wiped each Sunday 03:00 UTC, so fixtures there disappear",
            "Don't rely on data in staging: it is reset weekly on Sunday night",
        ),
        ("infra", "staging"),
    ),
    Topic(
        "fact",
        (
            "The billing service talks to Stripe through the payments-gateway, never directly",
            "Stripe calls go through payments-gateway; billing never calls Stripe directly",
        ),
        ("billing",),
        ("services/billing/",),
    ),
    Topic(
        "preference",
        (
            "User likes dark themes and the Fira Code font in screenshots",
            "Screenshots should use a dark theme with Fira Code",
        ),
        ("style",),
    ),
    Topic(
        "pattern",
        (
            "Migrations come from alembic revision --autogenerate, then get edited by hand",
            "Alembic migrations: autogenerate first, then review and edit the file by hand",
        ),
        ("db",),
        ("migrations/",),
    ),
    Topic(
        "lesson",
        (
            "CI fails when the lockfile is out of date; run pnpm install before pushing",
            "Out-of-date lockfile breaks CI: always pnpm install before a push",
        ),
        ("ci",),
    ),
    Topic(
        "fact",
        (
            "Production runs in eu-central-1; the read replica is in eu-west-1",
            "Prod is hosted in eu-central-1 with a read replica in eu-west-1",
        ),
        ("infra",),
    ),
    Topic(
        "convention",
        (
            "Commit messages follow Conventional Commits (feat:, fix:, chore:)",
            "Use Conventional Commits style for commit messages",
        ),
        ("git",),
    ),
    Topic(
        "preference",
        (
            "User reviews pull requests in the morning and wants them small, under 300 lines",
            "Keep PRs under 300 lines; the user reviews them first thing in the morning",
        ),
        ("workflow",),
    ),
    Topic(
        "decision",
        (
            "Feature flags live in LaunchDarkly; remove a flag within two sprints of full rollout",
            "Flags live in LaunchDarkly and must be cleaned up two sprints after 100% rollout",
        ),
        ("flags",),
    ),
    Topic(
        "lesson",
        (
            "The PDF export times out for reports over 200 pages; split them before rendering",
            "Reports longer than 200 pages make the PDF export time out, so render them in parts",
        ),
        ("export",),
        ("src/export/pdf.py",),
    ),
    Topic(
        "preference",
        (
            "PPT字体大小偏好：主标题约18-20px，正文紧凑，中心词约26px",
            "PPT字体偏好：主标题18-20px，中心词26px，分支标题约18px",
            "PPT字体大小偏好：主标题18-20px，正文要紧凑",
        ),
        ("ppt", "font"),
        ("slides/",),
    ),
    Topic("fact", ("飞书按钮应放置在模型选择器左侧", "飞书按钮放在模型选择器的左边"), ("ui",)),
    Topic("decision", ("使用 JWT 认证", "认证方案采用 JWT"), ("auth",), ("src/auth/",)),
    Topic(
        "preference",
        (
            "用户喜欢咖啡",
            "用户非常喜欢咖啡",
            "用户每天早上喝一杯美式",
        ),
        ("drink",),
    ),
    Topic("fact", ("用户对花生过敏", "用户花生过敏，推荐菜谱时要避开花生"), ("safety",)),
    Topic(
        "convention",
        (
            "代码注释统一使用英文，提交说明可以用中文",
            "注释写英文，commit message 可以写中文",
        ),
        ("style",),
    ),
    Topic(
        "lesson",
        (
            "部署脚本在 /var/run 上权限不足会失败，需要用 sudo 运行",
            "deploy 脚本写 /var/run 时报权限错误，要用 sudo",
        ),
        ("deploy",),
    ),
    Topic(
        "preference",
        (
            "用户周末不希望收到工作相关的提醒",
            "周末不要给用户发工作提醒",
        ),
        ("notifications",),
    ),
    Topic(
        "fact",
        (
            "用户的女儿在上小学三年级",
            "用户有一个读三年级的女儿",
        ),
        ("family",),
    ),
    Topic(
        "episodic",
        (
            "用户上周去杭州出差，参观了西湖",
            "上周用户在杭州出差，顺便去了西湖",
        ),
        ("travel",),
    ),
    Topic(
        "preference",
        (
            "User is vegetarian and avoids fish as well",
            "User doesn't eat meat or fish",
        ),
        ("food",),
    ),
    Topic(
        "fact",
        (
            "User's timezone is Europe/Berlin",
            "User lives in Berlin (CET/CEST)",
        ),
        ("profile",),
    ),
    Topic(
        "lesson",
        (
            "Rate limit on the search API is 60 requests per minute per key; back off on 429",
            "Search API allows 60 req/min per key and answers 429 beyond that",
        ),
        ("api",),
    ),
    Topic(
        "tool_failure",
        (
            "Docs site build ran out of memory; set NODE_OPTIONS=--max-old-space-size=4096",
            "Docs build runs out of memory; needs NODE_OPTIONS=--max-old-space-size=4096",
        ),
        ("build",),
    ),
)


@dataclass(frozen=True, slots=True)
class Chain:
    """A fact that changed over time: each wording supersedes the one before."""

    category: str
    wordings: tuple[str, ...]
    reasons: tuple[str, ...]
    tags: tuple[str, ...] = ()


CHAINS: tuple[Chain, ...] = (
    Chain(
        "identity",
        (
            "用户在一家初创公司工作",
            "用户跳槽到了字节跳动",
            "用户在字节跳动负责基础架构团队",
        ),
        (
            "user said they changed jobs",
            "user was promoted to lead the infrastructure team",
        ),
        ("work",),
    ),
    Chain(
        "fact",
        (
            "The billing service runs on Python 3.9",
            "The billing service was upgraded to Python 3.11",
            "Billing now runs on Python 3.12 after the October upgrade",
        ),
        (
            "upgrade announced in the sprint review",
            "second upgrade finished in October",
        ),
        ("billing", "python"),
    ),
    Chain(
        "preference",
        (
            "User prefers tabs for indentation",
            "User switched to 4-space indentation to match the team style",
        ),
        ("team adopted a shared formatter",),
        ("style",),
    ),
)
