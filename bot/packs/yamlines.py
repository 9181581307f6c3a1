"""Moved to :mod:`bot.yamlines` (bot.flows reads YAML with it too, and bot.packs loads flows, so it
lives outside both); kept so plugins that import it from here still work."""

from bot.yamlines import Path, YamlSyntaxError, line_for, load_with_lines

__all__ = ["Path", "YamlSyntaxError", "line_for", "load_with_lines"]
