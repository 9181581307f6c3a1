"""The channel adapter base: how a platform (web widget, Slack, Discord) plugs into the agent."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from bot.extend.host import ChannelHost


class ChannelAdapter(ABC):
    """A platform's receive/send loop. ``start`` begins listening; ``stop`` ends it.

    An adapter is built with the :class:`bot.extend.host.ChannelHost`, never the app. It hands
    each customer message to ``host.handle(...)`` and renders the replies it gets back (text and
    cards) in its platform's idiom. ``send`` delivers a message that did not come from a turn (a
    staff reply relayed from a help desk). A help-desk platform also implements
    :class:`bot.helpdesk.HelpDeskChannel` and sends staff actions to ``host.act(...)``.
    """

    name: str = ""

    def __init__(self, host: ChannelHost) -> None:
        self.host = host

    @property
    def app(self) -> ChannelHost:
        """The host, under the name adapters written before it used (``factory(app)``)."""
        return self.host

    @property
    def configured(self) -> bool:
        """Whether its settings are present. Unconfigured adapters start only when named in
        GATEBOT_CHANNELS (and then say what is missing)."""
        return True

    @abstractmethod
    async def start(self) -> None:
        """Begin receiving messages. Returns once listening."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop receiving and close connections."""

    async def send(self, conversation_id: str, replies: list[dict[str, Any]]) -> None:
        """Deliver replies outside a turn. Adapters whose customers poll may keep the default."""
        self.host.events.publish(conversation_id, {"type": "replies", "replies": replies})
