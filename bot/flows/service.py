"""Staff operations on runs, shared by the CLI and the staff REST API: list, inspect, rewind
(find what a completed step saw and produced) and fork (a new run from a checkpoint, its output
edited by hand, the original untouched)."""

from __future__ import annotations

import json
from typing import Any

from bot.errors import GatebotError
from bot.flows.load import export_flow
from bot.flows.model import Flow
from bot.flows.schedule import schedule, skip_untaken
from bot.packs import Pack
from bot.store import FlowCheckpoint, FlowRun, Store


class FlowOpError(GatebotError):
    """A staff request that names no run, step or checkpoint that exists."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


def describe_flow(flow: Flow, disabled: str | None = None) -> dict[str, Any]:
    return {
        "name": flow.name,
        "title": flow.title,
        "description": flow.description,
        "tags": flow.tags,
        "author": flow.author,
        "version": flow.version,
        "status": "disabled" if disabled else flow.status,
        "disabled": disabled,
        "trigger": {
            "intents": flow.trigger.intents,
            "keywords": flow.trigger.keywords,
            "examples": flow.trigger.examples,
        },
        "schedule": [str(e) for e in schedule(flow)],
    }


def show_flow(flow: Flow, disabled: str | None = None) -> dict[str, Any]:
    return {**describe_flow(flow, disabled), "definition": export_flow(flow)}


def run_json(run: FlowRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "conversation_id": run.conversation_id,
        "flow": run.flow,
        "flow_version": run.flow_version,
        "status": run.status,
        "parent_run_id": run.parent_run_id,
        "fork_index": run.fork_index,
        "allow_side_effects": run.allow_side_effects,
        "schedule": run.schedule,
        "created_at": run.created_at.isoformat(),
    }


def checkpoint_json(cp: FlowCheckpoint) -> dict[str, Any]:
    return {
        "index": cp.idx,
        "step": cp.step_id,
        "pass": cp.pass_no,
        "input": cp.input,
        "output": cp.output,
        "model": cp.model,
        "progress": cp.progress,
        "edited": cp.edited,
        "created_at": cp.created_at.isoformat(),
    }


def _run(store: Store, run_id: str) -> FlowRun:
    run = store.get_flow_run(run_id)
    if run is None:
        raise FlowOpError(f"no flow run {run_id!r}")
    return run


def rewind(
    store: Store, run_id: str, at_step: str | None = None, at_checkpoint: int | None = None
) -> FlowCheckpoint:
    """The checkpoint of a completed step (its latest pass), or by index. Changes nothing."""
    _run(store, run_id)
    cps = store.checkpoints(run_id)
    if at_checkpoint is not None:
        found = next((c for c in cps if c.idx == at_checkpoint), None)
    elif at_step is not None:
        found = next((c for c in reversed(cps) if c.step_id == at_step), None)
    else:
        raise FlowOpError("say where to rewind to: a step or a checkpoint index", 400)
    if found is None:
        where = f"step {at_step!r}" if at_step is not None else f"checkpoint {at_checkpoint}"
        raise FlowOpError(f"run {run_id} has no completed {where}")
    return found


def fork(
    store: Store,
    pack: Pack,
    run_id: str,
    *,
    at_step: str | None = None,
    at_checkpoint: int | None = None,
    output: dict[str, Any] | None = None,
    allow_side_effects: bool = False,
    activate: bool = True,
) -> tuple[FlowRun, list[FlowCheckpoint]]:
    """A new run that starts where the original stood after that checkpoint, with its output
    replaced by ``output`` when given. The original's checkpoints are only read. The fork's own
    checkpoints begin as copies up to the fork point. With ``activate`` the conversation continues
    on the fork with its next message. Changes tools run dry on it unless
    ``allow_side_effects``."""
    parent = _run(store, run_id)
    at = rewind(store, run_id, at_step, at_checkpoint)
    flow = pack.flows.get(parent.flow)
    if flow is None:
        raise FlowOpError(f"the pack has no flow {parent.flow!r} any more", 409)
    if output is not None and not isinstance(output, dict):
        raise FlowOpError("output must be a JSON object", 400)
    run = store.create_flow_run(
        parent.conversation_id,
        parent.flow,
        parent.flow_version,
        [str(e) for e in schedule(flow)],
        parent_run_id=parent.id,
        fork_index=at.idx,
        allow_side_effects=allow_side_effects,
    )
    copies, progress = _copy_checkpoints(store, flow, parent, run, at.idx, output)
    if activate and parent.conversation_id:
        _activate(store, parent, progress)
    return run, copies


def _copy_checkpoints(
    store: Store,
    flow: Flow,
    parent: FlowRun,
    run: FlowRun,
    at: int,
    output: dict[str, Any] | None,
) -> tuple[list[FlowCheckpoint], dict[str, Any]]:
    """The fork's own checkpoints, copies of the parent's up to ``at`` (that one's output
    replaced when ``output`` is given), and the progress the fork stands at."""
    copies: list[FlowCheckpoint] = []
    progress: dict[str, Any] = {}
    for cp in store.checkpoints(parent.id):
        if cp.idx > at:
            break
        progress = json.loads(json.dumps(cp.progress))
        edited = cp.idx == at and output is not None
        out = output if edited and output is not None else cp.output
        progress["run"] = run.id
        progress["allow_side_effects"] = run.allow_side_effects
        progress["waiting"] = None
        if edited and output is not None:
            progress["outputs"][cp.step_id] = output
            _refill(flow, cp.step_id, output, progress)
        if cp.idx == at and flow.step(cp.step_id).type == "router":
            # The router's checkpoint was taken before its choice skipped the branches not
            # taken; without this the fork would run both branches on its next message.
            skip_untaken(
                flow, progress["entries"], cp.step_id, cp.pass_no, out.get("route"), reopen=True
            )
        copies.append(
            store.add_checkpoint(
                run.id, cp.idx, cp.step_id, cp.pass_no, cp.input, out, cp.model, progress, edited
            )
        )
    return copies, progress


def _activate(store: Store, parent: FlowRun, progress: dict[str, Any]) -> None:
    """The conversation carries on on the fork with its next message."""
    conv = store.get_conversation(parent.conversation_id or "")
    if conv is None:
        return
    state = dict(conv.state)
    state["values"] = progress.pop("values", state.get("values", {}))
    state["flow"] = progress
    store.update_conversation(conv.id, state=state)
    if parent.status == "active":
        store.set_flow_run_status(parent.id, "forked")


def _refill(flow: Flow, step_id: str, output: dict[str, Any], progress: dict[str, Any]) -> None:
    """Values a tool step filled follow its edited output (still marked as from the system)."""
    step = flow.step(step_id)
    result = output.get("result") if isinstance(output.get("result"), dict) else None
    values = progress.setdefault("values", {})
    for key, slot in step.fills.items():
        if result is not None and key in result:
            values[slot] = {"value": result[key], "source": "system", "seq": None}
