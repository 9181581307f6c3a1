"""The move head's training lines, made from a pack.

A move head reads which move a customer message calls for. Its lines come from what the pack
already declares: each intent's examples under the move that intent calls for (a request for a
person under ``handoff``, a no under ``stop``, a demo request under ``propose``), the out-of-scope
keywords under ``decline``, and the playbook's own ``move_examples`` for moves no intent names
(a bare answer to a question under ``ask``, a frustrated line under ``handoff``).

At a turn the head only ever chooses among the moves the playbook made legal (see
:func:`bot.turn.decide.Decision.choose`), so it does not need to know every state's move: it must be
confident only where it overrides the playbook's preference.
"""

from __future__ import annotations

from bot.packs import Pack


def intent_move(pack: Pack, name: str) -> str:
    intent = pack.intent(name)
    if intent is None:
        return pack.default_move
    if intent.outcome and intent.outcome != "stop":
        return "propose"
    return intent.move or pack.default_move


def move_rows(pack: Pack) -> list[tuple[str, str]]:
    """(text, move) lines for ``gatebot heads train --pack PACK --name move``."""
    rows = [(ex, intent_move(pack, i.name)) for i in pack.intents for ex in i.examples]
    for rule in pack.out_of_scope:
        rows += [(f"what about {kw}?", "decline") for kw in rule.keywords]
    for move, examples in pack.move_examples.items():
        rows += [(ex, move) for ex in examples]
    return rows
