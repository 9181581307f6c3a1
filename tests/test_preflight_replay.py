"""``gatebot preflight replay``: a pack edit that changes a decision changes the exit code and the
report; an alert with no email transport fails honestly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.conftest import ACME

LABELS = [
    {"id": "price", "text": "How much does Acme Cloud cost?", "decision": "faq:faq-pricing"},
    {"id": "person", "text": "I need to talk to someone now", "decision": "person:support"},
    {"id": "build", "text": "my build is failing with an error", "decision": "none"},
    {
        "id": "fr",
        "text": "Bonjour, je voudrais parler de ma facture",
        "answers": {"language": "fr"},
    },
]


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GATEBOT_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.delenv("GATEBOT_EMAIL", raising=False)
    monkeypatch.delenv("GATEBOT_MODEL", raising=False)
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    return copy


def _replay(pack: Path, labels: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    report = labels.parent / "report.json"
    args = ["preflight", "replay", "--labels", str(labels), "--pack", str(pack)]
    result = CliRunner().invoke(cli, [*args, "--report", str(report), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(report.read_text()), result.output


def test_an_faq_threshold_edit_changes_the_decision_exit_code_and_report(
    pack: Path, tmp_path: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in LABELS))
    code, report, out = _replay(pack, labels)
    assert code == 0
    assert report["label_agreement"] == 4 and report["changed"] == []
    assert not report["previous"]["found"] and "no previous run" in out
    # The previous run's decisions are kept under GATEBOT_DATA_DIR by default.
    kept = json.loads((tmp_path / "var" / "preflight" / "last-run.json").read_text())
    assert {d["id"]: d["decision"] for d in kept["decisions"]}["price"] == "faq:faq-pricing"

    code, report, _ = _replay(pack, labels)
    assert code == 0 and report["changed"] == []  # the same pack decides the same

    meta = pack / "pack.yaml"
    text = meta.read_text()
    assert "faq: 0.85" in text
    meta.write_text(text.replace("faq: 0.85", "faq: 0.9999"))
    code, report, out = _replay(pack, labels)
    assert code == 1
    assert report["changed"] == [
        {
            "id": "price",
            "text": "How much does Acme Cloud cost?",
            "previous": "faq:faq-pricing",
            "now": "none",
        }
    ]
    assert report["label_mismatches"][0]["id"] == "price"
    assert "1 decision(s) changed" in out
    assert "faq:faq-pricing -> none" in (tmp_path / "report.txt").read_text()


def test_alert_without_an_email_transport_fails_honestly(pack: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    previous = tmp_path / "previous.json"
    labels.write_text(json.dumps(LABELS[0]) + "\n")
    previous.write_text(
        json.dumps({"decisions": [{"id": "price", "text": "x", "decision": "none"}]})
    )
    code, report, out = _replay(pack, labels, "--previous", str(previous), "--alert")
    assert code == 2
    assert report["alert"]["sent"] is False
    assert "no email transport is configured" in report["alert"]["error"]
    assert "alert not sent" in out


def test_a_bad_labels_line_is_named(pack: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"text": "hello"}\n{"decision": "none"}\n')
    result = CliRunner().invoke(cli, ["preflight", "replay", "--labels", str(labels)])
    assert result.exit_code != 0
    assert "labels.jsonl:2" in str(result.exception)


def test_the_sample_packs_labelled_set_agrees_with_its_labels(tmp_path: Path) -> None:
    code, report, _ = _replay(ACME, _copy_labels(tmp_path), "--previous", str(tmp_path / "p"))
    assert code == 0
    assert report["label_mismatches"] == []


def _copy_labels(tmp_path: Path) -> Path:
    labels = tmp_path / "labels.jsonl"
    shutil.copy(ACME / "preflight" / "labels.jsonl", labels)
    return labels
