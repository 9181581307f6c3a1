"""The ``google`` model provider: ``GATEBOT_MODEL=google:MODEL`` over Gemini's generateContent.

Credentials come from the environment only: ``GOOGLE_API_KEY``, else ``GEMINI_API_KEY``, is
handed to the ``google-genai`` SDK explicitly, with ``vertexai=False``, so the SDK never looks for
application-default credentials, a service-account file or a Vertex project on disk.
``GATEBOT_GOOGLE_BASE_URL``, else ``GOOGLE_GEMINI_BASE_URL`` (the SDK's own variable), else the
public Gemini API is where calls go. Timeouts, retries and error messages follow
:mod:`gatebot_providers_common.policy`; the SDK's own retries stay off (``attempts=1``, which also
stops its hidden retry of a failed aiohttp connection after a 1-10 s sleep).

Tool calling: ``Prompt.tools`` go out as ``functionDeclarations`` with their JSON schema as
``parametersJsonSchema`` (names made wire-safe, mapped back on the way in), the exchange as
``functionCall`` parts of ``model`` turns and ``functionResponse`` parts of ``user`` turns, and
``tool_choice`` ``none`` as the function-calling mode ``NONE``. A call the API sent without an id
gets one here, so results pair with calls as in the other providers. Gemini 3 models refuse an
exchange whose calls come back without the ``thoughtSignature`` they were sent with: the provider
keeps the last signatures by call id and puts them back on the calls it is handed.

The SDK is imported on first use, as in ``gatebot_anthropic``.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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
    from google.genai import Client
    from google.genai.types import GenerateContentResponse

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
SIGNATURES_KEPT = 256  # calls of the turns in flight; older exchanges are over


class GoogleProvider(ModelProvider):
    name = "google"
    reads_values = True
    calls_tools = True

    def __init__(self, model: str = "", *, policy: CallPolicy | None = None) -> None:
        # As in gatebot_anthropic: what no retry can fix stops the start; a missing key does not.
        if not model:
            raise ConfigError("GATEBOT_MODEL=google needs a model: google:MODEL")
        if importlib.util.find_spec("google.genai") is None:
            raise ConfigError(
                "GATEBOT_MODEL=google needs the google-genai SDK: pip install 'gatebot[providers]'"
            )
        super().__init__(model)
        self.policy = policy or CallPolicy.from_env()
        self._sdk: Client | None = None
        self._secrets: tuple[str, ...] = ()
        self._signatures: OrderedDict[str, bytes] = OrderedDict()
        self._ids = itertools.count(1)

    def _client(self) -> Client:
        if self._sdk is None:
            key = next((v for v in map(env, KEY_VARIABLES) if v), "")
            if not key:
                raise ProviderError("google: GOOGLE_API_KEY (or GEMINI_API_KEY) is not set")
            from google import genai

            self._secrets = (key,)
            self._sdk = genai.Client(
                vertexai=False,
                api_key=key,
                http_options={
                    # Read here rather than by the SDK so a variable set empty means the default.
                    "base_url": env("GATEBOT_GOOGLE_BASE_URL")
                    or env("GOOGLE_GEMINI_BASE_URL")
                    or DEFAULT_BASE_URL,
                    "timeout": _milliseconds(self.policy.timeout_s),
                    "retry_options": {"attempts": 1},  # our policy retries
                },
            )
        return self._sdk

    async def execute(self, prompt: Prompt) -> Response:
        client = self._client()
        transcript, exchange = split_exchange(prompt.messages)
        contents = [
            *(
                {"role": _ROLES[m["role"]], "parts": [{"text": m["content"]}]}
                for m in alternating(transcript)
            ),
            *self._exchange(exchange),
        ]
        config: dict[str, Any] = {}
        if prompt.system:
            config["system_instruction"] = prompt.system
        names = wire_names(prompt.tools)
        if prompt.tools:
            config["tools"] = [{"function_declarations": [_declaration(t) for t in prompt.tools]}]
            mode = "NONE" if prompt.tool_choice == "none" else "AUTO"
            config["tool_config"] = {"function_calling_config": {"mode": mode}}

        async def attempt(seconds_left: float) -> GenerateContentResponse:
            timeout = {"http_options": {"timeout": _milliseconds(seconds_left)}}
            return await client.aio.models.generate_content(
                model=self.model, contents=contents, config={**config, **timeout}
            )

        answer = await call_with_retries("google", attempt, _errors(), self.policy, self._secrets)
        try:
            return self._response(answer, names)
        except (AttributeError, TypeError, ValueError) as exc:
            # A 200 whose body is no generateContent answer (an HTML page, a proxy's JSON): the
            # provider failed, honestly, like any other upstream error.
            raise ProviderError(
                f"google: the answer was not a generateContent response ({type(exc).__name__})"
            ) from exc

    async def aclose(self) -> None:
        """Close the SDK's connection pool; the next call opens a new one."""
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.aio.aclose()

    def _response(self, answer: GenerateContentResponse, names: dict[str, str]) -> Response:
        """Our response from the SDK's answer; raises on a body of another shape."""
        usage = answer.usage_metadata
        tokens_in = (usage.prompt_token_count or 0) if usage else 0
        # Thinking is billed as output: it is counted with the answer's own tokens.
        tokens_out = (
            (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0) if usage else 0
        )
        if not answer.candidates:
            if answer.prompt_feedback is None or answer.prompt_feedback.block_reason is None:
                raise TypeError("no candidates")
            # A blocked prompt is a refusal: an empty draft, which the reply gate refuses.
            return Response(text="", tokens_in=tokens_in, tokens_out=tokens_out)
        content = answer.candidates[0].content  # None when the candidate was cut for safety
        parts = (content.parts or []) if content is not None else []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        calls = []
        for part in parts:
            if part.function_call is None:
                continue
            call = part.function_call
            call_id = call.id or f"google-call-{next(self._ids)}"
            if part.thought_signature:
                self._remember(call_id, part.thought_signature)
            wire = call.name or ""
            calls.append(ToolCall(call_id, names.get(wire, wire), call.args or {}))
        return Response(text=text, tokens_in=tokens_in, tokens_out=tokens_out, tool_calls=calls)

    def _remember(self, call_id: str, signature: bytes) -> None:
        self._signatures[call_id] = signature
        while len(self._signatures) > SIGNATURES_KEPT:
            self._signatures.popitem(last=False)

    def _exchange(self, exchange: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tool exchange as Gemini turns: calls as ``function_call`` parts of the model,
        results as ``function_response`` parts of the user; consecutive parts of one role share a
        turn (the API wants every response to one model turn in the next user turn)."""
        out: list[dict[str, Any]] = []
        for message in exchange:
            if message.get("role") == "tool":
                role, parts = "user", [_function_response(message)]
            else:
                role = "model" if message.get("role") == "assistant" else "user"
                parts = [{"text": message["content"]}] if message.get("content") else []
                parts += [self._function_call(c) for c in message.get("tool_calls") or []]
            if not parts:
                continue
            if out and out[-1]["role"] == role:
                out[-1]["parts"].extend(parts)
            else:
                out.append({"role": role, "parts": parts})
        return out

    def _function_call(self, call: dict[str, Any]) -> dict[str, Any]:
        arguments = call["arguments"]
        part: dict[str, Any] = {
            "function_call": {
                "id": call["id"],
                "name": wire_name(call["name"]),
                # The API takes only an object; what else a model sent was refused.
                "args": arguments if isinstance(arguments, dict) else {},
            }
        }
        signature = self._signatures.get(call["id"])
        if signature:
            part["thought_signature"] = signature
        return part


_ROLES = {"user": "user", "assistant": "model"}


def _function_response(message: dict[str, Any]) -> dict[str, Any]:
    # The API takes a JSON object as the response: Google's convention names the result "output"
    # and a failure "error".
    key = "error" if message.get("is_error") else "output"
    return {
        "function_response": {
            "id": message["tool_call_id"],
            "name": wire_name(message.get("name") or ""),
            "response": {key: message.get("content") or ""},
        }
    }


def _declaration(tool: dict[str, Any]) -> dict[str, Any]:
    # The JSON schema as written: ``parameters`` would want Google's OpenAPI subset instead.
    return {
        "name": wire_name(tool["name"]),
        "description": tool.get("description", ""),
        "parameters_json_schema": tool["schema"],
    }


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _errors() -> SdkErrors:
    """The SDK's API error for every status, and aiohttp's own for no answer at all: the SDK
    sends through aiohttp whenever it is installed, and gatebot always installs it."""
    import aiohttp
    from google.genai import errors

    return SdkErrors(
        base=errors.APIError,
        status=errors.APIError,
        connection=aiohttp.ClientConnectionError,
        timeout=aiohttp.ServerTimeoutError,
    )


@hookimpl
def register_model_providers(register: Callable[[str, object], None]) -> None:
    register("google", GoogleProvider)
