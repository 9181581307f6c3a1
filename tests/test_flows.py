"""Flows: the schedule, validation, export and import, the store's append-only checkpoints, and
the executor's guarantees against an adversarial model (dry-run, contracts)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.app import App
from bot.config import Settings
from bot.errors import PackErrors
from bot.extend.provider import ModelProvider, Prompt, Response
from bot.extend.recorder import MemoryRecorder
from bot.extend.tool import Tool
from bot.flows.load import export_flow, import_flow, parse_flow
from bot.flows.schedule import schedule
from bot.hookspecs import hookimpl
from bot.store import Store
from tests.conftest import ACME

ROLES = {"worker": object()}


def step(sid: str, *prev: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "reply",
        "template": "x",
        "role": "worker",
        "prevStepIds": list(prev),
        **extra,
    }


def flow(steps: list[dict[str, Any]], loops: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "name": "f",
        "title": "F",
        "version": 1,
        "trigger": {"keywords": ["go"]},
        "steps": steps,
        "loops": loops or [],
    }


def parse(data: dict[str, Any]) -> Any:
    return parse_flow(data, "test/flows/f.yaml", None, ROLES, None)  # type: ignore[arg-type]


def test_schedule_fans_out_in_and_interleaves_loop_passes() -> None:
    data = flow(
        [
            step("e", "l2"),
            step("l2", "l1"),
            step("l1", "d"),
            step("d", "b", "c"),
            step("c", "a"),
            step("b", "a"),
            step("a"),
        ],
        [{"from": "l2", "to": "l1", "max_passes": 3}],
    )
    expected = ["a@1", "b@1", "c@1", "d@1", "l1@1", "l2@1", "l1@2", "l2@2", "l1@3", "l2@3", "e@1"]
    for _ in range(5):  # the same order, every time
        assert [str(e) for e in schedule(parse(data))] == expected


def test_independent_steps_run_before_the_loop_by_id() -> None:
    data = flow(
        [step("z"), step("b1"), step("b2", "b1"), step("c", "b2")],
        [{"from": "b2", "to": "b1", "max_passes": 2}],
    )
    assert [str(e) for e in schedule(parse(data))] == ["b1@1", "b2@1", "b1@2", "b2@2", "c@1", "z@1"]


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        (flow([step("a", "missing")]), "steps.a.prevStepIds[0]", "unknown step 'missing'"),
        (flow([{**step("a"), "type": "teleport"}]), "steps.a.type", "is not one of"),
        (flow([step("a", "b"), step("b", "a")]), "steps", "cycle"),
        (
            flow([step("a"), step("b", "a")], [{"from": "b", "to": "a", "max_passes": 51}]),
            "loops[0].max_passes",
            "1 to 50",
        ),
        (
            flow([step("a"), step("b", "a")], [{"from": "a", "to": "b", "max_passes": 2}]),
            "loops[0]",
            "must come before",
        ),
        (flow([{**step("a"), "role": "pirate"}]), "steps.a.role", "unknown role 'pirate'"),
        (flow([{**step("a"), "mods": ["yolo"]}]), "steps.a.mods[0]", "unknown mod 'yolo'"),
        (flow([{**step("a"), "mods": ["concise", "detailed"]}]), "steps.a.mods[0]", "cannot stack"),
        (
            flow([{"id": "a", "type": "tool_call", "role": "worker"}]),
            "steps.a.tools",
            "exactly one tool",
        ),
        (
            flow([{**step("a"), "type": "tool_call", "tools": ["t.x"], "repeat": True}]),
            "steps.a.items",
            "declares the items it builds up",
        ),
        (
            flow([{**step("a"), "items": {"seats": ["seat"]}}]),
            "steps.a.items",
            "only a repeat step has items",
        ),
        (
            flow([{**step("a"), "type": "ask", "slot": "email", "lead": "demo"}]),
            "steps.a.lead",
            "only a reply step closes a lead",
        ),
        (
            {**flow([step("a")]), "trigger": {"keywords": ["go"], "examples": ["go on then"]}},
            "trigger.examples",
            "examples train the flow's intent",
        ),
    ],
)
def test_validation_names_step_and_field(data: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(PackErrors) as err:
        parse(data)
    messages = [(e.field, e.message) for e in err.value.errors]
    assert any(f == field and words in m for f, m in messages), messages
    assert all(e.file == "test/flows/f.yaml" for e in err.value.errors)


def test_export_and_import_round_trip_and_import_validates() -> None:
    original = parse(flow([step("a"), step("b", "a")], [{"from": "b", "to": "a", "max_passes": 4}]))
    exported = export_flow(original)
    assert exported["format"] == "gatebot-flow" and exported["version"] == 1
    again = import_flow(json.dumps(exported), "import.json", ROLES)  # type: ignore[arg-type]
    assert [str(e) for e in schedule(again)] == [str(e) for e in schedule(original)]
    exported["flow"]["loops"][0]["max_passes"] = 0
    with pytest.raises(PackErrors, match=r"max_passes.*1 to 50"):
        import_flow(json.dumps(exported), "import.json", ROLES)  # type: ignore[arg-type]
    with pytest.raises(PackErrors, match="not a gatebot-flow export"):
        import_flow('{"format": "other"}', "import.json")


def test_sample_pack_flows_load(tmp_path: Path) -> None:
    from bot.packs import load_pack

    pack = load_pack(ACME)
    assert {"refund", "demo", "add_seats"} <= set(pack.flows)
    broken = tmp_path / "acme"
    shutil.copytree(ACME, broken, ignore=shutil.ignore_patterns("heads"))
    meta = yaml.safe_load((broken / "pack.yaml").read_text())
    meta.pop("heads", None)
    (broken / "pack.yaml").write_text(yaml.safe_dump(meta))
    (broken / "flows" / "bad.yaml").write_text(
        textwrap.dedent("""\
        name: bad
        title: Bad
        version: 1
        trigger: {intents: [no_such_intent]}
        steps:
          - {id: a, type: ask, slot: order_id, role: nobody}
        """)
    )
    with pytest.raises(PackErrors) as err:
        load_pack(broken)
    text = str(err.value)
    assert "acme/flows/bad.yaml:6 [steps.a.role]: unknown role 'nobody'" in text


def test_checkpoints_are_append_only(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    run = store.create_flow_run("c1", "refund", "1", ["a@1", "b@1"])
    store.add_checkpoint(run.id, 0, "a", 1, {"in": 1}, {"out": 1}, None, {"p": 0})
    store.add_checkpoint(run.id, 1, "b", 1, {"in": 2}, {"out": 2}, "m", {"p": 1})
    before = list(store.iter_checkpoint_rows(run.id))
    with pytest.raises(Exception):  # noqa: B017 (the database refuses a second index 1)
        store.add_checkpoint(run.id, 1, "b", 1, {}, {"tampered": True}, None, {})
    store.set_flow_run_status(run.id, "done")
    assert list(store.iter_checkpoint_rows(run.id)) == before
    assert [c.step_id for c in store.checkpoints(run.id)] == ["a", "b"]
    assert store.get_flow_run(run.id).status == "done"  # type: ignore[union-attr]
    assert not any(hasattr(store, n) for n in ("update_checkpoint", "delete_checkpoint"))
    store.close()


class GetOrder(Tool):
    name = "orders.get_order"
    description = "Look an order up."
    schema = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    }

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        return {"order_id": arguments["order_id"], "amount": "$42.00", "refundable": True}


class Refund(Tool):
    name = "orders.refund"
    description = "Refund an order."
    changes = True
    schema = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount": {"type": "string"},
            "method": {"type": "string"},
        },
        "required": ["order_id", "amount", "method"],
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(dict(arguments))
        return {"status": "refunded", "note": "refunded"}


class Adversary(ModelProvider):
    """Asks for a change it must not get and writes stubs that must not pass."""

    name = "adversary"
    prompts: list[Prompt] = []

    async def execute(self, prompt: Prompt) -> Response:
        Adversary.prompts.append(prompt)
        if prompt.purpose != "flow":
            return Response(text="")
        return Response(
            text=json.dumps(
                {
                    "tool_calls": [
                        {
                            "tool": "orders.refund",
                            "arguments": {"order_id": "1042", "amount": "$999", "method": "card"},
                        }
                    ],
                    "summary": "TODO: fill this in",
                }
            )
        )


class AdversaryPlugin:
    def __init__(self) -> None:
        self.refund = Refund()

    @hookimpl
    def register_model_providers(self, register: Any) -> None:
        register("adversary", Adversary)

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(GetOrder())
        register(self.refund)


ADVERSARY_FLOW = """\
name: audit
title: Audit an order
version: 1
trigger: {keywords: [audit]}
steps:
  - id: inspect
    type: llm_call
    prompt: Look at the order and do what is needed.
    tools: [orders.get_order, orders.refund]
    mods: [dry-run]
    role: support_agent
  - id: summarise
    type: llm_call
    prevStepIds: [inspect]
    prompt: Summarise the order.
    contract: {requires: [summary], retries: 2}
    role: support_agent
