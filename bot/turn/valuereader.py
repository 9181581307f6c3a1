"""Values read by a language model: proposals only, each checked like any other.

The model sees the slots with their questions and the conversation, both sides, and answers JSON.
Nothing it says is trusted: a slot the pack does not declare is dropped, and every value still has
to appear word for word in what the customer wrote (``bot.turn.values.read_values``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.extend.provider import ModelCall, ModelProvider, Prompt, call
from bot.packs import Pack
from bot.turn.values import Proposal

#: A model's own confidence is not calibrated; it may never claim more than the extractors do.
MAX_MODEL_CONFIDENCE = 0.95

SYSTEM = (
    "Read the customer's values from the conversation. Slots:\n{slots}\n"
    'Answer only JSON: {{"values": [{{"slot": NAME, "value": TEXT, "confidence": 0-1}}]}}.'
    " Copy each value exactly as the customer wrote it; leave out what they did not say."
)


def prompt_for(
    pack: Pack, text: str, transcript: list[dict[str, str]], asked_slot: str | None
) -> Prompt:
    slots = "\n".join(f"- {s.name} ({s.type}): {s.question}" for s in pack.slots)
    system = SYSTEM.format(slots=slots)
    if asked_slot:
        system += f"\nThe agent just asked for {asked_slot}."
    return Prompt(
        purpose="values",
        system=system,
        messages=[*transcript, {"role": "user", "content": text}],
        context={"slots": [s.name for s in pack.slots], "asked_slot": asked_slot},
    )


def parse(pack: Pack, raw: str) -> list[Proposal]:
    """Proposals from the model's answer; anything malformed is ignored, never guessed at."""
    match = re.search(r"\{.*\}", raw, re.DOTALL)
    try:
        data: Any = json.loads(match.group(0)) if match else {}
    except json.JSONDecodeError:
        return []
    items = data.get("values", []) if isinstance(data, dict) else []
    declared = {s.name for s in pack.slots}
    out: dict[str, Proposal] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        slot, value = item.get("slot"), item.get("value")
        if slot not in declared or not isinstance(value, str) or not value.strip():
            continue
        try:
            confidence = float(item.get("confidence", 0.5))
        except (TypeError, ValueError):
            confidence = 0.5
        confidence = max(0.0, min(confidence, MAX_MODEL_CONFIDENCE))
        out.setdefault(str(slot), Proposal(str(slot), value.strip(), confidence, "customer"))
    return list(out.values())


async def read(
    provider: ModelProvider,
    pack: Pack,
    text: str,
    transcript: list[dict[str, str]],
    asked_slot: str | None,
    calls: list[ModelCall],
) -> list[Proposal]:
    response = await call(provider, prompt_for(pack, text, transcript, asked_slot), calls)
    return parse(pack, response.text)
