"""The anthropic, openai and google providers, through the real SDKs, against loopback wire
servers.

Nothing here reaches a real API: each test starts a :class:`tests.wire_servers.WireServer` on
127.0.0.1 and points the SDK at it with the same environment variables a deployment uses.
"""

from __future__ import annotations

import importlib.util
import json
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from importlib import metadata
from typing import Any

import gatebot_anthropic
import gatebot_google
import gatebot_openai
import pytest
from gatebot_anthropic import AnthropicProvider
from gatebot_google import GoogleProvider
from gatebot_openai import OpenAIProvider
from gatebot_providers_common import CallPolicy, alternating, policy

from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError, ProviderError
from bot.extend.provider import Prompt, ToolCall, assistant_turn, tool_result
from bot.extend.recorder import MemoryRecorder
from bot.plugins import load_plugins
from tests.wire_servers import SIGNATURE, Api, Seen, WireServer, fail, garbage, ok, slow, use

APIS: list[Api] = ["anthropic", "openai", "google"]
MODELS = {"anthropic": "claude-test", "openai": "gpt-test", "google": "gemini-test"}
KEYS = {
    "anthropic": "sk-ant-test-" + "k" * 24,
    "openai": "sk-test-" + "o" * 24,
    "google": "AIza-test-" + "g" * 24,
}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "google": "GOOGLE_API_KEY"}
URL_ENV = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "google": "GOOGLE_GEMINI_BASE_URL",
}
OUR_URL_ENV = {
    "anthropic": "GATEBOT_ANTHROPIC_BASE_URL",
    "openai": "GATEBOT_OPENAI_BASE_URL",
    "google": "GATEBOT_GOOGLE_BASE_URL",
}
PROVIDERS: dict[str, type[AnthropicProvider] | type[OpenAIProvider] | type[GoogleProvider]] = {
    "anthropic": AnthropicProvider,
    "openai": OpenAIProvider,
    "google": GoogleProvider,
}
PLUGINS = {"anthropic": gatebot_anthropic, "openai": gatebot_openai, "google": gatebot_google}
SDK_MODULES = {"anthropic": "anthropic", "openai": "openai", "google": "google.genai"}
# Everything the SDKs or the providers read from the environment: each test starts without it.
ENV = [
    *KEY_ENV.values(),
    *URL_ENV.values(),
    *OUR_URL_ENV.values(),
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_CUSTOM_HEADERS",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    # The Google SDK's: another key, Vertex AI (project, location, credentials file), a version.
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
    "GATEBOT_MODEL_TIMEOUT",
]
FAST = CallPolicy(timeout_s=10.0, backoff_s=0.01)  # retries without waiting out a real backoff

PROMPT = Prompt(
    purpose="reply",
    system="You write one reply. Facts:\n[faq-docker] Docker builds run natively.",
    messages=[
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Does Pipelines support Docker builds?"},
    ],
)
DOCKER_QUESTION = "Does Pipelines support Docker builds?"
DOCKER_DRAFT = "Yes, Acme Pipelines runs Docker builds natively and caches layers [faq-docker]."


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    # The SDK keeps its own config directory; an empty one means no profile can be found there.
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic-config"))
    # Providers built by an App's factory read the default policy: make its backoff short.
    monkeypatch.setattr(policy, "DEFAULT", CallPolicy(backoff_s=0.01))
    # Entry points would register these same modules under their own names; the tests register
    # them directly, so they pass whether or not `pip install -e .` has seen the entry points.
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline")


@pytest.fixture(params=APIS)
async def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A wire server for one API, with the key and base URL set the way a deployment sets them."""
    api = request.param
    async with WireServer(api) as wire:
        monkeypatch.setenv(KEY_ENV[api], KEYS[api])
        monkeypatch.setenv(URL_ENV[api], wire.base_url)
        yield wire


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Any]]:
    """Build providers for a server's API; every one built is closed after the test."""
    built: list[AnthropicProvider | OpenAIProvider | GoogleProvider] = []

    def build(api: str, policy: CallPolicy = FAST) -> Any:
        provider = PROVIDERS[api](MODELS[api], policy=policy)
        built.append(provider)
        return provider

    yield build
    for provider in built:
        await provider.aclose()


