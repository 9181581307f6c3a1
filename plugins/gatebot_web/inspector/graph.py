"""A flow run as a graph: the flow file's DAG as SVG (columns by depth), the steps the run took
highlighted, each taken step a link to its checkpoint; below it the checkpoints, each with
rewind and fork controls (inspector.js sends them)."""

from __future__ import annotations

from typing import Any

from bot.flows.model import Flow
from bot.store import FlowCheckpoint, FlowRun
from gatebot_web.inspector.html import esc, pretty, url, when

COL_W, ROW_H, NODE_W, NODE_H, PAD = 170, 56, 140, 34, 12


def _depths(flow: Flow) -> dict[str, int]:
    """Each step's column: the longest chain of ``prev`` before it (loops are back edges)."""
    ids = {s.id for s in flow.steps}
    prev = {s.id: [p for p in s.prev if p in ids] for s in flow.steps}
    depth: dict[str, int] = {}

    def walk(step: str, seen: frozenset[str]) -> int:
        if step not in depth:
            parents = [p for p in prev[step] if p not in seen]
            depth[step] = 1 + max((walk(p, seen | {step}) for p in parents), default=-1)
        return depth[step]

    for s in flow.steps:
        walk(s.id, frozenset())
    return depth


def _layout(flow: Flow) -> dict[str, tuple[int, int]]:
    depth = _depths(flow)
    rows: dict[int, int] = {}
    where: dict[str, tuple[int, int]] = {}
    for step in sorted(flow.steps, key=lambda s: (depth[s.id], s.id)):
        row = rows.get(depth[step.id], 0)
        rows[depth[step.id]] = row + 1
        where[step.id] = (PAD + depth[step.id] * COL_W, PAD + row * ROW_H)
    return where


def svg(flow: Flow, checkpoints: list[FlowCheckpoint]) -> str:
    where = _layout(flow)
    last_cp = {cp.step_id: cp.idx for cp in checkpoints}
    edges: list[str] = []
    for step in flow.steps:
        x2, y2 = where[step.id]
        for p in step.prev:
            if p in where:
                x1, y1 = where[p]
                taken = "taken" if p in last_cp and step.id in last_cp else ""
                edges.append(
                    f'<line class="edge {taken}" x1="{x1 + NODE_W}" y1="{y1 + NODE_H // 2}" '
                    f'x2="{x2}" y2="{y2 + NODE_H // 2}"/>'
                )
    for loop in flow.loops:
        if loop.source in where and loop.target in where:
            (x1, y1), (x2, y2) = where[loop.source], where[loop.target]
            edges.append(
                f'<path class="edge loop" d="M{x1 + NODE_W // 2},{y1 + NODE_H} '
                f"C{x1 + NODE_W // 2},{y1 + NODE_H + 40} {x2 + NODE_W // 2},{y2 + NODE_H + 40} "
                f'{x2 + NODE_W // 2},{y2 + NODE_H}"/>'
            )
    nodes = [_node(step.id, step.type, where[step.id], last_cp.get(step.id)) for step in flow.steps]
    width = max((x for x, _ in where.values()), default=0) + NODE_W + PAD
    height = max((y for _, y in where.values()), default=0) + NODE_H + PAD + 40
    return (
        f'<svg class="flowgraph" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="flow steps">'
        f"{''.join(edges)}{''.join(nodes)}</svg>"
    )


def _node(step_id: str, kind: str, at: tuple[int, int], cp: int | None) -> str:
    x, y = at
    css = "node taken" if cp is not None else "node"
    box = (
        f'<g class="{css}" data-step="{esc(step_id)}"><rect x="{x}" y="{y}" width="{NODE_W}" '
        f'height="{NODE_H}" rx="6"/><text x="{x + 8}" y="{y + 15}">{esc(step_id)}</text>'
        f'<text class="kind" x="{x + 8}" y="{y + 28}">{esc(kind)}</text></g>'
    )
    return f'<a href="#cp-{cp}">{box}</a>' if cp is not None else box


def checkpoint_panel(run: FlowRun, cp: FlowCheckpoint) -> str:
    edited = ' <span class="badge refused">edited</span>' if cp.edited else ""
    return f"""<details class="checkpoint" id="cp-{cp.idx}" data-index="{cp.idx}">
<summary>#{cp.idx} {esc(cp.step_id)} (pass {cp.pass_no}){edited}
<span class="why">{esc(cp.model or "")} {when(cp.created_at)}</span></summary>
<div class="cols"><div><h4>Input</h4><pre>{pretty(cp.input)}</pre></div>
<div><h4>Output</h4><pre>{pretty(cp.output)}</pre></div></div>
<div class="actions" data-run="{esc(run.id)}" data-index="{cp.idx}">
<button type="button" data-action="rewind">Rewind to here</button>
<label>Output for the fork <textarea name="output" rows="6">{pretty(cp.output)}</textarea></label>
<label><input type="checkbox" name="allow_side_effects"> let tools that change things really run
</label>
<button type="button" data-action="fork">Fork from here</button>
<pre class="result" hidden></pre></div>
</details>"""


def run_page_body(run: FlowRun, flow: Flow | None, checkpoints: list[FlowCheckpoint]) -> str:
    parent = (
        f' · forked from <a href="{url("/inspector/runs", run.parent_run_id)}">'
        f"{esc(run.parent_run_id)}</a> at #{esc(run.fork_index)}"
        if run.parent_run_id
        else ""
    )
    conv = (
        f' · <a href="{url("/inspector/conversations", run.conversation_id)}">conversation</a>'
        if run.conversation_id
        else ""
    )
    dry = "" if run.allow_side_effects else ' <span class="badge unsure">side effects dry</span>'
    graph = svg(flow, checkpoints) if flow else "<p class='error'>the pack has no such flow</p>"
    if flow and flow.version != run.flow_version:
        graph = (
            f"<p class='error'>the graph is the pack's v{esc(flow.version)} of the flow; this run "
            f"ran v{esc(run.flow_version)}</p>{graph}"
        )
    panels = "".join(checkpoint_panel(run, cp) for cp in checkpoints)
    return (
        f"<h1>Flow run {esc(run.id)}</h1><p>{esc(run.flow)} v{esc(run.flow_version)} · "
        f"<b>{esc(run.status)}</b>{dry}{parent}{conv}</p>{graph}"
        f"<h2>Checkpoints</h2>{panels or '<p>none yet</p>'}"
    )


def runs_table(runs: list[FlowRun]) -> str:
    rows = "".join(
        f'<tr><td><a href="{url("/inspector/runs", r.id)}">{esc(r.id)}</a></td>'
        f"<td>{esc(r.flow)}</td><td>{esc(r.status)}</td><td>{esc(r.parent_run_id)}</td>"
        f"<td>{when(r.created_at)}</td></tr>"
        for r in runs
    )
    head = "<tr><th>run</th><th>flow</th><th>status</th><th>forked from</th><th>started</th></tr>"
    return f'<table class="list">{head}{rows}</table>'


def run_links(runs: list[Any]) -> str:
    return ", ".join(f'<a href="{url("/inspector/runs", r.id)}">{esc(r.flow)}</a>' for r in runs)
