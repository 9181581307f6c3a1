"""Novelty: the nearest-neighbour score, the threshold fitted on held-out lines, a saved head that
keeps both, the eval that counts a novel line as abstaining, and the sample pack's head saying
"novel" through REST about a message far from every intent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiohttp.test_utils import TestClient

from bot.heads.evaluate import score
from bot.heads.novelty import Novelty, fit_threshold, knn_novelty, out_of_fold_scores


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _cluster(rng: np.random.Generator, centre: np.ndarray, n: int, spread: float) -> np.ndarray:
    return _unit(centre + spread * rng.standard_normal((n, len(centre))))


def test_knn_novelty_is_cosine_distance_to_the_nearest_lines() -> None:
    bank = np.eye(4, dtype=np.float32)[:3]  # three orthogonal training lines
    x = _unit(np.array([[1, 0, 0, 0], [0, 0, 0, 1], [1, 1, 0, 0]], dtype=np.float32))
    near, far, between = knn_novelty(x, bank, k=1)
    assert near == pytest.approx(0.0, abs=1e-6)  # a training line itself
    assert far == pytest.approx(1.0, abs=1e-6)  # orthogonal to every line
    assert between == pytest.approx(1 - np.sqrt(0.5), abs=1e-6)
    # k = 2 averages the two nearest: for [1, 1, 0, 0] both are at cos 0.707
    assert knn_novelty(x, bank, k=2)[2] == pytest.approx(1 - np.sqrt(0.5), abs=1e-6)
    assert knn_novelty(x, bank, k=2)[0] == pytest.approx(0.5, abs=1e-6)
    assert knn_novelty(x, bank, k=99)[0] == pytest.approx(2 / 3, abs=1e-6)  # k capped at 3
    assert list(knn_novelty(x, bank[:0])) == [1.0, 1.0, 1.0]  # nothing known: all novel


def test_fit_threshold_is_a_quantile_of_held_out_scores() -> None:
    scores = np.linspace(0.0, 0.99, 100)
    threshold = fit_threshold(scores, 0.95)
    assert threshold == pytest.approx(0.95)  # an observed score, never between two
    assert 0.95 <= (scores <= threshold).mean() <= 0.96
    assert fit_threshold(scores, 1.0) == pytest.approx(0.99)
    assert fit_threshold(np.zeros(0)) == 1.0


def test_threshold_from_held_out_lines_separates_an_unseen_cluster() -> None:
    rng = np.random.default_rng(0)
    centres = np.eye(16)[:3] * 3
    known = np.concatenate([_cluster(rng, c, 60, 0.5) for c in centres])
    fold = np.arange(len(known)) % 5
    held = out_of_fold_scores(known, fold, np.ones(len(known), dtype=bool), k=1)
    assert held.shape == (len(known),)
    novelty = Novelty(known, fit_threshold(held, 0.95), k=1)
    assert novelty.bank.dtype == np.float16  # what the head stores
    fresh_known = np.concatenate([_cluster(rng, c, 40, 0.5) for c in centres])
    unseen = _cluster(rng, np.eye(16)[7] * 3, 40, 0.5)
    assert novelty.novel(fresh_known).mean() <= 0.15  # about 5% by construction
    assert novelty.novel(unseen).all()


def test_out_of_fold_scores_never_compare_a_line_with_itself() -> None:
    x = _unit(np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=np.float32))
    fold = np.array([0, 1, 0, 1])
    # each line's twin is in the other fold: distance 0; without the twin it would be 1
    assert list(out_of_fold_scores(x, fold, np.ones(4, dtype=bool))) == pytest.approx([0] * 4)
    only_first = np.array([True, False, True, True])
    scores = out_of_fold_scores(x, fold, only_first)
    assert len(scores) == 3 and max(scores) == pytest.approx(1.0)


def test_a_novel_line_never_acts_in_the_score() -> None:
    preds = [[("a", 0.99), ("none", 0.01)]] * 4
    gold = ["a", "a", "oos", "oos"]
    result = score(preds, gold, 0.9, novel=[False, True, True, False])
    assert result["in_scope"]["coverage"] == 0.5
    assert result["in_scope"]["selective_accuracy"] == 1.0
    assert result["oos"]["false_act_rate"] == 0.5
    assert score(preds, gold, 0.9)["oos"]["false_act_rate"] == 1.0


def test_saved_head_keeps_its_novelty(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from bot.heads import load_head
    from bot.heads.trained import TrainedHead

    bank = np.eye(8, dtype=np.float32)[:5]
    head = TrainedHead(
        "intent",
        ["a", "none"],
        np.zeros((2, 8), dtype=np.float32),
        np.zeros(2, dtype=np.float32),
        novelty=Novelty(bank, 0.6, k=2),
    )
    version = head.save(tmp_path / "h")
    loaded = load_head(tmp_path / "h")
    assert loaded.version == version
    assert loaded.novelty is not None  # type: ignore[attr-defined]
    assert loaded.novelty.threshold == 0.6 and loaded.novelty.k == 2  # type: ignore[attr-defined]
    assert np.array_equal(loaded.novelty.bank, bank.astype(np.float16))  # type: ignore[attr-defined]
    # a training line: 1 - (1 + 0) / 2 = 0.5; its opposite: 1 - (0 + 0) / 2 = 1
    probe = np.concatenate([bank[:1], -bank[:1]])
    assert loaded.novel_embedded(probe) == [False, True]  # type: ignore[attr-defined]


async def _intent_read(client: TestClient, text: str) -> dict[str, object]:
    resp = await client.post("/api/conversations")
    body = await resp.json()
    resp = await client.post(
        f"/api/conversations/{body['id']}/messages",
        headers={"Authorization": f"Bearer {body['token']}"},
        json={"text": text, "client_message_id": "m1"},
    )
    assert resp.status == 200
    reads = (await resp.json())["turn"]["reads"]
    return next(r for r in reads if r["head"] == "intent")


async def test_sample_pack_head_says_novel_far_from_every_intent(client: TestClient) -> None:
    pytest.importorskip("sentence_transformers")
    read = await _intent_read(client, "what's a good recipe for banana bread")
    assert read["version"].startswith("intent@")  # type: ignore[union-attr]
    assert read["outcome"] == "unsure" and read["reason"] == "novel"
    known = await _intent_read(client, "can I get a demo")
    assert known["outcome"] == "act" and known["answer"] == "demo"
    assert "reason" not in known
