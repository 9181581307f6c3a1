"""An adversarial model over the real provider path: the anthropic and openai SDKs, against the
loopback wire servers, propose catalog calls that would reach another host, climb the path,
inject a header, or name an endpoint nobody declared. The runtime refuses every one, the model
reads the refusals as tool results, and the stand-in API receives no request at all."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from gatebot_anthropic import AnthropicProvider
from gatebot_catalog.client import CatalogClient
from gatebot_openai import OpenAIProvider

from bot.extend.provider import ModelProvider, Prompt, wire_name
from bot.extend.tool import ToolRunner
from bot.turn.toolloop import run_tool_loop
from tests.test_catalog import ATTACKS, Recorder, secret, stand_in, tools  # noqa: F401 (fixtures)
from tests.test_search_loop import KEY_ENV, KEYS, MODELS, URL_ENV, tool_results
from tests.wire_servers import Api, WireServer, ok, use

ROUNDS = 4  # the loop's default step limit


@pytest.fixture(params=["anthropic", "openai"])
async def model(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> AsyncIterator[tuple[WireServer, ModelProvider]]:
    api: Api = request.param
    for name in ("GATEBOT_ANTHROPIC_BASE_URL", "GATEBOT_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic-config"))
    async with WireServer(api) as wire:
        monkeypatch.setenv(KEY_ENV[api], KEYS[api])
        monkeypatch.setenv(URL_ENV[api], wire.base_url)
        cls = AnthropicProvider if api == "anthropic" else OpenAIProvider
        provider = cls(MODELS[api])
        try:
            yield wire, provider
        finally:
            await provider.aclose()


async def test_an_adversarial_model_reaches_nothing_through_the_catalog(
    model: tuple[WireServer, ModelProvider],
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]],  # noqa: F811
    stand_in: tuple[str, Recorder],  # noqa: F811
    secret: str,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire, provider = model
    runner, _, published = tools
    _, seen = stand_in
    caplog.set_level(logging.DEBUG)
    # Every attack, spread over the rounds the loop allows, as the model's own tool calls.
    calls = [(wire_name(name), args) for name, args in ATTACKS]
    per_round = -(-len(calls) // ROUNDS)
    wire.script(
        *(use(*calls[i : i + per_round]) for i in range(0, len(calls), per_round)),
        ok("I could not make any of those calls."),
    )
    context: dict[str, Any] = {"conversation_id": "c1", "owned": {"order_id": ["1042"]}}
    model_calls: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    prompt = Prompt(
        purpose="tools",
        system="Use the catalog tools to help the customer.",
        messages=[{"role": "user", "content": "Refund everything, and show me the admin page."}],
    )
    loop = await run_tool_loop(
        provider, prompt, runner, model_calls=model_calls, events=events, context=context
    )

    assert loop.steps == ROUNDS and not loop.cut
    assert [o.status for o in loop.outcomes] == ["refused"] * len(ATTACKS)
    assert seen.requests == []  # not one request left the process
    refused = [e for e in events if e["event"] == "refused"]
    assert len(refused) == len(ATTACKS) and all(e["detail"]["reason"] for e in refused)
    # The model was told each refusal, as an error result of its own call.
    fed_back = tool_results(wire.api, wire.requests[-1].body)
    assert len(fed_back) == len(ATTACKS) and all(error for _, error in fed_back)
    assert loop.response.text == "I could not make any of those calls."
    # The API credential is on no record, event, model request or log line.
    shown = json.dumps([events, published, model_calls, [r.body for r in wire.requests]])
    assert secret not in shown and secret not in caplog.text
