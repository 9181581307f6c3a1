"""YAML loading that remembers the line of every value, so errors can point at them."""

from __future__ import annotations

from typing import Any

import yaml

Path = tuple[str | int, ...]


class YamlSyntaxError(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message)


def load_with_lines(text: str) -> tuple[Any, dict[Path, int]]:
    """Parse ``text``; return the data and a map from each value's path to its 1-based line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlSyntaxError(line, f"invalid YAML: {problem}") from exc
    lines: dict[Path, int] = {}
    if node is None:
        return None, lines
    return _convert(node, (), lines), lines


def _convert(node: yaml.Node, path: Path, lines: dict[Path, int]) -> Any:
    # A mapping value keeps its key's line: "field: bad" reads best pointing at the key.
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            lines[(*path, str(key))] = key_node.start_mark.line + 1
            out[key] = _convert(value_node, (*path, str(key)), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), lines) for i, item in enumerate(node.value)]
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
