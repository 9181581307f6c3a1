"""Shape a prompt's transcript so every chat API accepts it.

The agent hands over the last 20 messages, so the window can open on an assistant line, and a
customer who writes twice in a row leaves two user lines. The Messages API rejects empty text, and
many chat templates behind OpenAI-compatible servers (Mistral's, Llama's) refuse anything but
user/assistant alternation starting with the user, so one normal form serves both providers.
"""

from __future__ import annotations

from collections.abc import Iterable


def alternating(messages: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """User/assistant turns that alternate, start with the user and carry no empty text.

    Any role other than ``assistant`` counts as the user's (the agent only writes ``user`` and
    ``assistant``); consecutive lines of one role are joined with a blank line, so nothing the
    customer wrote is dropped. Leading assistant lines are dropped: they are what the 20-message
    window cut in half, and the system prompt already carries the facts.
    """
    out: list[dict[str, str]] = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = (message.get("content") or "").strip()
        if not content or (not out and role == "assistant"):
            continue
        if out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": out[-1]["content"] + "\n\n" + content}
        else:
            out.append({"role": role, "content": content})
    return out
