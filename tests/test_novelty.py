"""Novelty: the nearest-neighbour score, the threshold fitted on held-out lines, a saved head that
keeps both, the eval that counts a novel line as abstaining, and the sample pack's head saying
"novel" through REST about a message far from every intent; and the threshold placed by intents
hidden from the fit, so that an intent nobody trained acts on at most a target share of lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiohttp.test_utils import TestClient

from bot.heads.evaluate import evaluate_embedded, score
from bot.heads.heldout import (
    HiddenLines,
    HideOptions,
    false_act_threshold,
    hide_intents,
    intent_groups,
)
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
    assert loaded.novelty.fitted == {}  # type: ignore[attr-defined]  # saved without: says nothing
    # a training line: 1 - (1 + 0) / 2 = 0.5; its opposite: 1 - (0 + 0) / 2 = 1
    probe = np.concatenate([bank[:1], -bank[:1]])
    assert loaded.novel_embedded(probe) == [False, True]  # type: ignore[attr-defined]
    report = evaluate_embedded(loaded, probe, ["a", "oos"], 0.0)
    assert report["oos"]["false_act_rate"] == 0.0  # the opposite line is novel: it never acts
    assert report["novelty"]["threshold"] == 0.6 and "fitted" not in report["novelty"]


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


def test_intent_groups_deal_every_intent_once() -> None:
    groups = intent_groups(list(range(10)), 4, seed=3)
    assert len(groups) == 4 and sorted(i for group in groups for i in group) == list(range(10))
    assert groups == intent_groups(list(range(10)), 4, seed=3)  # the same for the same seed
    assert len(intent_groups([0, 1], 8, seed=0)) == 2  # never more folds than intents


def test_false_act_threshold_lets_at_most_the_target_share_act() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], dtype=np.float32)
    passed = np.array([True] * 8 + [False] * 2)  # the softmax passes the gate for eight
    threshold = false_act_threshold(HiddenLines(scores, passed), 0.2)
    assert threshold is not None
    acting = passed & (scores <= threshold)
    assert acting.sum() == 2  # 0.2 of ten lines: the two least novel act, the third does not
    assert 0.2 <= threshold < 0.3
    # the softmax alone already keeps within the target: nothing to place
    assert false_act_threshold(HiddenLines(scores, np.zeros(10, dtype=bool)), 0.2) is None
    assert false_act_threshold(HiddenLines(scores[:0], passed[:0]), 0.2) is None


def test_hidden_intents_are_scored_by_a_fit_that_never_saw_them() -> None:
    rng = np.random.default_rng(1)
    centres = np.eye(16)[:4] * 4
    x = np.concatenate(
        [_cluster(rng, c, 30, 0.5) for c in centres] + [_unit(rng.normal(size=(20, 16)))]
    )
    y = np.repeat(np.arange(5), [30, 30, 30, 30, 20])  # class 4 is "none"
    hidden = hide_intents(x, y, 4, HideOptions(temperature=1.0, gate=0.9, k=1, l2=1e-4))
    assert len(hidden.scores) == 120  # every intent line hidden once, no "none" line
    # far from every other intent: novel by distance, whatever the softmax made of them
    known = out_of_fold_scores(x[:120], np.arange(120) % 5, np.ones(120, dtype=bool))
    assert hidden.scores.min() > np.quantile(known, 0.95)


def _sibling_lines(
    rng: np.random.Generator, where: tuple[int, float], n: int, vectors: dict[str, np.ndarray]
) -> list[str]:
    """``n`` texts (written into ``vectors``) whose embeddings are noisy unit vectors at an angle
    from axis ``axis`` toward axis ``axis + 8``: at 0 and 0.5 two sibling intents, at -0.5 a
    sibling on the other side."""
    axis, angle = where
    centre = np.zeros(24)
    centre[axis], centre[axis + 8] = np.cos(angle) * 4, np.sin(angle) * 4
    texts = [f"{axis} {angle} {len(vectors) + i}" for i in range(n)]
    for text, row in zip(texts, _cluster(rng, centre, n, 0.4), strict=True):
        vectors[text] = row
    return texts


def test_a_head_trained_with_hidden_intents_rarely_acts_on_an_unseen_sibling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three pairs of sibling intents, and an intent never trained just beside one of them. Its
    lines sit about as near the trained lines as those lines sit to each other, so a quantile of
    known lines lets it act; hiding each intent from the fit in turn shows how near is too near."""
    from bot.heads import load_head, train
    from bot.heads.none_examples import GENERIC_NONE

    rng = np.random.default_rng(0)
    vectors: dict[str, np.ndarray] = {t: _unit(rng.normal(size=(1, 24)))[0] for t in GENERIC_NONE}
    rows = [
        (text, f"intent{axis}-{angle}")
        for axis in range(3)
        for angle in (0.0, 0.5)
        for text in _sibling_lines(rng, (axis, angle), 40, vectors)
    ]
    fresh = np.stack([vectors[t] for t in _sibling_lines(rng, (0, 0.0), 40, vectors)])
    unseen = np.stack([vectors[t] for t in _sibling_lines(rng, (0, -0.5), 40, vectors)])
    monkeypatch.setattr(train, "embed", lambda _enc, texts: np.stack([vectors[t] for t in texts]))
    monkeypatch.setattr(train, "load_encoder", lambda: None)

    def acts(head: train.TrainedHead, x: np.ndarray) -> float:
        top = [ranked[0] for ranked in head.predict_embedded(x)]
        novel = head.novel_embedded(x)
        acted = [a != "none" and p >= 0.9 and not n for (a, p), n in zip(top, novel, strict=True)]
        return float(np.mean(acted))

    quantile_only = train.TrainOptions(novelty_false_act=None)
    by_quantile = train.train_head(rows, "intent", tmp_path / "q", quantile_only)
    assert by_quantile.novelty is not None and by_quantile.novelty.fitted["by"] == "quantile"
    head = train.train_head(rows, "intent", tmp_path / "h", train.TrainOptions())
    assert head.novelty is not None
    fitted = head.novelty.fitted
    assert fitted["by"] == "hidden intents" and fitted["hidden_lines"] == 240
    assert fitted["hidden_false_act"] <= 0.03 and fitted["gate"] == 0.9
    assert head.novelty.threshold < by_quantile.novelty.threshold  # never looser than the quantile
    assert acts(by_quantile, unseen) >= 0.2
    assert acts(head, unseen) <= 0.1
    assert acts(head, fresh) >= 0.5  # a known intent's fresh lines still act, fewer of them
    assert load_head(tmp_path / "h").novelty.fitted == fitted  # type: ignore[attr-defined]
    # Too few hidden lines to trust a false-act rate on (a small pack): the quantile places it.
    few = train.train_head(
        rows, "intent", tmp_path / "f", train.TrainOptions(novelty_min_hidden=241)
    )
    assert few.novelty is not None
    assert few.novelty.fitted["by"] == "quantile" and few.novelty.fitted["hidden_too_few"] == 241
    assert few.novelty.threshold == by_quantile.novelty.threshold


