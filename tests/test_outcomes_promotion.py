"""The labelled simulation: 2,000 synthetic conversations with staff labels and outcomes, the
pack's pinned intent head acting and two candidates in its shadow in turn. `gatebot heads
promote` refuses the worse candidate, naming the rules it failed, and promotes the better one
into the pack with a record of why; `gatebot heads report` prints the numbers and draws the
reliability diagram."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from bot.heads import content_version
from bot.outcomes.packpins import set_pin
from bot.outcomes.promotion import TRAINED_ON
from bot.outcomes.simulate import demo_traffic, seed_traffic
from bot.packs import load_pack
from bot.store import Store

ACME = Path(__file__).resolve().parent.parent / "knowledge" / "acme"


def _candidate(pack_dir: Path, name: str, trained_on: list[int]) -> str:
    """A copy of the pinned head under another folder (the readings are simulated), naming the
    labelled turns it trained on, so its version is its own."""
    folder = pack_dir / "heads" / name
    shutil.copytree(pack_dir / "heads" / "intent", folder)
    (folder / TRAINED_ON).write_text(json.dumps({"turns": trained_on, "name": name}))
    return content_version(folder, "intent")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """(pack folder, database URL, worse version, better version)."""
    root = tmp_path_factory.mktemp("simulation")
    pack_dir = root / "pack"
    shutil.copytree(ACME, pack_dir)
    worse = _candidate(pack_dir, "intent.worse", [])
    better = _candidate(pack_dir, "intent.better", list(range(1, 51)))  # the first 50 turns
    pack = load_pack(pack_dir)
    url = f"sqlite:///{root / 'outcomes.db'}"
    store = Store(url)
    store.migrate()
    intents = [i.name for i in pack.intents]
    counts = seed_traffic(
        store, demo_traffic(intents, pack.heads["intent"]["version"], worse, better)
    )
    store.close()
    assert counts["conversations"] == 2000 and counts["outcomes"] == 2000
    assert counts["labels"] > 2000
    return pack_dir, url, worse, better


def _gatebot(args: list[str], url: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args, env={"DATABASE_URL": url}, catch_exceptions=False)
    return result.exit_code, result.output


def test_a_worse_candidate_is_refused_and_a_better_one_promoted(
    simulated: tuple[Path, str, str, str],
) -> None:
    pack_dir, url, worse, better = simulated
    pinned = load_pack(pack_dir).heads["intent"]["version"]
    set_pin(
        pack_dir / "pack.yaml",
        "intent",
        {"candidate": "heads/intent.worse", "candidate_version": worse},
    )
    code, out = _gatebot(["heads", "promote", "intent", "--pack", str(pack_dir)], url)
    assert code == 1, out
    assert "FAIL selective_accuracy not lower" in out and "FAIL ece not higher" in out
    assert "pass coverage not lower" in out  # it is sure more often: that alone is not enough
    assert "refused: failed: selective_accuracy" in out
    assert load_pack(pack_dir).heads["intent"]["version"] == pinned  # nothing written
    assert not (pack_dir / "heads" / "intent.promotion.json").exists()

    set_pin(
        pack_dir / "pack.yaml",
        "intent",
        {"candidate": "heads/intent.better", "candidate_version": better},
    )
    code, out = _gatebot(["heads", "promote", "intent", "--pack", str(pack_dir), "--json"], url)
    assert code == 0, out
    verdict = json.loads(out)
    assert verdict["promoted"] and verdict["new_version"] == better
    assert verdict["trained_on_left_out"] > 0  # the turns it trained on were not scored
    for name in ("selective_accuracy", "coverage", "ece"):
        rule = verdict["rules"][name]
        assert rule["passed"] and len(rule["ci"]) == 2
    assert verdict["rules"]["selective_accuracy"]["difference"] > 0
    assert verdict["rules"]["ece"]["difference"] < 0

    pack = load_pack(pack_dir)  # the pin is the candidate's files, byte for byte
    assert pack.heads["intent"]["version"] == better and "candidate" not in pack.heads["intent"]
    assert not (pack_dir / "heads" / "intent.better").exists()
    record = json.loads((pack_dir / "heads" / "intent.promotion.json").read_text())
    assert (record["latest"]["from"], record["latest"]["to"]) == (pinned, better)
    assert record["latest"]["rules"]["coverage"]["passed"]
    text = (pack_dir / "pack.yaml").read_text()
    assert "# Trained heads the pack pins" in text  # the author's comments stay


def test_the_report_prints_calibration_and_draws_the_diagram(
    simulated: tuple[Path, str, str, str], tmp_path: Path
) -> None:
    _, url, worse, better = simulated
    png = tmp_path / "reliability.png"
    code, out = _gatebot(["heads", "report", "--head", "intent", "--png", str(png)], url)
    assert code == 0, out
    assert f"{worse} (candidate, in the shadow)" in out and f"{better} (candidate" in out
    assert "selective accuracy" in out and "ECE" in out and "coverage" in out
    assert "conversion forecast (forecast-rules@1) on 2000 conversations" in out
    assert "Brier" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out = _gatebot(["heads", "report", "--json"], url)
    report = json.loads(out)
    acting = [v for v in report["versions"] if v["reader"] == "acting"]
    assert acting[0]["n"] > 2000 and 0 <= acting[0]["ece"]["value"] <= 1
    assert report["forecast"]["p_convert"]["base_rate"] > 0


def test_heads_train_candidate_learns_from_labelled_turns_and_pins_the_candidate(
    tmp_path: Path,
) -> None:
    pack_dir = tmp_path / "pack"
    shutil.copytree(ACME, pack_dir)
    url = f"sqlite:///{tmp_path / 'labels.db'}"
    store = Store(url)
    store.migrate()
    pack = load_pack(pack_dir)
    pinned = pack.heads["intent"]["version"]
    seed_traffic(store, demo_traffic([i.name for i in pack.intents], pinned, "a", "b", 40))
    labelled = {t.turn_id for t in store.labelled_turns("intent")}
    store.close()
    args = ["heads", "train", "--pack", str(pack_dir), "--candidate", "--holdout", "0.3"]
    code, out = _gatebot(args, url)
    assert code == 0, out
    version = out.strip().splitlines()[-1]
    pin = load_pack(pack_dir).heads["intent"]  # loads: the candidate's pin matches its files
    assert (pin["version"], pin["candidate_version"]) == (pinned, version)
    trained = json.loads((pack_dir / pin["candidate"] / TRAINED_ON).read_text())["turns"]
    assert set(trained) < labelled  # some labelled turns were held out for promotion


def test_a_pin_is_rewritten_in_place_and_a_flow_style_pin_refused(tmp_path: Path) -> None:
    from bot.outcomes import OutcomeError

    yaml = tmp_path / "pack.yaml"
    original = (ACME / "pack.yaml").read_text()
    yaml.write_text(original)
    set_pin(yaml, "intent", {"candidate": "heads/x", "candidate_version": "intent@1"})
    set_pin(yaml, "intent", {"candidate": None, "candidate_version": None})
    assert yaml.read_text() == original
    yaml.write_text("name: p\nheads:\n  intent: {path: heads/intent, version: intent@1}\n")
    with pytest.raises(OutcomeError, match="block style"):
        set_pin(yaml, "intent", {"version": "intent@2"})
    with pytest.raises(OutcomeError, match="no move pin"):
        set_pin(yaml, "move", {"version": "move@2"})
