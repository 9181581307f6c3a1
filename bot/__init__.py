"""gatebot: a gated conversational agent for customer conversations.

The core package. It owns the turn loop, packs, the store and the plugin host; it imports no
plugin. Channels, model providers and other integrations arrive through pluggy entry points.

The layout follows the turn: ``bot.turn`` holds its stages in the order they run, ``bot.extend``
what a plugin implements, and ``flows``, ``preflight``, ``heads``, ``packs``, ``store``,
``helpdesk`` and ``cli`` the subsystems beside it.
"""

from bot import _moved

__version__ = "0.1.0"

_moved.install()