def test_only_the_given_intents_are_hidden_when_named() -> None:
    rng = np.random.default_rng(2)
    x = np.concatenate([_cluster(rng, c, 10, 0.5) for c in np.eye(16)[:4] * 4])
    y = np.repeat(np.arange(4), 10)
    opts = HideOptions(temperature=1.0, gate=0.9, k=1, l2=1e-4, only=[[1, 3]])
    assert len(hide_intents(x, y, None, opts).scores) == 20  # intents 1 and 3, once each


def test_a_tune_hides_and_teaches_as_none_disjoint_seeded_intents() -> None:
    from bot.heads import NONE
    from bot.heads.train import TrainOptions, _tune_groups

    labels = [f"i{n}" for n in range(20)] + [NONE]
    opts = TrainOptions(epochs=1, tune_hidden=0.1, tune_as_none=0.2)
    hidden, as_none = _tune_groups(labels, opts)
    assert len(hidden) == 2 and len(as_none) == 4 and not set(hidden) & set(as_none)
    assert labels.index(NONE) not in hidden + as_none
    assert _tune_groups(labels, opts) == (hidden, as_none)  # the same draw for the same seed
    assert _tune_groups(labels[:-1], opts)[1] == []  # nothing to learn as none without it
    assert _tune_groups(labels, TrainOptions(epochs=1)) == ([], [])
