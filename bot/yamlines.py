"""YAML loading that remembers the line of every value, so errors can point at them.

A pack is untrusted input, so loading is bounded: a file over :data:`MAX_CHARS` characters, more
than :data:`MAX_ALIASES` aliases (an alias bomb expands a few lines into billions of values),
more than :data:`MAX_VALUES` values once aliases are expanded, or nesting deeper than the parser
can follow is a :class:`YamlSyntaxError` saying so, raised before any of it is built.
"""

from __future__ import annotations

from typing import Any

import yaml

Path = tuple[str | int, ...]

MAX_CHARS = 2_000_000
MAX_ALIASES = 50
MAX_VALUES = 200_000


class YamlSyntaxError(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message)


class _CountingLoader(yaml.SafeLoader):
    """The safe loader, counting the aliases it composes and refusing past the limit."""

    aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise YamlSyntaxError(
                    mark.line + 1, f"more than {MAX_ALIASES} aliases (&/*); refused unexpanded"
                )
        return super().compose_node(parent, index)


def load_with_lines(text: str) -> tuple[Any, dict[Path, int]]:
    """Parse ``text``; return the data and a map from each value's path to its 1-based line."""
    if len(text) > MAX_CHARS:
        raise YamlSyntaxError(
            None, f"file has {len(text):,} characters; the limit is {MAX_CHARS:,}"
        )
    loader = _CountingLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlSyntaxError(line, f"invalid YAML: {problem}") from exc
    except RecursionError:
        raise YamlSyntaxError(None, "invalid YAML: nested too deeply") from None
    finally:
        loader.dispose()
    lines: dict[Path, int] = {}
    if node is None:
        return None, lines
    try:
        return _convert(node, (), lines, [0]), lines
    except RecursionError:
        raise YamlSyntaxError(None, "invalid YAML: nested too deeply") from None


def _convert(node: yaml.Node, path: Path, lines: dict[Path, int], count: list[int]) -> Any:
    # ``count`` is shared by the whole walk: aliases make a graph of a tree, and walking it
    # expands them, so the walk stops once it has built more values than any pack needs.
    count[0] += 1
    if count[0] > MAX_VALUES:
        raise YamlSyntaxError(
            node.start_mark.line + 1, f"more than {MAX_VALUES:,} values once aliases are expanded"
        )
    # A mapping value keeps its key's line: "field: bad" reads best pointing at the key.
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            lines[(*path, str(key))] = key_node.start_mark.line + 1
            out[key] = _convert(value_node, (*path, str(key)), lines, count)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), lines, count) for i, item in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    """Construct a scalar the way yaml.safe_load would (so `yes` stays a bool, `1` an int)."""
    return yaml.SafeLoader("").construct_object(node)


def line_for(lines: dict[Path, int], path: Path) -> int | None:
    """The line of ``path``, or of its nearest ancestor that has one."""
    while True:
        if path in lines:
            return lines[path]
        if not path:
            return None
        path = path[:-1]