"""


async def test_adversarial_model_cannot_change_under_dry_run_and_contracts_bound_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack)
    (pack / "flows" / "audit.yaml").write_text(ADVERSARY_FLOW)
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,web")
    plugin = AdversaryPlugin()
    memory = MemoryRecorder()
    settings = Settings(pack=pack, data_dir=tmp_path, recorders=[], model="adversary")
    app = App(settings, extra_plugins=[plugin], recorders=[memory])
    await app.start(channels=False)
    try:
        conv, _ = app.store.create_conversation("web")
        result = await app.agent.handle(conv, "please audit my account", "m1")
    finally:
        await app.stop()
    record = result.record
    assert plugin.refund.calls == []
    refused = [e for e in record["tools"] if e["tool"] == "orders.refund"]
    reasons = [e["detail"]["reason"] for e in refused]
    assert [e["event"] for e in refused] == ["refused"] * 4
    assert reasons[0] == "dry-run mod: changes tools are removed from this step"
    assert reasons[1:] == ["not a tool this step can reach"] * 3  # each contract retry
    inspect, summarise = record["flow"]["steps"]
    assert inspect["tools_removed"] == ["orders.refund"]
    attempts = summarise["contract"]["attempts"]
    assert len(attempts) == 3 and not summarise["contract"]["passed"]
    assert any("stub marker 'TODO'" in p for p in attempts[0]["problems"])
    flow_prompts = [p for p in Adversary.prompts if p.purpose == "flow"]
    assert "not accepted" not in flow_prompts[1].messages[-1]["content"]
    assert "stub marker 'TODO'" in flow_prompts[2].messages[-1]["content"]
    assert "dry-run" in flow_prompts[0].system and "orders.refund" not in flow_prompts[0].system
    assert record["move"]["name"] == "handoff" and record["flow"]["status"] == "handed_off"
    assert len([c for c in record["model_calls"] if c["purpose"] == "flow"]) == 4


def test_cli_lists_exports_imports_and_compile_refuses_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from bot.cli.flows import command
    from bot.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GATEBOT_PACK", str(ACME))
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline")
    runner = CliRunner()
    listed = runner.invoke(command, ["list"])
    assert listed.exit_code == 0, listed.output
    assert "refund" in listed.output and "ask_email@1 ask_order@1 lookup@1" in listed.output
    listed_json = json.loads(runner.invoke(command, ["list", "--json"]).output)
    assert [f["name"] for f in listed_json] == ["add_seats", "demo", "refund"]
    exported = runner.invoke(command, ["export", "refund"])
    doc = json.loads(exported.output)
    assert doc["format"] == "gatebot-flow" and doc["flow"]["name"] == "refund"
    doc["flow"]["steps"][1]["prevStepIds"] = ["nowhere"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    bad = runner.invoke(command, ["import", "bad.json", "--into", str(tmp_path / "p")])
    assert bad.exit_code == 1, bad.output
    assert "steps.ask_order.prevStepIds[0]" in bad.output and "no flow written" in bad.output
    assert not (tmp_path / "p" / "flows" / "refund.yaml").exists()
    # A tool no registered plugin provides is refused at import, not found later at run.
    doc["flow"]["steps"][1]["prevStepIds"] = ["ask_email"]
    doc["flow"]["steps"][2]["tools"] = ["orders.nonesuch"]
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,catalog")
    (tmp_path / "tool.json").write_text(json.dumps(doc))
    refused = runner.invoke(command, ["import", "tool.json", "--into", str(tmp_path / "p")])
    assert refused.exit_code == 1, refused.output
    assert "unknown tool 'orders.nonesuch'" in refused.output
    assert "register these tools for this pack:" in refused.output
    assert "orders.lookup_order" in refused.output
    assert not (tmp_path / "p" / "flows" / "refund.yaml").exists()
    doc["flow"]["steps"][2]["tools"] = ["orders.lookup_order"]
    (tmp_path / "good.json").write_text(json.dumps(doc))
    good = runner.invoke(command, ["import", "good.json", "--into", str(tmp_path / "p")])
    assert good.exit_code == 0, good.output
    assert (tmp_path / "p" / "flows" / "refund.yaml").exists()
    compiled = runner.invoke(command, ["compile", "refund an order after checking it"])
    assert isinstance(compiled.exception, ConfigError)
    assert "offline provider cannot draft a flow" in str(compiled.exception)


class Drafter(ModelProvider):
    """The model one step names for itself; it says which model it is."""

    name = "drafter"

    async def execute(self, prompt: Prompt) -> Response:
        return Response(text=json.dumps({"summary": f"drafted by {self.model}"}))


class DrafterPlugin:
    @hookimpl
    def register_model_providers(self, register: Any) -> None:
        register("drafter", Drafter)


OVERRIDE_FLOW = """\
name: note
title: Write a note
version: 1
trigger: {{keywords: [write a note]}}
steps:
  - id: draft
    type: llm_call
    prompt: Draft a one-line note.
    model: {model}
    contract: {{requires: [summary]}}
    role: support_agent