def credential(seen: Seen) -> str:
    """The key a request carried, from whichever header its SDK uses: the Anthropic SDK 2.x sends
    ``Authorization: Bearer`` (older ones ``x-api-key``); OpenAI's sends ``Authorization``;
    Google's ``x-goog-api-key``."""
    bearer = seen.headers.get("authorization", "").removeprefix("Bearer ")
    return seen.headers.get("x-api-key") or seen.headers.get("x-goog-api-key") or bearer


def chat_of(seen: Seen) -> list[dict[str, Any]]:
    """The transcript a request carried, as ``{"role", "content"}`` lines in our roles: Gemini
    sends ``contents`` of ``parts``, its assistant named ``model``."""
    if "contents" not in seen.body:
        return [m for m in seen.body["messages"] if m["role"] != "system"]
    roles = {"model": "assistant", "user": "user"}
    return [
        {"role": roles[c["role"]], "content": "".join(p.get("text", "") for p in c["parts"])}
        for c in seen.body["contents"]
    ]


def system_of(seen: Seen) -> str | None:
    """The system prompt a request carried, wherever its API puts it; None when left out."""
    body = seen.body
    if "systemInstruction" in body:
        return "".join(p["text"] for p in body["systemInstruction"]["parts"])
    if body.get("messages") and body["messages"][0]["role"] == "system":
        return str(body["messages"][0]["content"])
    return body.get("system")


def base_url_of(provider: Any) -> str:
    """Where a provider's SDK client sends its calls."""
    client = provider._client()
    url = (
        client.base_url
        if hasattr(client, "base_url")
        else client._api_client._http_options.base_url
    )
    return str(url).rstrip("/")


