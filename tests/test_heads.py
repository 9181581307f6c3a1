"""Trained heads: training (frozen encoder), calibrated predictions with a ``none`` answer,
content-hashed versions, the eval metrics, the ``gatebot heads`` commands, and the shipped
sentiment head. The encoder loads once per session (bot.heads.encoder caches it)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")

from click.testing import CliRunner

from bot.cli.heads import command as heads_cli
from bot.heads import NONE, load_head
from bot.heads.encoder import load_encoder
from bot.heads.evaluate import expected_calibration_error, score
from bot.heads.sentiment import load_default_sentiment, sentiment_score
from bot.heads.train import TrainOptions, train_head
from bot.heads.trained import TrainedHead, content_version
from tests.conftest import ACME

INTENTS = {
    "refund": [
        "I want my money back",
        "can I get a refund",
        "please refund my order",
        "how do I return this for a refund",
        "refund me now",
        "I'd like a refund for the shoes",
        "when will my refund arrive",
        "give me my money back please",
        "request a refund",
        "the product broke, I want a refund",
    ],
    "delivery": [
        "where is my package",
        "when will my order arrive",
        "my parcel hasn't come",
        "track my delivery",
        "how long does shipping take",
        "is my order on its way",
        "the courier never showed up",
        "delivery status please",
        "my package is late",
        "when does my parcel get here",
    ],
    "password": [
        "I forgot my password",
        "reset my password",
        "I can't log in",
        "how do I change my password",
        "my login doesn't work",
        "locked out of my account",
        "password reset link not working",
        "help me sign in",
        "I lost my password",
        "can't remember my login details",
    ],
}
OOS = [
    "what's the capital of peru",
    "write a haiku about autumn",
    "how do I grow tomatoes",
    "who painted the mona lisa",
    "what's a good name for a hamster",
    "explain black holes",
]
EVAL_KEYS = {"n", "in_scope", "oos", "ece", "gate"}


def _rows() -> list[tuple[str, str]]:
    return [(t, label) for label, texts in INTENTS.items() for t in texts] + [
        (t, "oos") for t in OOS
    ]


def _write_jsonl(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"text": t, "label": lab}) + "\n" for t, lab in rows))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrainedHead, Path]:
    out = tmp_path_factory.mktemp("head") / "intent"
    return train_head(_rows(), "intent", out, TrainOptions(epochs=0)), out


def test_predictions_cover_every_label_and_sum_to_one(trained: tuple[TrainedHead, Path]) -> None:
    head, _ = trained
    assert set(head.labels) == {*INTENTS, NONE}
    preds = head.predict(["where is my parcel", "refund please", "reset password"])
    assert [p[0][0] for p in preds] == ["delivery", "refund", "password"]
    for ranked in preds:
        assert {label for label, _ in ranked} == set(head.labels)
        assert sum(p for _, p in ranked) == pytest.approx(1.0, abs=1e-4)
        assert [p for _, p in ranked] == sorted((p for _, p in ranked), reverse=True)
    assert head.predict([]) == []


def test_none_wins_on_unrelated_text(trained: tuple[TrainedHead, Path]) -> None:
    head, _ = trained
    for text in ["what's the best recipe for lasagna", "who won the world cup in 1998"]:
        assert head.predict([text])[0][0][0] == NONE


def test_version_is_a_content_hash(trained: tuple[TrainedHead, Path], tmp_path: Path) -> None:
    head, out = trained
    assert head.version.startswith("intent@") and len(head.version.split("@")[1]) == 12
    assert load_head(out).version == head.version
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    assert load_head(copy).version == head.version  # the path is not part of the version
    config = json.loads((copy / "config.json").read_text())
    config["temperature"] += 0.5
    (copy / "config.json").write_text(json.dumps(config))
    changed = load_head(copy)
    assert changed.version != head.version
    assert changed.version == content_version(copy, "intent")


def test_score_keys_and_metrics() -> None:
    preds = [
        [("a", 0.95), ("none", 0.05)],  # acted, right
        [("b", 0.92), ("a", 0.08)],  # acted, wrong
        [("a", 0.6), ("b", 0.4)],  # below the gate
        [("a", 0.97), ("none", 0.03)],  # oos acted on: a false act
        [("none", 0.99), ("a", 0.01)],  # oos, abstained
    ]
    result = score(preds, ["a", "a", "a", "oos", "oos"], gate=0.9)
    assert set(result) == EVAL_KEYS
    assert set(result["in_scope"]) == {"n", "coverage", "selective_accuracy", "accuracy"}
    assert set(result["oos"]) == {"n", "false_act_rate"}
    assert result["in_scope"] == {
        "n": 3,
        "coverage": 0.6667,
        "selective_accuracy": 0.5,
        "accuracy": 0.3333,
    }
    assert result["oos"] == {"n": 2, "false_act_rate": 0.5}
    assert expected_calibration_error([1.0, 1.0], [True, True]) == 0.0
    assert expected_calibration_error([0.8, 0.8], [True, False]) == pytest.approx(0.3)


def test_cli_train_and_eval(tmp_path: Path) -> None:
    runner = CliRunner()
    data = _write_jsonl(tmp_path / "train.jsonl", _rows())
    out = tmp_path / "head"
    result = runner.invoke(heads_cli, ["train", "--data", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    version = result.stdout.strip().splitlines()[-1]
    assert version == load_head(out).version
    test = _write_jsonl(
        tmp_path / "test.jsonl",
        [
            ("my package still hasn't arrived", "delivery"),
            ("I want a refund", "refund"),
            ("how do penguins sleep", "oos"),
        ],
    )
    result = runner.invoke(heads_cli, ["eval", "--head", str(out), "--data", str(test), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # a head that scores novelty also says what its novelty gate did
    assert set(report) == EVAL_KEYS | {"novelty"} and report["n"] == 3 and report["gate"] == 0.9
    assert set(report["novelty"]) == {
        "threshold",
        "in_scope_held_back",
        "oos_held_back",
        "oos_false_act_rate_softmax_only",
        "fitted",  # how training placed the threshold: by hidden intents or the quantile
    }
    assert report["novelty"]["fitted"]["hidden_lines"] == 30  # each intent hidden once
    assert report["novelty"]["threshold"] == round(load_head(out).novelty.threshold, 4)  # type: ignore[attr-defined]
    result = runner.invoke(heads_cli, ["eval", "--head", str(out), "--data", str(test)])
    assert "novelty threshold" in result.output and "novel false act rate" in result.output
    assert "threshold placed (by " in result.output and "lines of hidden intents" in result.output
    result = runner.invoke(heads_cli, ["train", "--out", str(out)])
    assert result.exit_code != 0  # neither --data nor --pack


def test_cli_train_from_pack(tmp_path: Path) -> None:
    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack)
    result = CliRunner().invoke(heads_cli, ["train", "--pack", str(pack)])
    assert result.exit_code == 0, result.output
    head = load_head(pack / "heads" / "intent")
    assert result.stdout.strip().splitlines()[-1] == head.version
    assert "wrote" in result.stderr and "novelty threshold" in result.stderr
    assert NONE in head.labels and "human" in head.labels
    assert head.predict(["can I speak to a real person"])[0][0][0] == "human"


def test_shipped_sentiment_head() -> None:
    head = load_default_sentiment()
    assert head.version.startswith("sentiment@")
    assert sorted(head.labels) == ["negative", "neutral", "positive"]
    love, worst = head.predict(["I love this, thank you!", "this is the worst garbage ever"])
    assert love[0][0] == "positive" and worst[0][0] == "negative"
    assert sentiment_score(love).score > 0.5
    read = sentiment_score(worst)
    assert read.score < -0.5 and read.label == "negative"
    assert sentiment_score([("negative", 0.95), ("neutral", 0.04), ("positive", 0.01)]).hostile
    assert not sentiment_score([("negative", 0.6), ("neutral", 0.4)]).hostile


def test_loading_never_touches_the_network(
    trained: tuple[TrainedHead, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a head tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    load_encoder(fresh=True)  # not the session's cached copy: really read from disk
    _, out = trained
    assert load_head(out).predict(["refund please"])[0][0][0] == "refund"


@pytest.mark.parametrize("bf16", [True, False])
def test_a_fine_tune_in_bf16_or_not_saves_a_float32_encoder_the_numpy_pass_follows(
    bf16: bool, tmp_path: Path
) -> None:
    """bfloat16 autocast covers the steps only: the weights stay float32, they do move, and the
    saved encoder folder embeds under the numpy pass as the tuned torch model does."""
    import numpy as np
    import torch

    from bot.heads.encoder import embed
    from bot.heads.finetune import finetune

    rows = [(t, label) for label, texts in INTENTS.items() for t in texts[:4]]
    labels = sorted(INTENTS)
    y = np.array([labels.index(label) for _, label in rows])
    model = load_encoder(fresh=True)
    top = model[0].auto_model.encoder.layer[-1].output.dense.weight
    before = top.detach().clone()
    finetune(model, [t for t, _ in rows], y, len(labels), epochs=1, train_layers=1, bf16=bf16)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert torch.isfinite(top).all() and not torch.equal(top, before)
    model.save(str(tmp_path / "encoder"))
    texts = ["where is my parcel", "refund please"]
    got, expected = embed(load_encoder(tmp_path / "encoder"), texts), embed(model, texts)
    assert (got * expected).sum(axis=1).min() >= 0.9999


def test_bf16_is_used_by_default_only_where_the_cpu_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from bot.heads import finetune as ft

    seen: list[bool] = []
    real = ft._autocast
    monkeypatch.setattr(ft, "_autocast", lambda on: seen.append(on) or real(on))
    texts, y = ["refund please", "where is my parcel"], np.array([0, 1])
    for native in (True, False):
        monkeypatch.setattr(ft, "bf16_native", lambda native=native: native)
        ft.finetune(load_encoder(fresh=True), texts, y, 2, epochs=1, train_layers=1, batch_size=2)
    ft.finetune(load_encoder(fresh=True), texts, y, 2, epochs=1, train_layers=1, bf16=False)
    assert seen == [True, False, False]
