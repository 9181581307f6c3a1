"""``gatebot data export|erase``: everything held about one customer, as JSON, or gone.

A customer is named by a conversation id or by ``--email`` (every conversation whose messages,
state or thread mention that address). Erasing removes the database rows (see
:mod:`bot.store.customer`), rewrites the JSONL record file without their turns, and records the
erasure: when, which conversation ids, how many rows of each kind; never the content or the email.
"""

from __future__ import annotations

import click

from bot.cli.output import echo_json
from bot.config import Settings
from bot.extend.recorder import erase_lines
from bot.store import Store


def _open() -> tuple[Settings, Store]:
    settings = Settings.from_env()
    store = Store(settings.database_url)
    store.migrate()
    return settings, store


def _select(store: Store, conversation: str | None, email: str | None) -> tuple[list[str], str]:
    """The conversation ids asked for, and which selector named them."""
    if (conversation is None) == (email is None):
        raise click.UsageError("give a CONVERSATION_ID or --email, one of the two")
    if email is not None:
        return store.conversations_of(email), "email"
    assert conversation is not None
    if store.get_conversation(conversation) is None:
        raise click.ClickException(f"no conversation {conversation!r}")
    return [conversation], "conversation"


_EMAIL_HELP = "Every conversation whose messages, state or thread mention this address."


@click.group("data")
def command() -> None:
    """A customer's data: export it as JSON, or erase it."""


@command.command("export")
@click.argument("conversation", metavar="[CONVERSATION_ID]", required=False)
@click.option("--email", default=None, help=_EMAIL_HELP)
def export(conversation: str | None, email: str | None) -> None:
    """Print JSON of everything held about a customer: conversations, messages, turns, flow runs
    and checkpoints, escalations, staff relays."""
    _settings, store = _open()
    try:
        ids, selector = _select(store, conversation, email)
        echo_json({"selector": selector, "conversations": store.export_customer(ids)})
    finally:
        store.close()


@command.command("erase")
@click.argument("conversation", metavar="[CONVERSATION_ID]", required=False)
@click.option("--email", default=None, help=_EMAIL_HELP)
@click.option("--yes", is_flag=True, help="Erase without asking first.")
def erase(conversation: str | None, email: str | None, yes: bool) -> None:
    """Delete everything held about a customer, remove their lines from the JSONL record file,
    and record the erasure (ids and counts only). Prints the counts as JSON."""
    settings, store = _open()
    try:
        ids, selector = _select(store, conversation, email)
        if ids and not yes:
            click.confirm(f"erase {len(ids)} conversation(s)?", abort=True, err=True)
        lines = erase_lines(settings.jsonl_path, set(ids))
        counts = store.erase_customer(ids, selector, {"jsonl_lines": lines})
        echo_json({"selector": selector, "conversations": ids, "erased": counts})
    finally:
        store.close()
