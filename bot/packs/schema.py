"""JSON schemas for each pack file. Unknown keys are errors: a typo must not pass silently."""

from __future__ import annotations

from typing import Any

from bot.packs import context, data

MOVES = [
    "acknowledge",
    "answer",
    "ask",
    "clarify",
    "confirm",
    "propose",
    "ask_signup",
    "handoff",
    "stop",
    "decline",
]
OUTCOMES = ["trial", "demo", "engineer", "later", "stop"]
SLOT_TYPES = ["text", "email", "phone", "number", "date", "order_id"]
#: Why a conversation goes to a person; a help desk can take some kinds and not others.
ESCALATION_KINDS = ["asked", "refused", "unsure", "preflight", "lead"]
#: ``readBackAt`` is the other way round: a self-check's P(wrong) at or above it reads back.
GATES = [
    "intent",
    "value",
    "yesNo",
    "confirm",
    "policy",
    "repeat",
    "sentiment",
    "readBackAt",
    "clarifyFloor",
    "answerable",
    "flowExample",
]
#: Templates the deterministic moves need; every pack language must define them.
REQUIRED_TEMPLATES = ["greeting", "decline", "handoff", "stop", "fallback", "no_answer", "queued"]

_str = {"type": "string", "minLength": 1}
_str_list = {"type": "array", "items": _str}
_key = {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


#: The questions pre-flight answers before a turn (bot.preflight); each has its own threshold.
PREFLIGHT_QUESTIONS = [
    "flow",
    "faq",
    "person",
    "helpdesk",
    "reasoning",
    "frustration",
    "language",
]
REASONING_LEVELS = ["low", "medium", "high"]
_share = {"type": "number", "minimum": 0, "maximum": 1}
PREFLIGHT = _obj(
    {
        "thresholds": {
            "type": "object",
            "propertyNames": {"enum": PREFLIGHT_QUESTIONS},
            "additionalProperties": _share,
        },
        # Which help desk a request for a person goes to, by what the message is about.
        "helpdesks": {
            "type": "object",
            "additionalProperties": _obj({"intents": _str_list, "topics": _str_list}, []),
        },
        # Knowledge-search steps a turn may take at each reasoning level.
        "search_steps": {
            "type": "object",
            "propertyNames": {"enum": REASONING_LEVELS},
            "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 16},
        },
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 60},
    },
    [],
)

PACK = _obj(
    {
        "name": _key,
        "version": {"type": ["string", "number"]},
        "company": _str,
        "description": {"type": "string"},
        "language": {"type": "string", "pattern": "^[a-z]{2}$"},
        "products": {
            "type": "array",
            "minItems": 1,
            "items": _obj(
                {
                    "key": _key,
                    "name": _str,
                    "description": {"type": "string"},
                    "keywords": _str_list,
                },
                ["key", "name", "keywords"],
            ),
        },
        "scope": _obj(
            {
                "topics": {
                    "type": "array",
                    "items": _obj({"key": _key, "keywords": _str_list}, ["key", "keywords"]),
                },
                "out_of_scope": {
                    "type": "array",
                    "items": _obj(
                        {
                            "key": _key,
                            "keywords": _str_list,
                            "template": _str,
                            "despite_topics": {"type": "boolean"},
                            "despite_product_words": _str_list,
                        },
                        ["key", "keywords"],
                    ),
                },
            },
            ["topics"],
        ),
        "excluded_names": _str_list,
        # Commercial terms the company stands behind ("14-day free trial"): the only offers the
        # reply gate lets a draft repeat (a document or FAQ answer never lends one).
        "offers": _str_list,
        "heads": {
            "type": "object",
            "additionalProperties": _obj(
                # candidate: a head read beside the pinned one, never acting (a shadow)
                {"path": _str, "version": _str, "candidate": _str, "candidate_version": _str},
                ["path", "version"],
            ),
        },
        "booking": _obj(
            {"enabled": {"type": "boolean"}, "url": _str, "contact": _str}, ["enabled", "contact"]
        ),
        "preflight": PREFLIGHT,
    },
    ["name", "company", "products", "scope"],
)

