"""The bounded knowledge-search loop: the model searches and reads through the tool runner, within
a step limit, and the reply gate checks citations against what those tools returned this turn.

Hosted models are the real anthropic and openai SDKs against the loopback wire servers
(:mod:`tests.wire_servers`), scripted to call tools; the offline provider answers from the
runtime's one search. Searches run on BM25 (GATEBOT_EMBEDDINGS=off), so nothing loads a model.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import gatebot_anthropic
import gatebot_openai
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.extend.provider import ModelProvider, Prompt, Response, ToolCall
from bot.extend.recorder import MemoryRecorder
from bot.extend.retriever import Fact, Retriever
from bot.extend.tool import ToolRunner
from bot.turn.knowledge_tools import READ, SEARCH, knowledge_tools, read_window
from bot.turn.toolloop import DEFAULT_MAX_STEPS, run_tool_loop
from tests.wire_servers import Api, WireServer, ok, use

MODELS = {"anthropic": "claude-test", "openai": "gpt-test"}
KEYS = {"anthropic": "sk-ant-test-" + "k" * 24, "openai": "sk-test-" + "o" * 24}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
PLUGINS = {"anthropic": gatebot_anthropic, "openai": gatebot_openai}
QUESTION = "Does Pipelines support Docker builds?"
LIFECYCLE = ["requested", "validated", "started", "finished"]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in [*KEY_ENV.values(), *URL_ENV.values(), "GATEBOT_ANTHROPIC_BASE_URL"]:
        monkeypatch.delenv(name, raising=False)
    for name in ("GATEBOT_OPENAI_BASE_URL", "GATEBOT_MODEL_TIMEOUT", "GATEBOT_SEARCH_STEPS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic-config"))
    monkeypatch.setenv("GATEBOT_EMBEDDINGS", "off")
    # The hosted providers are registered directly (extra_plugins); the knowledge plugin by name.
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,knowledge")


@pytest.fixture(params=["anthropic", "openai"])
async def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    api: Api = request.param
    async with WireServer(api) as wire:
        monkeypatch.setenv(KEY_ENV[api], KEYS[api])
        monkeypatch.setenv(URL_ENV[api], wire.base_url)
        yield wire


@pytest.fixture
async def started() -> AsyncIterator[list[App]]:
    apps: list[App] = []
    yield apps
    for app in apps:
        await app.stop()


async def start_app(
    settings: Settings, started: list[App], api: str | None = None
) -> tuple[App, MemoryRecorder]:
    memory = MemoryRecorder()
    settings.model = f"{api}:{MODELS[api]}" if api else "offline"
    extra = [PLUGINS[api]] if api else None
    app = App(settings, extra_plugins=extra, recorders=[memory])
    started.append(app)
    await app.start(channels=False)
    assert type(app.retriever).__name__ == "KnowledgeRetriever"
    return app, memory


async def ask(app: App, text: str = QUESTION) -> dict[str, Any]:
    conv = app.store.create_conversation("web")[0]
    result = await app.agent.handle(conv, text, "m1")
    return result.record


def calls_by_event(tools: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["tool"], e["event"]) for e in tools]


def lifecycle(tool: str) -> list[tuple[str, str]]:
    return [(tool, event) for event in LIFECYCLE]


def tool_choice(api: str, body: dict[str, Any]) -> str:
    choice = body.get("tool_choice")
    return str(choice["type"] if api == "anthropic" else choice)


def tool_results(api: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(content, is_error) of each tool result the request carried back to the model."""
    out = []
    for message in body["messages"]:
        if api == "openai" and message["role"] == "tool":
            out.append((message["content"], '"error"' in message["content"]))
        if api == "anthropic" and isinstance(message["content"], list):
            for block in message["content"]:
                if block["type"] == "tool_result":
                    out.append((block["content"], block["is_error"]))
    return out


# --- hosted models through the real SDKs ----------------------------------------------------


async def test_a_model_searches_twice_reads_a_window_and_answers_citing_keys(
    server: WireServer, settings: Settings, started: list[App]
) -> None:
    api = server.api
    server.script(
        use(("knowledge_search", {"query": "docker layer caching"})),
        use(("knowledge_search", {"query": "slack alerts", "k": 2})),
        use(("knowledge_read", {"key": "doc-pipelines", "offset": 0, "length": 120})),
        ok("Yes: Docker builds run natively [faq-docker], on hosted runners [doc-pipelines]."),
    )
    app, memory = await start_app(settings, started, api)
    record = await ask(app)

    assert record["reply"]["gate"] == {"passed": True, "reasons": [], "rules": []}
    assert record["reply"]["attempts"] == 1
    assert record["reply"]["text"] == "Yes: Docker builds run natively, on hosted runners."
    assert record["facts"] == [
        {"key": "faq-docker", "source": "faq", "mode": "faq"},
        {"key": "doc-pipelines", "source": "doc-pipelines", "mode": "read"},
    ]
    # The runtime's first search, then the model's three calls, each with every lifecycle event.
    assert calls_by_event(record["tools"]) == [
        *lifecycle(SEARCH),
        *lifecycle(SEARCH),
        *lifecycle(SEARCH),
        *lifecycle(READ),
    ]
    assert [c["purpose"] for c in record["model_calls"]] == ["reply"] * 4
    assert memory.turns[-1]["tools"] == record["tools"]

    first, *_, last = server.requests
    names = (
        [t["name"] for t in first.body["tools"]]
        if api == "anthropic"
        else [t["function"]["name"] for t in first.body["tools"]]
    )
    assert names == ["knowledge_search", "knowledge_read"]  # wire-safe names
    assert tool_choice(api, first.body) == "auto"
    results = tool_results(api, last.body)
    assert len(results) == 3 and not any(error for _, error in results)
    window = json.loads(results[2][0])
    assert window["text"].startswith("## Pipelines\n\nAcme Pipelines runs your build")
    assert (window["offset"], window["length"], window["next_offset"]) == (0, 120, 120)
    assert window["total"] > 120
    assert "faq-slack-alerts" in results[1][0]
    assert KEYS[api] not in json.dumps(record)


