"""The numpy encoder computes what sentence-transformers computes, and serving needs no torch."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bot.heads.encoder import (
    MAX_SEQ_LENGTH,
    RowCache,
    embed,
    embed_shipped,
    load_encoder,
    shipped_path,
    shipped_rows,
)
from bot.heads.encoder_numpy import NumpyEncoder

ROOT = Path(__file__).resolve().parents[1]
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(
    not HAS_TORCH, reason="torch is not installed (the dev extra): nothing to compare against"
)

TEXTS = [
    "hello",
    "",
    "   what's the weather in Paris?  ",
    "I want a REFUND for order #1042 now!!!",
    "Ünïcödé café naïve 日本語 テスト 🙂",
    "How do I reset my password? The link in the email says it expired.",
    "can i add 2 seats and 1 storage pack to my plan",
    "word " * 300,  # cut at the token limit
    "Acme Monitor pages the on-call engineer when an alert is not acknowledged in 5 minutes. " * 12,
]


@pytest.fixture(scope="module")
def torch_shipped() -> object:
    from bot.heads.encoder import load_torch

    return load_torch(shipped_path())


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


@needs_torch
@pytest.mark.parametrize("limit", [MAX_SEQ_LENGTH, 256])
def test_the_numpy_pass_agrees_with_sentence_transformers(
    torch_shipped: object, limit: int
) -> None:
    model = torch_shipped
    model.max_seq_length = limit  # type: ignore[attr-defined]
    expected = embed(model, TEXTS)
    numpy_encoder = NumpyEncoder(shipped_path())
    batched = numpy_encoder.encode(TEXTS, batch_size=4, max_length=limit)
    alone = np.stack([numpy_encoder.encode([t], max_length=limit)[0] for t in TEXTS])
    assert cosines(batched, expected).min() >= 0.9999
    assert cosines(alone, expected).min() >= 0.9999  # padding in a batch changes nothing
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


@needs_torch
def test_a_fine_tuned_heads_encoder_folder_loads_and_agrees(
    torch_shipped: object, tmp_path: Path
) -> None:
    """A head's ``encoder/`` is a saved SentenceTransformer; change its weights a little, as
    fine-tuning does, and the numpy pass must follow them, not the shipped ones."""
    import torch

    model = torch_shipped
    model.max_seq_length = MAX_SEQ_LENGTH  # type: ignore[attr-defined]
    layer = model[0].auto_model.encoder.layer[5].output.dense  # type: ignore[index]
    saved = layer.weight.detach().clone()
    try:
        with torch.no_grad():
            layer.weight.mul_(1.5)
        model.save(str(tmp_path / "encoder"))  # type: ignore[attr-defined]
        expected = embed(model, TEXTS[:7])
    finally:
        with torch.no_grad():
            layer.weight.copy_(saved)
    tuned = load_encoder(tmp_path / "encoder")
    got = embed(tuned, TEXTS[:7])
    assert cosines(got, expected).min() >= 0.9999
    assert cosines(got, embed(load_encoder(), TEXTS[:7])).min() < 0.999  # not the shipped one


def test_the_encoder_is_loaded_once_and_truncates_where_asked() -> None:
    encoder = load_encoder()
    assert load_encoder() is encoder and encoder.max_seq_length == MAX_SEQ_LENGTH
    assert encoder.folder_max_length == 256
    long = "word " * 300
    assert len(encoder.token_ids([long])[0]) == MAX_SEQ_LENGTH
    assert len(encoder.token_ids([long], 256)[0]) == 256
    short, cut, whole = embed(encoder, ["word " * 10, long]), embed(encoder, [long]), None
    whole = embed(encoder, [long], max_length=256)
    assert np.allclose(short[1], cut[0], atol=1e-6) and not np.allclose(cut[0], whole[0], atol=1e-3)


def test_a_folder_this_pass_cannot_compute_is_refused(tmp_path: Path) -> None:
    import json
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(shipped_path(), folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ValueError, match="relu"):
        NumpyEncoder(folder)


def test_shipped_rows_are_one_cache_for_the_process() -> None:
    text = "a text only this test embeds, once"
    embed_shipped([text])
    row = shipped_rows.get(text)
    assert row is not None and not row.flags.writeable
    again = embed_shipped([text, text])
    assert again.shape == (2, 384) and np.array_equal(again[0], row)
    cache = RowCache(rows=2)
    cache.put_many(["a", "b", "c"], list(np.eye(3, dtype=np.float32)))
    assert cache.get("a") is None and len(cache) == 2


SERVE_ONE_ANSWER = """
import asyncio, sys
from bot.app import App
from bot.config import Settings

async def main():
    app = App(Settings.from_env())
    await app.start(channels=False)
    try:
        retriever = app.retriever
        calls = []
        original = retriever.embedder.embed_query
        retriever.embedder.embed_query = lambda q: calls.append(q) or original(q)
        conv = app.store.create_conversation("web")[0]
        result = await app.agent.handle(conv, "How long are build caches kept?", "m1")
        print("facts", result.record["facts"][:1])
        print("taken", retriever.vectors_taken, "embedded here", len(calls))
        print("heads", sorted(r.get("head", "") for r in result.record["reads"]))
    finally:
        await app.stop()

asyncio.run(main())
print("torch imported" if "torch" in sys.modules else "no torch")
print("st imported" if "sentence_transformers" in sys.modules else "no sentence-transformers")
"""


def test_an_answer_turn_embeds_its_message_once_and_imports_no_torch(tmp_path: Path) -> None:
    """The lean install (`make run`) has no torch: a whole answer turn, with the trained heads
    and hybrid search, must not import it; and knowledge search takes the message's vector the
    heads' batcher made rather than embedding the message again."""
    env = {
        **os.environ,
        "GATEBOT_DATA_DIR": str(tmp_path),
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "GATEBOT_RECORDERS": "memory",
    }
    env.pop("GATEBOT_ENCODER", None)
    done = subprocess.run(
        [sys.executable, "-c", SERVE_ONE_ANSWER],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "'mode': 'hybrid'" in out, out
    assert "taken 2 embedded here 0" in out, out  # the check's evidence and the search
    assert "intent" in out and "sentiment" in out, out  # the trained heads read
    assert "no torch" in out and "no sentence-transformers" in out, out
