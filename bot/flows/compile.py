"""Text-to-flow: the configured model drafts a flow from one sentence; the draft is validated
exactly like an import and saved with ``status: draft`` (a draft never starts) for hand editing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from bot.errors import ConfigError
from bot.extend.provider import ModelCall, ModelProvider, Prompt, call
from bot.flows.load import parse_flow, slug
from bot.flows.model import BUILTIN_MODS, STEP_TYPES, Flow
from bot.packs import Pack

SYSTEM = (
    "You draft a procedure as a JSON object for {company}'s assistant: name (snake_case), title, "
    "description, version 1, trigger {{intents: [...], keywords: [...]}}, steps: each with id "
    "(snake_case), type (one of {types}), prevStepIds, role (one of {roles}), and per type: ask: "
    "slot (one of {slots}); tool_call: tools [one of {tools}] and arguments; router: routes "
    "[{{when: {{path, equals}}, to}}] and default; reply: template; llm_call: prompt. Mods you may "
    "use: {mods}. Answer with the JSON object only."
)


async def compile_flow(
    pack: Pack, provider: ModelProvider, sentence: str, tools: list[str], out_dir: Path
) -> tuple[Flow, Path, list[ModelCall]]:
    """Draft, validate and save. Raises ConfigError for the offline provider, PackErrors for a
    draft that does not validate (nothing is saved then)."""
    if provider.name == "offline":
        raise ConfigError(
            "flows compile needs a language model: the offline provider cannot draft a flow. "
            "Set GATEBOT_MODEL (e.g. anthropic:... or openai:...) and try again"
        )
    system = SYSTEM.format(
        company=pack.company,
        types=", ".join(STEP_TYPES),
        roles=", ".join(sorted(pack.roles)) or "none",
        slots=", ".join(s.name for s in pack.slots),
        tools=", ".join(sorted(tools)) or "none",
        mods=", ".join(sorted({**BUILTIN_MODS, **pack.mods})),
    )
    calls: list[ModelCall] = []
    response = await call(
        provider, Prompt("compile", system, [{"role": "user", "content": sentence}]), calls
    )
    match = re.search(r"\{.*\}", response.text, re.DOTALL)
    data: Any = json.loads(match.group(0)) if match else None
    if isinstance(data, dict):
        data["status"] = "draft"
        data.setdefault("name", slug(sentence))
    label = f"draft:{data.get('name') if isinstance(data, dict) else 'flow'}"
    flow = parse_flow(data, label, None, pack.roles, pack.mods)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{flow.name}.draft.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return flow, path, calls
