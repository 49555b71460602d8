"""The client for any OpenAI-compatible chat completions API (Ollama, vLLM, llama.cpp's server,
OpenAI), used only by the engine's LLM strategies.

- The API key is read from the environment variable the settings *name*; it goes into the
  Authorization header and nowhere else (not the cache, not the plan, not the ledger).
- Timeouts; retries with exponential backoff and jitter on timeouts, 429 (honouring
  Retry-After) and 5xx; a concurrency limit.
- Answers are JSON (JSON mode), parsed and checked by the caller's validator; a response cache
  keyed by the request means planning twice does not pay twice.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import httpx

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LlmSettings:
    url: str
    """Base URL of the API, e.g. `http://127.0.0.1:11434/v1` (the client adds /chat/completions)."""
    model: str
    api_key_env: str | None = None
    """The *name* of the environment variable holding the API key (never the key itself)."""
    timeout: float = 60.0
    max_retries: int = 3
    concurrency: int = 4
    backoff: float = 0.5
    """First retry delay in seconds; doubles each time, with jitter."""
    max_backoff: float = 30.0
    json_mode: bool = True
    temperature: float = 0.0
    merge_max_chars: int = 200

    @property
    def endpoint(self) -> str:
        base = self.url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if not base.endswith("/v1"):
            base += "/v1"
        return base + "/chat/completions"


class LlmError(Exception):
    """A call that did not give a usable answer; `kind` says why (timeout, connect, http,
    parse, shape, empty)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ResponseCache(Protocol):
    def get(self, key: str) -> str | None: ...

    def put(self, key: str, content: str) -> None: ...


class MemoryCache:
    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    def put(self, key: str, content: str) -> None:
        self.entries[key] = content


@dataclass(frozen=True, slots=True)
class Answer:
    value: Any
    request_hash: str
    cached: bool


def request_hash(endpoint: str, payload: dict[str, Any]) -> str:
    text = json.dumps(
        {"endpoint": endpoint, "payload": payload}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(text.encode()).hexdigest()


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Retry-After as seconds or as an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


class LlmClient:
    def __init__(
        self,
        settings: LlmSettings,
        cache: ResponseCache | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.cache = cache if cache is not None else MemoryCache()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._semaphore = asyncio.Semaphore(max(1, settings.concurrency))
        self.calls = 0  # requests actually sent (retries included)

    def session(self) -> httpx.AsyncClient:
        """The HTTP session the calls of one planning run share."""
        return httpx.AsyncClient()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        name = self.settings.api_key_env
        if name:
            key = os.environ.get(name)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature,
        }
        if self.settings.json_mode:
            payload["response_format"] = {"type": "json_object"}
        return payload

    async def chat_json(
        self,
        http: httpx.AsyncClient,
        messages: list[dict[str, str]],
        validate: Callable[[Any], T],
    ) -> Answer:
        """The model's JSON answer, checked by `validate` (which raises ValueError on a bad
        shape). Raises LlmError."""
        payload = self.payload(messages)
        key = request_hash(self.settings.endpoint, payload)
        cached = self.cache.get(key)
        if cached is not None:
            return Answer(_parse(cached, validate), key, True)
        async with self._semaphore:
            content = await self._post_with_retries(http, payload)
        value = _parse(content, validate)
        self.cache.put(key, content)  # only answers that passed validation are kept
        return Answer(value, key, False)

    async def _post_with_retries(self, http: httpx.AsyncClient, payload: dict[str, Any]) -> str:
        s = self.settings
        last: LlmError | None = None
        for attempt in range(s.max_retries + 1):
            wait: float | None = None
            try:
                self.calls += 1
                response = await http.post(
                    s.endpoint, json=payload, headers=self._headers(), timeout=s.timeout
                )
            except httpx.TimeoutException:
                last = LlmError("timeout", f"no answer within {s.timeout:g} s")
            except httpx.ConnectError as e:
                raise LlmError("connect", f"cannot reach {s.endpoint}: {e}") from None
            except httpx.HTTPError as e:
                raise LlmError("http", f"request failed: {e}") from None
            else:
                if response.status_code == 200:
                    return _content_of(response)
                text = response.text[:200].replace("\n", " ")
                last = LlmError("http", f"HTTP {response.status_code}: {text}")
                if response.status_code == 429:
                    wait = retry_after_seconds(response.headers.get("Retry-After"), time.time())
                elif response.status_code < 500:
                    raise last
            if attempt == s.max_retries:
                break
            if wait is None:
                wait = self._rng.uniform(0, min(s.max_backoff, s.backoff * 2**attempt))
            await self._sleep(min(wait, s.max_backoff))
        assert last is not None
        raise LlmError(last.kind, f"{last} (after {s.max_retries + 1} attempts)")


def _content_of(response: httpx.Response) -> str:
    try:
        body = response.json()
        content = body["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LlmError("parse", "the answer is not a chat completion") from None
    if not isinstance(content, str) or not content.strip():
        raise LlmError("empty", "the model answered with nothing")
    return content


def _parse(content: str, validate: Callable[[Any], T]) -> T:
    text = content.strip()
    if text.startswith("```"):  # a model that wraps JSON in a code fence despite JSON mode
        text = text.strip("`")
        text = text[text.find("{") :] if "{" in text else text
    try:
        value = json.loads(text)
    except ValueError:
        raise LlmError("parse", f"the answer is not JSON: {content[:80]!r}") from None
    try:
        return validate(value)
    except (ValueError, TypeError, KeyError) as e:
        raise LlmError("shape", f"the answer has the wrong shape: {e}") from None
