"""A flow step's texts in the conversation's language.

A step's ``template``, ``question`` and each variant's ``template`` are a string (the pack's
language) or one per language: ``{en: "...", fr: "..."}``. The pack's language is required (it
is the fallback) and every other one is a language the pack has templates for. Each language's
text has the same placeholders as the pack language's: a read-back says the same values, exactly
as stored, whatever language it is worded in. At run time a step is read in the conversation's
language (:func:`in_language`), so every step type words itself from the chosen texts.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from bot.errors import PackError
from bot.flows.model import Flow, Step, Variant

#: A step text in the flow schema: one string, or one per language code.
TEXT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": "^[a-z]{2,3}$"},
            "additionalProperties": {"type": "string", "minLength": 1},
        },
    ]
}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def first_text(value: Any) -> str:
    """What the parser keeps before the pack's language is known: the string, or the mapping's
    first text (:func:`localise` sets the pack language's once it is)."""
    if isinstance(value, dict):
        return str(next(iter(value.values()), ""))
    return str(value or "")


def declared(raw: dict[str, Any]) -> dict[str, dict[str, str]]:
    """A step's per-language texts as declared: field (``template``, ``question``,
    ``variants.N``) -> language -> text."""
    out: dict[str, dict[str, str]] = {}
    for key in ("template", "question"):
        if isinstance(raw.get(key), dict):
            out[key] = dict(raw[key])
    for n, variant in enumerate(raw.get("variants", [])):
        if isinstance(variant.get("template"), dict):
            out[f"variants.{n}"] = dict(variant["template"])
    return out


def localise(flows: dict[str, Flow], pack_language: str, languages: set[str]) -> list[PackError]:
    """Check every step's per-language texts against the pack and make the pack language's
    text each step's own (its fallback)."""
    errors: list[PackError] = []
    for flow in flows.values():
        for step in flow.steps:
            for key, texts in step.texts.items():
                at = f"steps.{step.id}.{key}"
                errors.extend(_check(flow.source, at, texts, pack_language, languages))
                if pack_language in texts:
                    _set(step, key, texts[pack_language])
    return errors


def _check(
    source: str, at: str, texts: dict[str, str], pack_language: str, languages: set[str]
) -> list[PackError]:
    if pack_language not in texts:
        return [PackError(source, None, at, f"no text in the pack's language {pack_language!r}")]
    out: list[PackError] = []
    wanted = sorted(set(_PLACEHOLDER.findall(texts[pack_language])))
    for lang, text in texts.items():
        if lang not in languages:
            known = ", ".join(sorted(languages))
            out.append(
                PackError(source, None, f"{at}.{lang}", f"no templates for {lang!r} ({known})")
            )
        elif sorted(set(_PLACEHOLDER.findall(text))) != wanted:
            said = ", ".join("{" + p + "}" for p in wanted) or "none"
            out.append(
                PackError(
                    source,
                    None,
                    f"{at}.{lang}",
                    f"placeholders differ from the {pack_language!r} text's ({said})",
                )
            )
    return out


def _set(step: Step, key: str, text: str) -> None:
    if key.startswith("variants."):
        n = int(key.removeprefix("variants."))
        step.variants[n] = Variant(text, step.variants[n].when)
    else:
        setattr(step, key, text)


def in_language(step: Step, language: str) -> Step:
    """``step`` with its texts in ``language`` where it declares them (else as it is)."""
    if not step.texts:
        return step
    chosen = {key: texts[language] for key, texts in step.texts.items() if language in texts}
    if not chosen:
        return step
    variants = [
        Variant(chosen.get(f"variants.{n}", v.template), v.when)
        for n, v in enumerate(step.variants)
    ]
    return replace(
        step,
        template=chosen.get("template", step.template),
        question=chosen.get("question", step.question),
        variants=variants,
    )