"""


async def test_a_step_runs_on_the_model_it_names_and_an_unknown_one_disables_its_flow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,web")
    for name, model in (("ok", "drafter:small-1"), ("bad", "nowhere:x")):
        pack = tmp_path / name / "acme"
        shutil.copytree(ACME, pack)
        (pack / "flows" / "note.yaml").write_text(OVERRIDE_FLOW.format(model=model))
        settings = Settings(pack=pack, data_dir=tmp_path / name, recorders=[])
        app = App(settings, extra_plugins=[DrafterPlugin()])
        await app.start(channels=False)
        try:
            conv, _ = app.store.create_conversation("web")
            result = await app.agent.handle(conv, "please write a note", "m1")
        finally:
            await app.stop()
        if name == "ok":
            assert "note" not in app.agent.flows.disabled
            assert [s["step"] for s in result.record["flow"]["steps"]] == ["draft"]
            calls = [c for c in result.record["model_calls"] if c["purpose"] == "flow"]
            assert [(c["provider"], c["model"]) for c in calls] == [("drafter", "small-1")]
            (cp,) = app.store.checkpoints(result.record["flow"]["run"])
            assert cp.model == "small-1" and cp.output["summary"] == "drafted by small-1"
        else:
            assert "model 'nowhere:x'" in app.agent.flows.disabled["note"]
            assert result.record["flow"] is None


class Citer(ModelProvider):
    """Words a flow's reply: ``fixes`` drafts one uncited sentence and then cites the first fact;
    ``never`` never cites, so cite-only refuses both drafts."""

    name = "citer"
    mode = "fixes"

    async def execute(self, prompt: Prompt) -> Response:
        if prompt.purpose != "reply":
            return Response(text="")
        key = prompt.context["facts"][0]["key"]
        if Citer.mode == "fixes" and prompt.context["reasons"]:
            return Response(text=f"The help center covers this [{key}].")
        return Response(text=f"Here is what I found. The help center covers this [{key}].")


class CiterPlugin:
    @hookimpl
    def register_model_providers(self, register: Any) -> None:
        register("citer", Citer)


EXPLAIN_FLOW = """\
name: explain
title: Explain from the help center
version: 1
trigger: {keywords: [explain single sign-on]}
steps:
  - id: explain
    type: reply
    prompt: How does single sign-on work?
    mods: [cite-only]
    role: support_agent
