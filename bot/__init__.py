"""gatebot: a gated conversational agent for customer conversations.

The core package. It owns the turn loop, packs, the store and the plugin host; it imports no
plugin. Channels, model providers and other integrations arrive through pluggy entry points.
"""

__version__ = "0.1.0"