async def test_a_model_that_never_stops_calling_tools_is_cut_at_the_step_limit(
    server: WireServer, settings: Settings, started: list[App], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = server.api
    monkeypatch.setenv("GATEBOT_SEARCH_STEPS", "2")
    server.script(then=use(("knowledge_search", {"query": "docker"})))
    app, _ = await start_app(settings, started, api)
    record = await ask(app)

    # Two rounds with tools, a last call told to answer; it asks for tools again, so the draft is
    # empty and refused; the retry has no rounds left and ends the same way.
    assert [tool_choice(api, r.body) for r in server.requests] == ["auto", "auto", "none", "none"]
    assert calls_by_event(record["tools"]) == [
        *lifecycle(SEARCH),
        *lifecycle(SEARCH),
        *lifecycle(SEARCH),
        ("", "step_limit"),
        ("", "step_limit"),
    ]
    assert record["tools"][-2]["detail"] == {"steps": 2, "max_steps": 2, "asked": 1}
    assert record["tools"][-1]["detail"] == {"steps": 0, "max_steps": 0, "asked": 1}  # retry
    assert record["reply"]["attempts"] == 2
    assert record["reply"]["gate"]["passed"] is False
    assert "is empty" in record["reply"]["gate"]["reasons"]
    assert record["move"]["escalate"] is True
    [queued] = app.store.escalations("open")
    assert "reply gate refused two drafts" in queued.reason


async def test_a_citation_never_retrieved_is_refused_retried_once_then_queued(
    server: WireServer, settings: Settings, started: list[App]
) -> None:
    api = server.api
    server.script(
        use(("knowledge_search", {"query": "slack alerts"})),
        ok("Yes, single sign-on is included [faq-sso]."),
        ok("Single sign-on is included on every plan [faq-sso]."),
    )
    app, _ = await start_app(settings, started, api)
    record = await ask(app)

    assert record["reply"]["attempts"] == 2
    assert record["reply"]["gate"] == {
        "passed": False,
        "reasons": ["cites 'faq-sso', which was not retrieved this turn"],
        "rules": ["uncited"],
    }
    # Refused twice: the record keeps every fact retrieved this turn, and exactly those.
    assert [f["key"] for f in record["facts"]] == [
        "faq-docker",
        "faq-slack-alerts",
        "doc-monitor#alerts",
    ]
    assert len(server.requests) == 3
    retry = server.requests[2].body
    system = retry["system"] if api == "anthropic" else retry["messages"][0]["content"]
    assert "refused because it cites 'faq-sso'" in system
    assert len(tool_results(api, retry)) == 1  # the retry carries on from the search it made
    assert record["move"]["escalate"] is True
    [queued] = app.store.escalations("open")
    assert "faq-sso" in queued.reason


async def test_an_unknown_tool_and_bad_arguments_are_refused_and_fed_back(
    server: WireServer, settings: Settings, started: list[App]
) -> None:
    api = server.api
    calls: list[tuple[str, Any]] = [
        ("delete_account", {"account": "42"}),
        ("knowledge_search", {"k": 2}),
    ]
    if api == "openai":
        calls.append(("knowledge_read", '{"key": "doc-pipelines"'))  # cut-off JSON
    server.script(
        use(*calls),
        ok("Yes, Pipelines runs Docker builds natively [faq-docker]."),
    )
    app, _ = await start_app(settings, started, api)
    record = await ask(app)

    assert record["reply"]["gate"]["passed"] is True
    refused = [
        (e["tool"], e["detail"]["reason"]) for e in record["tools"] if e["event"] == "refused"
    ]
    expected = [
        ("delete_account", "unknown tool"),
        (SEARCH, "invalid arguments: 'query' is a required property"),
    ]
    if api == "openai":
        expected.append((READ, "arguments must be a JSON object"))
    assert refused == expected
    results = tool_results(api, server.requests[1].body)
    assert [error for _, error in results] == [True] * len(expected)
    assert "refused: unknown tool" in results[0][0]
    assert "'query' is a required property" in results[1][0]


# --- the offline provider and the live events ------------------------------------------------


async def test_the_offline_answer_records_one_search_with_the_same_citations(
    settings: Settings, started: list[App]
) -> None:
    app, _ = await start_app(settings, started)
    conv = app.store.create_conversation("web")[0]
    result = await app.agent.handle(conv, QUESTION, "m1")
    record = result.record
    assert calls_by_event(record["tools"]) == lifecycle(SEARCH)
    assert record["tools"][0]["detail"] == {"arguments": ["k", "query"]}  # names, never values
    assert record["facts"] == [{"key": "faq-docker", "source": "faq", "mode": "faq"}]
    assert [c["key"] for c in result.replies[0]["citations"]] == ["faq-docker"]
    assert record["reply"]["gate"]["passed"] is True
    assert record["model_calls"][-1]["provider"] == "offline"


async def test_the_websocket_streams_tool_progress_before_the_reply_recorded_as_bm25(
    settings: Settings, started: list[App]
) -> None:
    from gatebot_web.server import build_web_app

    app, _ = await start_app(settings, started)
    question = "How does Monitor check uptime from different locations?"
    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        created = await (await client.post("/api/conversations")).json()
        cid, token = created["id"], created["token"]
        async with client.ws_connect(f"/api/conversations/{cid}/events?token={token}") as ws:
            resp = await client.post(
                f"/api/conversations/{cid}/messages",
                headers={"Authorization": f"Bearer {token}"},
                json={"text": question, "client_message_id": "w1"},
            )
            assert resp.status == 200
            body = await resp.json()
            events = []
            for _ in range(20):  # bounded: a customer echo, four tool events, one reply
                event = await ws.receive_json(timeout=5)
                events.append(event)
                if event["type"] == "reply":
                    break
    kinds = [(e["type"], e.get("tool"), e.get("event")) for e in events]
    assert kinds == [
        ("message", None, None),
        *[("tool", SEARCH, event) for event in LIFECYCLE],
        ("reply", None, None),
    ]
    assert question not in json.dumps(events[1:5])  # progress carries no query text
    turn = body["turn"]
    assert turn["facts"] == [
        {"key": "doc-monitor#checks", "source": turn["facts"][0]["source"], "mode": "bm25"}
    ]
    assert [c["key"] for c in body["replies"][0]["citations"]] == ["doc-monitor#checks"]


# --- the loop and the tools on their own ----------------------------------------------------


class EndlessTools(ModelProvider):
    """Asks for a search on every call, whatever it is told."""

    name = "endless"
    calls_tools = True

    def __init__(self) -> None:
        super().__init__("test")
        self.prompts: list[Prompt] = []

    async def execute(self, prompt: Prompt) -> Response:
        self.prompts.append(prompt)
        n = len(self.prompts)
        return Response("", tool_calls=[ToolCall(f"c{n}", SEARCH, {"query": "docker"})])


class TwoFacts(Retriever):
    name = "two"

    async def search(self, query: str, k: int = 3) -> list[Fact]:
        facts = [
            Fact("faq-a", "Alpha answer.", "faq", "faq", 2.0, "Alpha?"),
            Fact("doc-b#1", "Bravo " * 40, "docs/b.md", "bm25", 1.0, "Bravo"),
        ]
        return facts[:k]


async def test_the_loop_stops_after_the_default_four_rounds() -> None:
    provider = EndlessTools()
    registry, ledger = knowledge_tools(TwoFacts())
    calls: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    prompt = Prompt("reply", "system", [{"role": "user", "content": "q"}])
    loop = await run_tool_loop(
        provider, prompt, ToolRunner(registry), model_calls=calls, events=events
    )
    assert DEFAULT_MAX_STEPS == 4
    assert (loop.steps, loop.cut, len(calls)) == (4, True, 5)
    assert [p.tool_choice for p in provider.prompts] == ["auto"] * 4 + ["none"]
    assert "answer now" in provider.prompts[-1].system
    # Each round's call and result went back to the model with matching ids.
    sent = provider.prompts[-1].messages
    assert [m["role"] for m in sent] == ["user"] + ["assistant", "tool"] * 4
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["c1", "c2", "c3", "c4"]
    assert ledger.keys == {"faq-a", "doc-b#1"}


async def test_read_over_a_retriever_without_its_own_reader_windows_its_passages() -> None:
    from bot.extend.tool import ToolError

    registry, ledger = knowledge_tools(TwoFacts())
    tool = registry.get(READ)
    assert tool is not None
    # TwoFacts has no passages attribute and no read: the key is unknown, said as a tool error.
    with pytest.raises(ToolError, match="no passage"):
        await tool.run({"key": "faq-a"}, {})

    class WithPassages(TwoFacts):
        facts = [Fact("doc-b#1", "Bravo " * 40, "docs/b.md", "bm25", title="Bravo")]

    window = await read_window(WithPassages(), "doc-b#1", 6, 12)
    assert (window["text"], window["offset"], window["length"]) == ("Bravo Bravo ", 6, 12)
    assert (window["total"], window["next_offset"], window["source"]) == (240, 18, "docs/b.md")
    with pytest.raises(ValueError, match="past the end"):
        await read_window(WithPassages(), "doc-b#1", 500, 10)
    assert not ledger
