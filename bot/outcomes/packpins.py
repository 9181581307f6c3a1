"""Rewriting one head's pin in ``pack.yaml`` in place: only the lines of that pin change, so the
pack's comments and layout stay as their author wrote them.

A pin is written in block style (``heads:`` / ``  intent:`` / ``    path: ...``), as the sample
pack and ``gatebot heads train --pack`` write it; a pin in flow style (``intent: {path: ...}``) is
refused with a message saying so rather than rewritten.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.outcomes import OutcomeError

_KEY = re.compile(r"^(\s*)([A-Za-z0-9_.-]+):\s*(.*?)\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _value_line(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _block(lines: list[str], start: int, parent: int) -> int:
    """The index after the block of lines below ``start`` indented deeper than ``parent``."""
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and not line.lstrip().startswith("#") and _indent(line) <= parent:
            break
        end += 1
    return end


def _find(lines: list[str], lo: int, hi: int, key: str, indent: int | None) -> int | None:
    for i in range(lo, hi):
        m = _KEY.match(lines[i])
        if m and m.group(2) == key and (indent is None or len(m.group(1)) == indent):
            return i
    return None


def set_pin(pack_yaml: Path, name: str, fields: dict[str, str | None]) -> None:
    """Set (or, for a None value, remove) fields of ``heads.NAME`` in ``pack_yaml``."""
    lines = pack_yaml.read_text(encoding="utf-8").splitlines()
    heads = _find(lines, 0, len(lines), "heads", 0)
    if heads is None:
        raise OutcomeError(f"{pack_yaml}: no heads: section to pin {name} in")
    end = _block(lines, heads, 0)
    pin = _find(lines, heads + 1, end, name, None)
    if pin is None:
        raise OutcomeError(f"{pack_yaml}: heads has no {name} pin (pin the head first)")
    m = _KEY.match(lines[pin])
    if m and m.group(3) and not m.group(3).startswith("#"):
        raise OutcomeError(f"{pack_yaml}:{pin + 1}: write the {name} pin in block style to edit it")
    parent = _indent(lines[pin])
    pin_end = _block(lines, pin, parent)
    child = next((_indent(x) for x in lines[pin + 1 : pin_end] if x.strip()), parent + 2)
    for key, value in fields.items():
        at = _find(lines, pin + 1, pin_end, key, child)
        if value is None:
            if at is not None:
                del lines[at]
                pin_end -= 1
            continue
        text = f"{' ' * child}{key}: {value}"
        if at is None:
            own = (i for i in range(pin + 1, pin_end) if _value_line(lines[i]))
            last = max(own, default=pin)  # before any comment that heads the next pin
            lines.insert(last + 1, text)
            pin_end += 1
        else:
            lines[at] = text
    pack_yaml.write_text("\n".join(lines) + "\n", encoding="utf-8")