INTENTS = _obj(
    {
        "intents": {
            "type": "array",
            "minItems": 1,
            "items": _obj(
                {
                    "name": _key,
                    "description": {"type": "string"},
                    "keywords": _str_list,
                    "examples": {"type": "array", "items": _str, "minItems": 1},
                    "move": {"enum": MOVES},
                    "outcome": {"enum": OUTCOMES},
                    "needs": _str_list,
                    "template": _key,
                },
                ["name", "examples"],
            ),
        }
    },
    ["intents"],
)

PLAYBOOK = _obj(
    {
        "default_move": {"enum": MOVES},
        "signup_cooldown_turns": {"type": "integer", "minimum": 0},
        "low_sentiment": {"type": "number", "minimum": -1, "maximum": 1},
        # Customer lines per move, for training the move head beside the intents' examples.
        "move_examples": {
            "type": "object",
            "propertyNames": {"enum": MOVES},
            "additionalProperties": _str_list,
        },
        "slots": {
            "type": "array",
            "items": _obj(
                {
                    "name": _key,
                    "label": _str,
                    "type": {"enum": SLOT_TYPES},
                    "question": _str,
                    "alternative": _key,
                },
                ["name", "question"],
            ),
        },
        "outcomes": {
            "type": "array",
            "items": _obj(
                {
                    "outcome": {"enum": OUTCOMES},
                    "when_intent": _str_list,
                    "needs": _str_list,
                    "reason": _str,
                },
                ["outcome", "reason"],
            ),
        },
        "templates": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                "^[a-z]{2}$": {"type": "object", "additionalProperties": _str},
            },
            "additionalProperties": False,
        },
    },
    ["default_move", "templates"],
)

GATES_FILE = {
    "type": "object",
    "properties": {g: {"type": "number", "minimum": 0, "maximum": 1} for g in GATES},
    "additionalProperties": False,
}

FAQ = _obj(
    {
        "faq": {
            "type": "array",
            "items": _obj(
                {
                    "key": _key,
                    "question": _str,
                    "answer": _str,
                    "keywords": _str_list,
                    "asked": _str_list,
                },
                ["key", "question", "answer"],
            ),
        }
    },
    ["faq"],
)

HELPDESKS = _obj(
    {
        "helpdesks": {
            "type": "array",
            "minItems": 1,
            "items": _obj(
                {
                    "name": _key,
                    "channel": {"enum": ["slack", "discord", "email"]},
                    "target": _str,
                    "email": _str,
                    "default": {"type": "boolean"},
                    "description": {"type": "string"},
                    "reasons": {"type": "array", "items": {"enum": ESCALATION_KINDS}},
                    "email_after_minutes": {"type": "number", "exclusiveMinimum": 0},
                    # When people answer, as the customer reads it: one line, or one per
                    # language code (said in a waiting hand-off's message).
                    "hours": {
                        "oneOf": [
                            _str,
                            {
                                "type": "object",
                                "propertyNames": {"pattern": "^[a-z]{2}$"},
                                "additionalProperties": _str,
                            },
                        ]
                    },
                },
                ["name", "channel", "target"],
            ),
        }
    },
    ["helpdesks"],
)

DOC_FRONT_MATTER = _obj(
    {
        "key": _key,
        "title": _str,
        "tags": _str_list,
        # section heading -> the ways customers ask what that section answers
        "asked": {"type": "object", "additionalProperties": _str_list},
    },
    ["key", "title"],
)

#: file name -> (schema, required?)
FILES: dict[str, tuple[dict[str, Any], bool]] = {
    "pack.yaml": (PACK, True),
    "intents.yaml": (INTENTS, True),
    "playbook.yaml": (PLAYBOOK, True),
    "gates.yaml": (GATES_FILE, False),
    "faq.yaml": (FAQ, False),
    "helpdesks.yaml": (HELPDESKS, False),
    "context.yaml": (context.SCHEMA, False),
    "data.yaml": (data.SCHEMA, False),
}
