"""The ``openai`` model provider: ``GATEBOT_MODEL=openai:MODEL`` over Chat Completions.

It speaks to OpenAI or to any OpenAI-compatible server (vLLM, llama.cpp, Ollama, a gateway).
``GATEBOT_OPENAI_BASE_URL``, else ``OPENAI_BASE_URL``, names the server (with its ``/v1``);
``OPENAI_API_KEY`` is the key. A local server often wants none, so with a base URL set and no key
a placeholder is sent; without either the call fails honestly. Timeouts, retries and error
messages follow :mod:`gatebot_providers_common.policy`.

Tool calling: ``Prompt.tools`` go out as function ``tools`` (names made wire-safe, mapped back on
the way in), the exchange as assistant ``tool_calls`` and ``role: tool`` messages, and
``tool_choice`` ``none`` as ``"none"``. Arguments that are not valid JSON are handed on as the
string the model sent, for the tool runner to refuse.

The SDK is imported on first use, as in ``gatebot_anthropic``.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from gatebot_providers_common import CallPolicy, SdkErrors, alternating, call_with_retries, env

from bot.errors import ConfigError, ProviderError
from bot.extend.provider import (
    ModelProvider,
    Prompt,
    Response,
    ToolCall,
    split_exchange,
    wire_name,
    wire_names,
)
from bot.hookspecs import hookimpl

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

# What a local server that checks no key is sent: the SDK insists on some key.
PLACEHOLDER_KEY = "not-needed"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider(ModelProvider):
    name = "openai"
    reads_values = True
    calls_tools = True

    def __init__(self, model: str = "", *, policy: CallPolicy | None = None) -> None:
        # As in gatebot_anthropic: what no retry can fix stops the start; a missing key does not.
        if not model:
            raise ConfigError("GATEBOT_MODEL=openai needs a model: openai:MODEL")
        if importlib.util.find_spec("openai") is None:
            raise ConfigError(
                "GATEBOT_MODEL=openai needs the openai SDK: pip install 'gatebot[providers]'"
            )
        super().__init__(model)
        self.policy = policy or CallPolicy.from_env()
        self._sdk: AsyncOpenAI | None = None
        self._secrets: tuple[str, ...] = ()

    def _client(self) -> AsyncOpenAI:
        if self._sdk is None:
            # Read here rather than by the SDK so a variable set empty means "not set".
            base_url = env("GATEBOT_OPENAI_BASE_URL") or env("OPENAI_BASE_URL")
            key = env("OPENAI_API_KEY")
            if not key and not base_url:
                raise ProviderError(
                    "openai: OPENAI_API_KEY is not set "
                    "(a local server needs OPENAI_BASE_URL or GATEBOT_OPENAI_BASE_URL instead)"
                )
            import openai

            self._secrets = (key,) if key else ()
            self._sdk = openai.AsyncOpenAI(
                api_key=key or PLACEHOLDER_KEY,
                base_url=base_url or DEFAULT_BASE_URL,
                timeout=self.policy.timeout_s,
                max_retries=0,  # our policy retries; two retry loops would multiply
            )
        return self._sdk

    async def execute(self, prompt: Prompt) -> Response:
        client = self._client()
        import openai

        errors = SdkErrors.of(openai)
        transcript, exchange = split_exchange(prompt.messages)
        chat: list[dict[str, Any]] = [*alternating(transcript), *_exchange(exchange)]
        if prompt.system:
            chat.insert(0, {"role": "system", "content": prompt.system})
        messages = cast("list[ChatCompletionMessageParam]", chat)
        names = wire_names(prompt.tools)
        extra: dict[str, Any] = {}
        if prompt.tools:
            extra["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": wire_name(t["name"]),
                        "description": t.get("description", ""),
                        "parameters": t["schema"],
                    },
                }
                for t in prompt.tools
            ]
            extra["tool_choice"] = "none" if prompt.tool_choice == "none" else "auto"

        async def attempt(seconds_left: float) -> ChatCompletion:
            return await client.chat.completions.create(
                model=self.model, messages=messages, timeout=seconds_left, **extra
            )

        completion = await call_with_retries("openai", attempt, errors, self.policy, self._secrets)
        try:
            return _response(completion, names)
        except (AttributeError, TypeError, ValueError, IndexError) as exc:
            # A 200 whose body is no Chat Completions answer (an HTML page, a proxy's JSON): the
            # provider failed, honestly, like any other upstream error.
            raise ProviderError(
                f"openai: the answer was not a Chat Completions response ({type(exc).__name__})"
            ) from exc

    async def aclose(self) -> None:
        """Close the SDK's connection pool; the next call opens a new one."""
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.close()


def _response(completion: ChatCompletion, names: dict[str, str]) -> Response:
    """Our response from the SDK's completion; raises on a body of another shape."""
    if not completion.choices:
        raise ProviderError("openai: the response had no choices")
    # A refusal leaves content empty: an empty draft, which the reply gate refuses like any
    # other unusable one.
    message = completion.choices[0].message
    text = message.content or ""
    if not isinstance(text, str):
        raise TypeError("content is not text")
    calls = [
        ToolCall(c.id, names.get(c.function.name, c.function.name), _arguments(c.function))
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    usage = completion.usage  # some compatible servers leave it out
    return Response(
        text=text,
        tokens_in=usage.prompt_tokens if usage else 0,
        tokens_out=usage.completion_tokens if usage else 0,
        tool_calls=calls,
    )


def _arguments(function: Any) -> Any:
    """A call's arguments: the JSON object the model sent, else its raw text (refused later)."""
    try:
        return json.loads(function.arguments or "{}")
    except ValueError:
        return function.arguments


def _exchange(exchange: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool exchange as Chat Completions messages."""
    out: list[dict[str, Any]] = []
    for message in exchange:
        if message.get("role") == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message["tool_call_id"],
                    "content": message.get("content") or "",
                }
            )
            continue
        entry: dict[str, Any] = {
            "role": "assistant" if message.get("role") == "assistant" else "user",
            "content": message.get("content") or None,
        }
        if message.get("tool_calls"):
            entry["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": wire_name(call["name"]),
                        "arguments": call["arguments"]
                        if isinstance(call["arguments"], str)
                        else json.dumps(call["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        elif entry["content"] is None:
            continue
        out.append(entry)
    return out


@hookimpl
def register_model_providers(register: Callable[[str, object], None]) -> None:
    register("openai", OpenAIProvider)
