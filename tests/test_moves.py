"""The move head: it picks among the playbook's legal moves only, overrides the playbook's
preference only when confident, and an unsure reading keeps the preference and escalates."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient
from click.testing import CliRunner

from bot.cli.heads import command as heads_cli
from bot.heads import content_version
from bot.heads.moves import move_rows
from bot.packs import load_pack
from bot.turn.decide import Decision, MoveScores
from tests.test_api import new_conversation, say

PACK = Path(__file__).resolve().parent.parent / "knowledge" / "acme"


def scores(**moves: float) -> MoveScores:
    return MoveScores("move@test", sorted(moves.items(), key=lambda kv: -kv[1]))


def test_a_single_legal_move_is_forced_whatever_the_head_says() -> None:
    decision = Decision(["decline"], "scope: out").choose(scores(handoff=0.99, decline=0.01))
    assert decision.move == "decline" and decision.why.startswith("forced")
    assert decision.read is None and not decision.escalate


def test_without_a_head_the_playbook_preference_decides() -> None:
    decision = Decision(["ask", "handoff"], "rule").choose(None)
    assert decision.move == "ask" and "no move head" in decision.why


def test_a_confident_head_overrides_the_preference_among_legal_moves() -> None:
    decision = Decision(["answer", "handoff"], "rule").choose(scores(handoff=0.95, answer=0.05))
    assert decision.move == "handoff" and decision.why.startswith("move head: handoff")
    assert decision.read is not None and decision.read["outcome"] == "act"
    assert decision.read["gate"] == "policy" and decision.read["threshold"] == 0.9


def test_mass_on_forbidden_moves_counts_for_the_preference() -> None:
    # The head thinks "propose", which the rules forbid here: that is no reason to hand off.
    decision = Decision(["ask", "handoff"], "rule").choose(
        scores(propose=0.9, handoff=0.05, ask=0.05)
    )
    assert decision.move == "ask" and not decision.escalate
    assert decision.read is not None and decision.read["legal"] == {"ask": 0.95, "handoff": 0.05}


def test_an_unsure_head_keeps_the_preference_and_marks_the_turn_to_escalate() -> None:
    decision = Decision(["answer", "handoff"], "rule").choose(scores(answer=0.6, handoff=0.4))
    assert decision.move == "answer" and decision.escalate
    assert decision.read is not None and decision.read["outcome"] == "unsure"
    assert "unsure" in decision.why


def test_training_lines_come_from_the_pack() -> None:
    rows = move_rows(load_pack(PACK))
    moves = {label for _, label in rows}
    assert {"answer", "ask", "handoff", "stop", "propose", "decline"} <= moves
    assert ("I want to talk to a person", "handoff") in rows


def test_the_pinned_move_head_is_the_one_trained_from_the_pack(tmp_path: Path) -> None:
    pack = load_pack(PACK)
    assert pack.heads["move"]["version"] == content_version(PACK / "heads" / "move", "move")
    out = tmp_path / "move"
    # In process, on the encoder the session already loaded; test_cli runs the console script.
    args = ["train", "--pack", str(PACK), "--name", "move", "--out", str(out)]
    result = CliRunner().invoke(heads_cli, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1].startswith("move@")
    assert (out / "config.json").exists()


async def test_through_the_api_the_move_head_reads_and_is_recorded(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    turn = (await (await say(client, cid, auth, "can I get a demo", "1")).json())["turn"]
    assert turn["move"]["name"] == "ask" and turn["versions"]["heads"]["move"].startswith("move@")
    turn = (await (await say(client, cid, auth, "we want to run our CI on it", "2")).json())["turn"]
    move_read = next(r for r in turn["reads"] if r["head"] == "move")
    assert move_read["outcome"] == "act" and move_read["answer"] == "ask"
    assert turn["move"]["why"].startswith("move head: ask")
