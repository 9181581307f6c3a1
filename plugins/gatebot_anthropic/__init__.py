"""The ``anthropic`` model provider: ``GATEBOT_MODEL=anthropic:MODEL`` over the Messages API.

Credentials come from the environment only: ``ANTHROPIC_API_KEY`` is handed to the SDK
explicitly, so the SDK never falls back to profiles or token files on disk.
``GATEBOT_ANTHROPIC_BASE_URL``, else ``ANTHROPIC_BASE_URL`` (the SDK's own variable), else the
public API is where calls go. Timeouts, retries and error messages follow
:mod:`gatebot_providers_common.policy`.

Tool calling: ``Prompt.tools`` go out as ``tools`` (names made wire-safe, mapped back on the
way in), the exchange as ``tool_use`` blocks in assistant turns and ``tool_result`` blocks in user
turns, and ``tool_choice`` ``none`` as ``{"type": "none"}``.

The SDK is imported on first use, so an install without ``gatebot[providers]`` loads this plugin
without error and only a deployment that selects it is told to install the SDK.
"""

from __future__ import annotations

import importlib.util
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
    from anthropic import AsyncAnthropic
    from anthropic.types import Message, MessageParam

# Replies are a few sentences; the cap bounds cost and time if a model runs on.
MAX_TOKENS = 1024
DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicProvider(ModelProvider):
    name = "anthropic"
    reads_values = True
    calls_tools = True

    def __init__(
        self,
        model: str = "",
        *,
        policy: CallPolicy | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        # Misconfigurations that no retry can fix stop the app at start. A missing key does not
        # (see _client): the app starts, turns that need no model still run, and each model call
        # fails honestly (reply template, question queued) until the key is set.
        if not model:
            raise ConfigError("GATEBOT_MODEL=anthropic needs a model: anthropic:MODEL")
        if importlib.util.find_spec("anthropic") is None:
            raise ConfigError(
                "GATEBOT_MODEL=anthropic needs the anthropic SDK: pip install 'gatebot[providers]'"
            )
        super().__init__(model)
        self.policy = policy or CallPolicy.from_env()
        self.max_tokens = max_tokens
        self._sdk: AsyncAnthropic | None = None
        self._secrets: tuple[str, ...] = ()

    def _client(self) -> AsyncAnthropic:
        if self._sdk is None:
            key = env("ANTHROPIC_API_KEY")
            if not key:
                raise ProviderError("anthropic: ANTHROPIC_API_KEY is not set")
            import anthropic

            self._secrets = (key,)
            self._sdk = anthropic.AsyncAnthropic(
                api_key=key,
                # Read here rather than by the SDK so a variable set empty (as compose files do
                # with ${ANTHROPIC_BASE_URL:-}) means the default, not an empty URL.
                base_url=env("GATEBOT_ANTHROPIC_BASE_URL")
                or env("ANTHROPIC_BASE_URL")
                or DEFAULT_BASE_URL,
                timeout=self.policy.timeout_s,
                max_retries=0,  # our policy retries; two retry loops would multiply
            )
        return self._sdk

    async def execute(self, prompt: Prompt) -> Response:
        client = self._client()
        import anthropic

        errors = SdkErrors.of(anthropic)
        transcript, exchange = split_exchange(prompt.messages)
        messages = cast("list[MessageParam]", [*alternating(transcript), *_exchange(exchange)])
        # The API refuses an empty system text: leave the field out instead. (A dict rather than
        # the SDK's omit sentinel, which SDKs older than the pinned floor do not have.)
        extra: dict[str, Any] = {"system": prompt.system} if prompt.system else {}
        names = wire_names(prompt.tools)
        if prompt.tools:
            extra["tools"] = [
                {
                    "name": wire_name(t["name"]),
                    "description": t.get("description", ""),
                    "input_schema": t["schema"],
                }
                for t in prompt.tools
            ]
            extra["tool_choice"] = {"type": "none" if prompt.tool_choice == "none" else "auto"}

        async def attempt(seconds_left: float) -> Message:
            return await client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                messages=messages,
                timeout=seconds_left,
                **extra,
            )

        message = await call_with_retries("anthropic", attempt, errors, self.policy, self._secrets)
        try:
            return _response(message, names)
        except (AttributeError, TypeError, ValueError) as exc:
            # A 200 whose body is no Messages API answer (an HTML page, a proxy's JSON): the
            # provider failed, honestly, like any other upstream error.
            raise ProviderError(
                f"anthropic: the answer was not a Messages API response ({type(exc).__name__})"
            ) from exc

    async def aclose(self) -> None:
        """Close the SDK's connection pool; the next call opens a new one."""
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.close()


def _response(message: Message, names: dict[str, str]) -> Response:
    """Our response from the SDK's message; raises on a body of another shape."""
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [
        ToolCall(block.id, names.get(block.name, block.name), block.input)
        for block in message.content
        if block.type == "tool_use"
    ]
    usage = message.usage
    # Cached prompt tokens are counted apart from input_tokens; all of them were read.
    tokens_in = (
        usage.input_tokens
        + (getattr(usage, "cache_creation_input_tokens", None) or 0)
        + (getattr(usage, "cache_read_input_tokens", None) or 0)
    )
    return Response(
        text=text, tokens_in=tokens_in, tokens_out=usage.output_tokens, tool_calls=calls
    )


def _exchange(exchange: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool exchange as Messages API turns: calls as ``tool_use`` blocks of the assistant,
    results as ``tool_result`` blocks of the user; consecutive blocks of one role share a turn
    (the API wants every result of one assistant turn in the next user turn)."""
    out: list[dict[str, Any]] = []
    for message in exchange:
        role = message.get("role")
        blocks: list[dict[str, Any]] = []
        if role == "tool":
            role = "user"
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": message.get("content") or "",
                    "is_error": bool(message.get("is_error")),
                }
            )
        else:
            role = "assistant" if role == "assistant" else "user"
            if message.get("content"):
                blocks.append({"type": "text", "text": message["content"]})
            for call in message.get("tool_calls") or []:
                arguments = call["arguments"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": wire_name(call["name"]),
                        # The API takes only an object; what else a model sent was refused.
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


@hookimpl
def register_model_providers(register: Callable[[str, object], None]) -> None:
    register("anthropic", AnthropicProvider)
