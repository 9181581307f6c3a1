"""What a help desk needs of channel adapters: the desk side (post, relay, who is a member) and
the customer side (deliver a staff reply), and the one lookup that finds a desk's channel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from bot.errors import GatebotError
from bot.packs.model import HelpDesk
from bot.store import Escalation


class HelpDeskError(GatebotError):
    """A staff action that cannot be done (unknown escalation, not a member, wrong state)."""


class UnknownEscalation(HelpDeskError):
    """No such escalation, or none whose desk is on the platform the action came from."""


class NotAMember(HelpDeskError):
    """The staff member is not on the escalation's help desk."""

    def __init__(self, staff: str, desk: str) -> None:
        super().__init__(f"{staff} is not a member of the {desk} help desk")
        self.staff, self.desk = staff, desk


@runtime_checkable
class HelpDeskChannel(Protocol):
    """What a channel adapter implements to serve as a help desk (Slack, Discord)."""

    async def post_escalation(self, desk: HelpDesk, escalation: Escalation, summary: str) -> str:
        """Post the escalation with Take over / Hand back / Resolve; return the thread's id."""

    async def post_to_thread(self, desk: HelpDesk, thread: str, text: str) -> None:
        """Relay a customer message into the escalation's thread."""

    async def is_member(self, desk: HelpDesk, staff: str) -> bool:
        """Whether ``staff`` belongs to the help desk's channel."""


class CustomerChannel(Protocol):
    """Where a staff reply reaches the customer: every channel adapter's ``send``."""

    async def send(self, conversation_id: str, replies: list[dict[str, Any]]) -> None: ...


def desk_channels(
    channel: Callable[[str], object | None],
) -> Callable[[str], HelpDeskChannel | None]:
    """A desk-channel lookup over a lookup of running channels by name: the channel, when it
    implements the help-desk side, else None."""

    def lookup(name: str) -> HelpDeskChannel | None:
        found = channel(name)
        return found if isinstance(found, HelpDeskChannel) else None

    return lookup
