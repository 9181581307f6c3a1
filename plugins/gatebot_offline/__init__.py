"""The ``offline`` model provider: no network, deterministic.

It words an answer from the facts retrieved this turn: the best fact's text, cited by key. It never
invents: with no facts it is never called (the agent replies from the ``no_answer`` template).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.extend.provider import ModelProvider, Prompt, Response
from bot.hookspecs import hookimpl


class OfflineProvider(ModelProvider):
    name = "offline"

    def __init__(self, model: str = "") -> None:
        super().__init__(model or "facts")

    async def execute(self, prompt: Prompt) -> Response:
        if prompt.purpose != "reply":
            return Response(text="")
        facts = prompt.context.get("facts", [])
        if not facts:
            return Response(text="")
        best = facts[0]
        return Response(text=f"{best['text']} [{best['key']}]")


@hookimpl(trylast=True)
def register_model_providers(register: Callable[[str, object], None]) -> None:
    register("offline", OfflineProvider)