class Waits:
    """The policy's sleep, injected: records each wait between attempts and returns at once, so
    a test checks how long the loop would wait instead of timing it."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def free_port() -> int:
    """A loopback port with nothing listening on it (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --- one call ---------------------------------------------------------------------------------


async def test_success_returns_text_and_tokens_in_each_api_shape(
    server: WireServer, make: Callable[..., Any]
) -> None:
    server.script(ok(DOCKER_DRAFT, tokens_in=321, tokens_out=17))
    response = await make(server.api).execute(PROMPT)
    assert (response.text, response.tokens_in, response.tokens_out) == (DOCKER_DRAFT, 321, 17)

    [seen] = server.requests
    chat = [{"role": m["role"], "content": m["content"]} for m in PROMPT.messages]
    if server.api == "anthropic":
        assert seen.path == "/v1/messages"
        assert seen.body["model"] == "claude-test" and seen.body["max_tokens"] > 0
        assert seen.body["system"] == PROMPT.system  # a top-level field, not a message
        assert seen.body["messages"] == chat
        assert seen.headers.get("anthropic-version")
    elif server.api == "openai":
        assert seen.path == "/v1/chat/completions"
        assert seen.body["model"] == "gpt-test"
        assert seen.body["messages"] == [{"role": "system", "content": PROMPT.system}, *chat]
    else:
        assert seen.path.endswith("/models/gemini-test:generateContent")  # the model in the path
        assert system_of(seen) == PROMPT.system  # systemInstruction, not a turn
        roles = {"user": "user", "assistant": "model"}
        assert seen.body["contents"] == [
            {"role": roles[m["role"]], "parts": [{"text": m["content"]}]} for m in chat
        ]
    assert credential(seen) == KEYS[server.api]


async def test_an_uneven_transcript_is_sent_alternating(
    server: WireServer, make: Callable[..., Any]
) -> None:
    prompt = Prompt(
        purpose="reply",
        system="",
        messages=[
            {"role": "assistant", "content": "(cut off by the window)"},
            {"role": "user", "content": "first"},
            {"role": "user", "content": "second"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "third"},
        ],
    )
    await make(server.api).execute(prompt)
    [seen] = server.requests
    assert system_of(seen) is None  # an empty system prompt is left out, not sent empty
    assert chat_of(seen) == [{"role": "user", "content": "first\n\nsecond\n\nthird"}]


async def test_429_is_retried_after_retry_after_then_succeeds(
    server: WireServer, make: Callable[..., Any]
) -> None:
    server.script(fail(429, retry_after="0"), ok("Yes [faq-docker].", 5, 3))
    # A backoff of 3 s would show: the server's Retry-After of 0 is what the wait follows.
    waits = Waits()
    slow_backoff = CallPolicy(timeout_s=10.0, backoff_s=3.0, sleep=waits)
    response = await make(server.api, slow_backoff).execute(PROMPT)
    assert waits.seconds == [0.0]
    assert (response.text, response.tokens_in, response.tokens_out) == ("Yes [faq-docker].", 5, 3)
    assert len(server.requests) == 2


async def test_a_retry_after_beyond_the_cap_gives_up_at_once(
    server: WireServer, make: Callable[..., Any]
) -> None:
    server.script(fail(429, retry_after="120"))
    waits = Waits()
    with pytest.raises(ProviderError, match=r"HTTP 429 .*asked to wait 120 s"):
        await make(server.api, replace(FAST, sleep=waits)).execute(PROMPT)
    assert waits.seconds == [] and len(server.requests) == 1


@pytest.mark.parametrize("status", [500, 503])
async def test_persistent_5xx_ends_after_the_bounded_attempts(
    server: WireServer, make: Callable[..., Any], status: int
) -> None:
    server.script(then=fail(status))
    with pytest.raises(ProviderError) as raised:
        await make(server.api).execute(PROMPT)
    assert len(server.requests) == FAST.retries + 1 == 3
    message = str(raised.value)
    assert message.startswith(f"{server.api}: HTTP {status} (")
    assert message.endswith("after 3 attempts")


async def test_a_client_error_is_not_retried(server: WireServer, make: Callable[..., Any]) -> None:
    server.script(fail(400, message="messages: roles must alternate"))
    with pytest.raises(ProviderError, match=r"HTTP 400 .*roles must alternate"):
        await make(server.api).execute(PROMPT)
    assert len(server.requests) == 1


async def test_the_servers_should_retry_hint_wins(
    server: WireServer, make: Callable[..., Any]
) -> None:
    server.script(then=fail(500, headers={"x-should-retry": "false"}))
    with pytest.raises(ProviderError, match="HTTP 500"):
        await make(server.api).execute(PROMPT)
    assert len(server.requests) == 1


async def test_a_timeout_ends_quickly_and_is_not_retried(
    server: WireServer, make: Callable[..., Any]
) -> None:
    server.script(slow(10.0))
    waits = Waits()
    policy = CallPolicy(timeout_s=0.3, backoff_s=0.01, sleep=waits)
    # The message is raised only when the deadline fired, before the server's 10 s were up.
    with pytest.raises(ProviderError, match=r"no answer within 0\.3 s \(attempt 1 of 3\)"):
        await make(server.api, policy).execute(PROMPT)
    assert waits.seconds == []
    # At most the one attempt: on a loaded machine the 0.3 s deadline can fire before the
    # server has read the request (seen once in a full run beside another job).
    assert len(server.requests) <= 1


async def test_gatebot_model_timeout_sets_the_deadline(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_MODEL_TIMEOUT", "0.3")
    server.script(slow(10.0))
    provider = PROVIDERS[server.api](MODELS[server.api])  # as the App's factory builds it
    try:
        assert provider.policy.timeout_s == 0.3
        with pytest.raises(ProviderError, match=r"no answer within 0\.3 s"):
            await provider.execute(PROMPT)
    finally:
        await provider.aclose()


@pytest.mark.parametrize("raw", ["soon", "0", "-1", "nan"])
def test_a_bad_gatebot_model_timeout_stops_start(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("GATEBOT_MODEL_TIMEOUT", raw)
    with pytest.raises(ConfigError, match="GATEBOT_MODEL_TIMEOUT"):
        AnthropicProvider("claude-test")


@pytest.mark.parametrize("api", APIS)
async def test_no_server_is_a_connection_error_after_the_bounded_attempts(
    api: Api, make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV[api], KEYS[api])
    root = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv(URL_ENV[api], root + "/v1" if api == "openai" else root)
    waits = Waits()
    connect = rf"{api}: could not connect to 127\.0\.0\.1:\d+ .* after 3 attempts"
    with pytest.raises(ProviderError, match=connect):
        await make(api, replace(FAST, sleep=waits)).execute(PROMPT)
    # Two jittered backoffs (half to all of 0.01 s, then of 0.02 s) between the three attempts.
    assert len(waits.seconds) == 2
    assert 0.005 <= waits.seconds[0] <= 0.01 and 0.01 <= waits.seconds[1] <= 0.02


@pytest.mark.parametrize("api", APIS)
async def test_our_base_url_variable_wins_over_the_sdks(
    api: Api, make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with WireServer(api) as wire:
        monkeypatch.setenv(KEY_ENV[api], KEYS[api])
        monkeypatch.setenv(URL_ENV[api], f"http://127.0.0.1:{free_port()}")  # nothing there
        monkeypatch.setenv(OUR_URL_ENV[api], wire.base_url)
        assert (await make(api).execute(PROMPT)).text == "Hello."
        assert len(wire.requests) == 1


# --- credentials ------------------------------------------------------------------------------


async def test_the_key_never_appears_in_an_error(
    server: WireServer, make: Callable[..., Any]
) -> None:
    key = KEYS[server.api]
    # Some gateways quote the key they refused; the message must still not carry it.
    server.script(fail(401, message=f"Incorrect API key provided: {key}"))
    with pytest.raises(ProviderError) as raised:
        await make(server.api).execute(PROMPT)
    assert credential(server.requests[0]) == key  # it was sent ...
    assert key not in str(raised.value)  # ... and is not repeated
    assert "HTTP 401" in str(raised.value) and "[redacted]" in str(raised.value)
    assert len(server.requests) == 1


async def test_a_missing_anthropic_key_fails_at_call_time_not_at_start(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with WireServer("anthropic") as wire:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.base_url)
        settings.model = "anthropic:claude-test"
        app = App(settings, extra_plugins=[gatebot_anthropic])  # no key: still builds
        try:
            with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY is not set"):
                await app.provider.execute(PROMPT)
        finally:
            await app.stop()
        assert wire.requests == []


async def test_openai_without_a_key_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = OpenAIProvider("gpt-test")
    with pytest.raises(ProviderError, match="OPENAI_API_KEY is not set"):
        await provider.execute(PROMPT)
    # A local server (vLLM, llama.cpp, Ollama) named explicitly needs no key: a placeholder goes.
    async with WireServer("openai") as wire:
        monkeypatch.setenv("GATEBOT_OPENAI_BASE_URL", wire.base_url)
        local = OpenAIProvider("llama-3-8b")
        try:
            assert (await local.execute(PROMPT)).text == "Hello."
        finally:
            await local.aclose()
        assert credential(wire.requests[0]) == "not-needed"


@pytest.mark.parametrize("api", APIS)
async def test_an_empty_base_url_variable_means_the_public_api(
    api: Api, make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV[api], KEYS[api])
    monkeypatch.setenv(URL_ENV[api], "")  # as compose writes ${ANTHROPIC_BASE_URL:-}
    monkeypatch.setenv(OUR_URL_ENV[api], " ")
    expected = {
        "anthropic": "https://api.anthropic.com",
        "openai": "https://api.openai.com/v1",
        "google": "https://generativelanguage.googleapis.com",
    }
    assert base_url_of(make(api)) == expected[api]


@pytest.mark.parametrize("api", APIS)
def test_a_provider_needs_a_model_name(api: str) -> None:
    with pytest.raises(ConfigError, match=f"{api}:MODEL"):
        PROVIDERS[api]("")


@pytest.mark.parametrize("api", APIS)
def test_a_missing_sdk_is_named_at_start(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    sdk = SDK_MODULES[api]
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == sdk else real(n))
    with pytest.raises(ConfigError, match=r"pip install 'gatebot\[providers\]'"):
        PROVIDERS[api](MODELS[api])


# --- plugins ----------------------------------------------------------------------------------


def test_the_plugins_register_every_provider() -> None:
    manager = load_plugins(extra=list(PLUGINS.values()))
    rows = {row["name"]: row["hooks"] for row in manager.describe()}
    for api in APIS:
        assert rows[f"gatebot_{api}"] == ["register_model_providers"]
    providers: dict[str, Any] = {}
    manager.hook.register_model_providers(register=providers.__setitem__)
    for api in APIS:
        assert providers[api] is PROVIDERS[api]
    assert manager.errors == []


def test_the_entry_points_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    # pyproject declares them all and `make test` installs the project, so a missing one is a
    # broken install or a dropped declaration: a failure, never a skip.
    installed = {ep.name for ep in metadata.entry_points(group="gatebot")}
    missing = set(APIS) - installed
    assert not missing, f"entry points {sorted(missing)} not installed: pip install -e ."
    monkeypatch.delenv("GATEBOT_PLUGINS")
    rows = {row["name"]: row for row in load_plugins().describe()}
    for name in APIS:
        assert "register_model_providers" in rows[name]["hooks"]
        assert (rows[name]["distribution"] or "").startswith("gatebot==")


def test_the_call_policy_helpers() -> None:
    assert alternating([{"role": "system", "content": "x"}]) == [{"role": "user", "content": "x"}]
    assert policy._retry_after({"retry-after-ms": "250"}) == 0.25
    assert policy._retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert policy._retry_after({"retry-after": "soon"}) is None
    assert policy.redact("key sk-123456 here", ["sk-123456", ""]) == "key [redacted] here"


# --- end to end: a turn through the App -------------------------------------------------------


def app_for(api: str, settings: Settings) -> tuple[App, MemoryRecorder]:
    memory = MemoryRecorder()
    settings.model = f"{api}:{MODELS[api]}"
    return App(settings, extra_plugins=[PLUGINS[api]], recorders=[memory]), memory


@pytest.fixture
def running() -> Iterator[list[App]]:
    """Apps a test started; checked after it that stop() closed their SDK clients."""
    apps: list[App] = []
    yield apps
    for app in apps:
        assert app.provider._sdk is None  # type: ignore[attr-defined]


async def test_a_turn_is_worded_by_the_model_and_a_declined_one_calls_none(
    server: WireServer, settings: Settings, running: list[App]
) -> None:
    api = server.api
    server.script(ok(DOCKER_DRAFT, tokens_in=321, tokens_out=17))
    app, memory = app_for(api, settings)
    running.append(app)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        result = await app.agent.handle(conv, DOCKER_QUESTION, "m1")
        record = result.record
        assert record["reply"]["gate"] == {"passed": True, "reasons": [], "rules": []}
        assert record["reply"]["attempts"] == 1
        assert result.replies[0]["text"] == DOCKER_DRAFT.replace(" [faq-docker]", "")
        assert result.replies[0]["citations"][0]["key"] == "faq-docker"
        [call] = record["model_calls"]
        assert call["ms"] > 0
        assert call == {
            "provider": api,
            "model": MODELS[api],
            "purpose": "reply",
            "ms": call["ms"],
            "tokens_in": 321,
            "tokens_out": 17,
            # What `gatebot replay` reuses: the prompt's digest and the model's answer.
            "prompt_sha256": call["prompt_sha256"],
            "response": {"text": DOCKER_DRAFT, "tool_calls": []},
        }
        assert len(call["prompt_sha256"]) == 64
        [seen] = server.requests
        assert "[faq-docker]" in (system_of(seen) or "")  # the retrieved fact went to the model
        assert chat_of(seen)[-1] == {"role": "user", "content": DOCKER_QUESTION}
        assert KEYS[api] not in json.dumps(record)

        fresh = app.store.get_conversation(conv.id)
        assert fresh is not None
        declined = await app.agent.handle(fresh, "what's the weather in Paris", "m2")
        assert declined.record["move"]["name"] == "decline"
        assert declined.record["model_calls"] == []
        assert len(server.requests) == 1  # the declined turn sent nothing
        assert len(memory.turns) == 2
    finally:
        await app.stop()


async def test_a_provider_that_keeps_failing_gets_the_honest_answer_and_a_queue_entry(
    server: WireServer, settings: Settings, running: list[App]
) -> None:
    api = server.api
    server.script(then=fail(503))
    app, _ = app_for(api, settings)
    running.append(app)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        result = await app.agent.handle(conv, DOCKER_QUESTION, "m1")
        assert "don't have a confirmed answer" in result.replies[0]["text"]
        assert len(server.requests) == 3
        record = result.record
        assert record["reply"]["gate"]["passed"] is False
        assert f"{api}: HTTP 503" in record["reply"]["gate"]["reasons"][0]
        [call] = record["model_calls"]
        assert (call["provider"], call["tokens_in"], call["tokens_out"]) == (api, 0, 0)
        [queued] = app.store.escalations("open")
        assert queued.conversation_id == conv.id and "HTTP 503" in queued.reason
        assert KEYS[api] not in json.dumps(record) and KEYS[api] not in queued.reason
    finally:
        await app.stop()


# --- tool calling ----------------------------------------------------------------------------

SEARCH_TOOL = {
    "name": "knowledge.search",
    "description": "Search the help center.",
    "schema": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}
EARLIER = ToolCall("call_prev", "knowledge.search", {"query": "docker"})
EXCHANGE_PROMPT = Prompt(
    purpose="reply",
    system="You write one reply.",
    messages=[
        {"role": "user", "content": DOCKER_QUESTION},
        assistant_turn("Let me look.", [EARLIER]),
        tool_result(EARLIER, '{"results": []}'),
    ],
    tools=[SEARCH_TOOL],
)


async def test_tools_and_the_exchange_go_out_in_each_api_shape_and_calls_come_back(
    server: WireServer, make: Callable[..., Any]
) -> None:
    api = server.api
    server.script(use(("knowledge_search", {"query": "docker cache"}), text="Searching."))
    response = await make(api).execute(EXCHANGE_PROMPT)
    [call] = response.tool_calls
    assert (call.name, call.arguments, response.text) == (
        "knowledge.search",  # the wire name mapped back to ours
        {"query": "docker cache"},
        "Searching.",
    )
    assert call.id
    [seen] = server.requests
    body = seen.body
    if api == "anthropic":
        assert body["tools"] == [
            {
                "name": "knowledge_search",
                "description": "Search the help center.",
                "input_schema": SEARCH_TOOL["schema"],
            }
        ]
        assert body["tool_choice"] == {"type": "auto"}
        assert body["messages"] == [
            {"role": "user", "content": DOCKER_QUESTION},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {
                        "type": "tool_use",
                        "id": "call_prev",
                        "name": "knowledge_search",
                        "input": {"query": "docker"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_prev",
                        "content": '{"results": []}',
                        "is_error": False,
                    }
                ],
            },
        ]
    elif api == "google":
        assert body["tools"] == [
            {
                "functionDeclarations": [
                    {
                        "name": "knowledge_search",
                        "description": "Search the help center.",
                        # The JSON schema as written (the SDK keeps this field's name as given).
                        "parameters_json_schema": SEARCH_TOOL["schema"],
                    }
                ]
            }
        ]
        assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
        assert body["contents"] == [
            {"role": "user", "parts": [{"text": DOCKER_QUESTION}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Let me look."},
                    {
                        "functionCall": {
                            "id": "call_prev",
                            "name": "knowledge_search",
                            "args": {"query": "docker"},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_prev",
                            "name": "knowledge_search",
                            "response": {"output": '{"results": []}'},
                        }
                    }
                ],
            },
        ]
    else:
        assert body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "knowledge_search",
                    "description": "Search the help center.",
                    "parameters": SEARCH_TOOL["schema"],
                },
            }
        ]
        assert body["tool_choice"] == "auto"
        assert body["messages"][1:] == [
            {"role": "user", "content": DOCKER_QUESTION},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_prev",
                        "type": "function",
                        "function": {
                            "name": "knowledge_search",
                            "arguments": '{"query": "docker"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_prev", "content": '{"results": []}'},
        ]


async def test_tool_choice_none_is_sent_and_a_plain_prompt_sends_no_tools(
    server: WireServer, make: Callable[..., Any]
) -> None:
    api = server.api
    provider = make(api)
    await provider.execute(replace(EXCHANGE_PROMPT, tool_choice="none"))
    await provider.execute(PROMPT)
    with_tools, plain = server.requests
    if api == "google":
        assert with_tools.body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
        assert "tools" not in plain.body and "toolConfig" not in plain.body
        return
    choice = with_tools.body["tool_choice"]
    assert (choice["type"] if api == "anthropic" else choice) == "none"
    assert "tools" not in plain.body and "tool_choice" not in plain.body


async def test_openai_arguments_that_are_not_json_are_kept_for_the_runner_to_refuse(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with WireServer("openai") as wire:
        monkeypatch.setenv("OPENAI_API_KEY", KEYS["openai"])
        monkeypatch.setenv("OPENAI_BASE_URL", wire.base_url)
        wire.script(use(("knowledge_search", '{"query": "dock')))
        response = await make("openai").execute(replace(PROMPT, tools=[SEARCH_TOOL]))
    [call] = response.tool_calls
    assert call.arguments == '{"query": "dock'


async def test_an_exchange_with_an_unanswered_call_is_refused_as_the_api_would(
    server: WireServer, make: Callable[..., Any]
) -> None:
    prompt = replace(EXCHANGE_PROMPT, messages=EXCHANGE_PROMPT.messages[:2])
    with pytest.raises(ProviderError, match="HTTP 400"):
        await make(server.api).execute(prompt)


# --- google: what only Gemini asks for ---------------------------------------------------------


async def test_google_calls_go_back_with_their_thought_signature_and_errors_as_error(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with WireServer("google") as wire:
        monkeypatch.setenv("GOOGLE_API_KEY", KEYS["google"])
        monkeypatch.setenv("GATEBOT_GOOGLE_BASE_URL", wire.base_url)
        provider = make("google")
        wire.script(use(("knowledge_search", {"query": "sso"})), ok("Yes [faq-sso]."))
        first = await provider.execute(replace(PROMPT, tools=[SEARCH_TOOL]))
        [call] = first.tool_calls
        assert call.id.startswith("fc_")  # the API's id, kept so the result pairs with it
        exchange = [
            *PROMPT.messages,
            assistant_turn(first.text, [call]),
            tool_result(call, "search is down", is_error=True),
        ]
        # The wire server refuses a call of its own sent back without its signature, as
        # Gemini 3 does: this passing shows the signature went back.
        second = await provider.execute(replace(PROMPT, messages=exchange, tools=[SEARCH_TOOL]))
        assert second.text == "Yes [faq-sso]."
        model_turn, results = wire.requests[1].body["contents"][-2:]
        assert model_turn["parts"][-1]["thoughtSignature"] == SIGNATURE
        assert results["parts"][0]["functionResponse"]["response"] == {"error": "search is down"}


async def test_google_takes_gemini_api_key_and_without_a_key_fails_at_call_time(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ProviderError, match=r"GOOGLE_API_KEY .*is not set"):
        await make("google").execute(PROMPT)
    async with WireServer("google") as wire:
        monkeypatch.setenv("GEMINI_API_KEY", KEYS["google"])
        monkeypatch.setenv("GATEBOT_GOOGLE_BASE_URL", wire.base_url)
        assert (await make("google").execute(PROMPT)).text == "Hello."
        assert credential(wire.requests[0]) == KEYS["google"]


async def test_google_a_blocked_prompt_is_an_empty_draft_not_an_outage(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = (
        b'{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}}'
    )
    async with WireServer("google", default=garbage(blocked, "application/json")) as wire:
        monkeypatch.setenv("GOOGLE_API_KEY", KEYS["google"])
        monkeypatch.setenv("GATEBOT_GOOGLE_BASE_URL", wire.base_url)
        response = await make("google").execute(PROMPT)
    # The reply gate refuses an empty draft, like any other refusal; the tokens were still spent.
    assert (response.text, response.tool_calls, response.tokens_in) == ("", [], 9)
