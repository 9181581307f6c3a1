"""Pre-flight through a language model: one call (purpose ``preflight``) that must answer the seven
questions as one strict JSON object, validated against the pack's own names before any answer is
used. Bad JSON, an answer outside the declared names, a timeout or a provider error raise
:class:`PreflightFailed`; the turn then runs as it would without pre-flight, and the record says
why.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema

from bot.errors import GatebotError, ProviderError
from bot.extend.provider import ModelCall, ModelProvider, Prompt, call
from bot.packs import Pack
from bot.preflight.answers import DEFAULT_TIMEOUT, LEVELS, QUESTIONS, Answer
from bot.preflight.candidates import faq_candidates, flow_candidates

SYSTEM = """You route one customer message for {company}'s assistant before it is answered.
Answer seven questions about the customer's last message. Reply with one JSON object and nothing
else: each key below maps to {{"answer": ..., "confidence": a number from 0 to 1}}.
- "flow": which procedure it asks to start, one of {flows}, or null.
- "faq": which stored question it asks, one of {faq}, or null.
- "person": true if the customer asks to talk to a person, else false.
- "helpdesk": which team should take it, one of {desks}.
- "reasoning": how much looking-up it needs: "low", "medium" or "high".
- "frustration": how frustrated the customer is: "low", "medium" or "high".
- "language": the language it is written in, one of {languages}, or null.
Procedures: {flow_lines}
Stored questions: {faq_lines}
Teams: {desk_lines}"""


class PreflightFailed(GatebotError):
    """The model's pre-flight could not be used; the turn runs without it."""


def _slot(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "answer": answer,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["answer", "confidence"],
        "additionalProperties": False,
    }


class ModelPreflight:
    version = "preflight-model@1"
    mode = "model"

    def __init__(self, pack: Pack, provider: ModelProvider) -> None:
        self.pack, self.provider = pack, provider
        self.flows = [c.key for c in flow_candidates(pack)]
        self.faq = faq_candidates(pack)
        self.timeout = float(pack.preflight.get("timeout_seconds", DEFAULT_TIMEOUT))
        desks = [h.name for h in pack.helpdesks]
        languages = sorted(pack.templates)
        self.schema = {
            "type": "object",
            "properties": {
                "flow": _slot({"enum": [*self.flows, None]}),
                "faq": _slot({"enum": [*(c.key for c in self.faq), None]}),
                "person": _slot({"type": "boolean"}),
                "helpdesk": _slot({"enum": desks or [None]}),
                "reasoning": _slot({"enum": list(LEVELS)}),
                "frustration": _slot({"enum": list(LEVELS)}),
                "language": _slot({"enum": [*languages, None]}),
            },
            "required": list(QUESTIONS),
            "additionalProperties": False,
        }
        self.system = SYSTEM.format(
            company=pack.company,
            flows=json.dumps(self.flows),
            faq=json.dumps([c.key for c in self.faq]),
            desks=json.dumps(desks),
            languages=json.dumps(languages),
            flow_lines="; ".join(f"{c.key}: {c.phrases[0]}" for c in flow_candidates(pack))
            or "none",
            faq_lines="; ".join(f"{c.key}: {c.phrases[0]}" for c in self.faq) or "none",
            desk_lines="; ".join(f"{h.name}: {h.description}" for h in pack.helpdesks) or "none",
        )

    async def answer(
        self, text: str, transcript: list[dict[str, str]], calls: list[ModelCall]
    ) -> list[Answer]:
        prompt = Prompt(
            purpose="preflight",
            system=self.system,
            messages=[*transcript[-6:], {"role": "user", "content": text}],
            context={"questions": list(QUESTIONS), "schema": self.schema},
        )
        try:
            response = await asyncio.wait_for(call(self.provider, prompt, calls), self.timeout)
        except TimeoutError:
            if calls:
                calls[-1]["error"] = f"timed out after {self.timeout:g} s"
            raise PreflightFailed(f"the model took longer than {self.timeout:g} s") from None
        except ProviderError as exc:
            raise PreflightFailed(f"provider failed: {exc}") from exc
        return self.parse(response.text)

    def parse(self, text: str) -> list[Answer]:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PreflightFailed(f"the model's answer is not JSON: {exc.msg}") from None
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema).iter_errors(data)
        )
        if error is not None:
            where = "/".join(map(str, error.absolute_path)) or "the answer"
            raise PreflightFailed(f"the model's answer is invalid at {where}: {error.message}")
        return [
            Answer(q, data[q]["answer"], float(data[q]["confidence"]), "model") for q in QUESTIONS
        ]
