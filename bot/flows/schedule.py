"""The deterministic schedule: which step runs when, pass by pass.

Kahn's algorithm over the step DAG with ties broken by step id, where each loop body counts as one
node (keyed by its smallest step id). When a body's turn comes it expands pass by pass: every body
step of pass 1 in its own topological order, then pass 2, and so on up to the loop's cap, so the
passes interleave (B1@1, B2@1, B1@2, B2@2, ...) and nothing after the loop starts before its final
pass. The same flow always yields the same list; the runtime walks it, skipping what a router or a
loop's early end leaves out.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from bot.flows.model import EXIT_LOOP, Flow, Loop, Step


@dataclass(frozen=True)
class Entry:
    step: str
    pass_no: int

    def __str__(self) -> str:
        return f"{self.step}@{self.pass_no}"


class CycleError(ValueError):
    """The steps' dependencies form a cycle that is not a declared loop."""

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps
        super().__init__("a cycle that is not a declared loop runs through " + ", ".join(steps))


def topo_order(steps: list[Step]) -> list[str]:
    """Dependency-free first, ties by id. Raises :class:`CycleError` naming the stuck steps."""
    ids = {s.id for s in steps}
    deps = {s.id: {p for p in s.prev if p in ids} for s in steps}
    return _kahn(deps)


def _kahn(deps: dict[str, set[str]]) -> list[str]:
    waiting = {node: set(d) for node, d in deps.items()}
    ready = [node for node, d in waiting.items() if not d]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for other, d in waiting.items():
            if node in d:
                d.discard(node)
                if not d:
                    heapq.heappush(ready, other)
    if len(order) != len(waiting):
        raise CycleError(sorted(n for n in waiting if n not in order))
    return order


def loop_body(steps: list[Step], loop: Loop) -> list[str]:
    """The steps a loop re-runs: reachable from its target and reaching its source."""
    succ: dict[str, set[str]] = {s.id: set() for s in steps}
    for s in steps:
        for p in s.prev:
            if p in succ:
                succ[p].add(s.id)
    after_target = _reach(loop.target, succ)
    preds = {s.id: set(s.prev) & set(succ) for s in steps}
    before_source = _reach(loop.source, preds)
    return sorted(after_target & before_source)


def _reach(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def schedule(flow: Flow) -> list[Entry]:
    """The full order, every loop expanded to its cap. Raises :class:`CycleError`."""
    node_of: dict[str, str] = {}
    bodies: dict[str, Loop] = {}
    for declared in flow.loops:
        key = min(declared.body)
        bodies[key] = declared
        for step_id in declared.body:
            node_of[step_id] = key
    deps: dict[str, set[str]] = {}
    for step in flow.steps:
        node = node_of.get(step.id, step.id)
        deps.setdefault(node, set())
        deps[node] |= {node_of.get(p, p) for p in step.prev if node_of.get(p, p) != node}
    out: list[Entry] = []
    for node in _kahn(deps):
        loop = bodies.get(node)
        if loop is None:
            out.append(Entry(node, 1))
            continue
        inner = topo_order([flow.step(s) for s in loop.body])
        for pass_no in range(1, loop.max_passes + 1):
            out.extend(Entry(s, pass_no) for s in inner)
    return out


def skip_untaken(
    flow: Flow,
    entries: list[list[Any]],
    router_id: str,
    pass_no: int,
    chosen: Any,
    reopen: bool = False,
) -> None:
    """Mark the pending entries a router's choice leaves out as skipped: its other successors
    (this pass's, inside a loop) and, on an exit, its loop's later passes. Used by the walk after
    the router runs and by a fork at the router, whose checkpoint may predate the marks or hold
    an earlier choice (those marks are undone first: nothing after the router has run there)."""
    loop = flow.loop_of(router_id)
    if reopen:
        later = False
        for e in entries:
            later = later or (e[0] == router_id and e[1] == pass_no)
            if (
                later
                and e[2] == "skipped"
                and (e[0] in flow.successors(router_id) or (loop and e[0] in loop.body))
            ):
                e[2] = "pending"
    for e in entries:
        if e[2] != "pending":
            continue
        if (chosen == EXIT_LOOP and loop and e[0] in loop.body) or (
            e[0] in flow.successors(router_id)
            and e[0] != chosen
            and (loop is None or e[0] not in loop.body or e[1] == pass_no)
        ):
            e[2] = "skipped"