"""


@pytest.mark.parametrize("mode", ["fixes", "never"])
async def test_a_model_worded_reply_step_records_its_gate_attempts_and_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack)
    (pack / "flows" / "explain.yaml").write_text(EXPLAIN_FLOW)
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,web")
    monkeypatch.setattr(Citer, "mode", mode)
    settings = Settings(pack=pack, data_dir=tmp_path, recorders=[], model="citer")
    app = App(settings, extra_plugins=[CiterPlugin()])
    await app.start(channels=False)
    try:
        conv, _ = app.store.create_conversation("web")
        result = await app.agent.handle(conv, "please explain single sign-on", "m1")
    finally:
        await app.stop()
    record = result.record
    assert [s["step"] for s in record["flow"]["steps"]] == ["explain"]
    reply, facts = record["reply"], record["facts"]
    assert reply["attempts"] == 2
    assert [c["purpose"] for c in record["model_calls"]].count("reply") == 2
    assert facts and all(set(f) == {"key", "source", "mode"} for f in facts)
    if mode == "fixes":
        assert reply["gate"] == {"passed": True, "reasons": [], "rules": []}
        (cited,) = facts  # only the fact the passing draft cited
        assert result.replies[0]["text"] == "The help center covers this."
        assert result.replies[0]["citations"][0]["key"] == cited["key"]
        assert record["flow"]["status"] == "done" and record["move"]["name"] == "answer"
        (cp,) = app.store.checkpoints(record["flow"]["run"])
        assert cp.output["cited"] == [cited["key"]]
    else:
        assert reply["gate"]["passed"] is False
        assert any("without a resolved citation" in r for r in reply["gate"]["reasons"])
        assert record["move"]["name"] == "handoff" and record["flow"]["status"] == "handed_off"
        assert "reply gate refused two drafts" in record["move"]["why"]
