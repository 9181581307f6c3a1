"""Recorders: where turn records go besides the database (console, memory, JSONL, plugins')."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO


class Recorder(ABC):
    name: str = ""

    @abstractmethod
    async def record(self, turn: Mapping[str, Any]) -> None:
        """Receive one complete turn record, after it is stored."""


class MemoryRecorder(Recorder):
    """Collects records in a list; for tests."""

    name = "memory"

    def __init__(self) -> None:
        self.turns: list[Mapping[str, Any]] = []

    async def record(self, turn: Mapping[str, Any]) -> None:
        self.turns.append(turn)


class JsonlRecorder(Recorder):
    """Appends one JSON line per turn to a file."""

    name = "jsonl"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    async def record(self, turn: Mapping[str, Any]) -> None:
        line = json.dumps(turn, ensure_ascii=False, sort_keys=True) + "\n"
        await asyncio.to_thread(self._append, line)

    def _append(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)


def erase_lines(path: str | Path, conversation_ids: set[str]) -> int:
    """Rewrite a JSONL record file without the lines of these conversations; the number removed.
    The new file replaces the old in one rename; lines a running bot appends meanwhile are
    carried over (filtered the same way) before the rename."""
    path = Path(path)
    if not path.exists() or not conversation_ids:
        return 0
    tmp = path.with_name(path.name + ".erasing")
    removed = 0
    with path.open("rb") as src, tmp.open("wb") as dst:
        while True:
            line = src.readline()
            if not line:
                # Caught up: anything appended since is read on the next pass, or none came.
                if src.tell() >= path.stat().st_size:
                    break
                continue
            if _conversation_of(line) in conversation_ids:
                removed += 1
            else:
                dst.write(line)
    os.replace(tmp, path)
    return removed


def _conversation_of(line: bytes) -> str | None:
    try:
        value = json.loads(line).get("conversation_id")
    except (ValueError, AttributeError):
        return None  # not a record (a torn last line): kept as it was
    return value if isinstance(value, str) else None


def summarise(turn: Mapping[str, Any]) -> str:
    """One line per decision, for people reading a console or `gatebot chat`."""
    reads = ", ".join(
        f"{r['head']}={r['answer']}@{r['confidence']:.2f}->{r['outcome']}" for r in turn["reads"]
    )
    values = ", ".join(
        f"{v['slot']}={v['value']!r}"
        if v["outcome"] == "act"
        else f"{v['slot']} rejected ({'; '.join(r['reason'] for r in v['rejected'])})"
        for v in turn["values"]
    )
    facts = ", ".join(f["key"] for f in turn["facts"])
    gate = turn["reply"]["gate"]
    lines = [
        f"  scope   {turn['scope']['verdict']} ({turn['scope']['rule']})",
        f"  reads   {reads or '-'}",
        f"  values  {values or '-'}",
        f"  legal   {turn['legal']['moves']} ({turn['legal']['rule']})",
        f"  move    {turn['move']['name']}: {turn['move']['why']}"
        + ("  [escalate]" if turn["move"]["escalate"] else ""),
        f"  facts   {facts or '-'}",
        f"  gate    {'-' if gate['passed'] is None else 'passed' if gate['passed'] else 'refused'}"
        + (f" ({'; '.join(gate['reasons'])})" if gate["reasons"] else "")
        + f", attempts {turn['reply']['attempts']}",
        f"  models  {len(turn['model_calls'])} call(s), {turn['timings']['total_ms']:.1f} ms",
    ]
    return "\n".join(lines)


class ConsoleRecorder(Recorder):
    """Prints each turn's decisions to a stream (stderr by default)."""

    name = "console"

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    async def record(self, turn: Mapping[str, Any]) -> None:
        print(f"turn {turn['conversation_id'][:8]}#{turn['seq']}", file=self.stream)
        print(summarise(turn), file=self.stream, flush=True)
