"""What a plugin implements: one small base class per extension point.

Plugins import these names from here (the modules below are also importable directly):
``ChannelAdapter`` (a channel, built with a ``ChannelHost``), ``ModelProvider`` with
``Prompt``/``Response``/``ToolCall`` (a model provider), ``Tool`` with ``ToolRunner`` (a tool),
``Retriever`` with ``Fact`` (knowledge search), ``EmailTransport`` (email), ``Recorder`` (where
turn records go).
"""

from bot.extend.channel import ChannelAdapter
from bot.extend.email import EmailNotConfigured, EmailTransport, NoEmail
from bot.extend.host import ChannelHost
from bot.extend.provider import ModelProvider, Prompt, Response, ToolCall
from bot.extend.recorder import Recorder
from bot.extend.retriever import Fact, Retriever
from bot.extend.tool import Tool, ToolError, ToolOutcome, ToolRegistry, ToolRunner

__all__ = [
    "ChannelAdapter",
    "ChannelHost",
    "EmailNotConfigured",
    "EmailTransport",
    "Fact",
    "ModelProvider",
    "NoEmail",
    "Prompt",
    "Recorder",
    "Response",
    "Retriever",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolOutcome",
    "ToolRegistry",
    "ToolRunner",
]
