"""Fine-tuning the top of the encoder together with a softmax layer, cheaply enough for a CPU.

The lower encoder layers stay frozen, so their output for every training text is computed once and
cached; each epoch then runs only the top ``train_layers`` transformer layers forwards and
backwards. On 2 CPU cores that makes three epochs over BANKING77 cost about what one epoch of full
fine-tuning would. The encoder is changed in place; the caller saves it with the head.

On a CPU with bfloat16 arithmetic (AVX512-BF16 or AMX on x86, BF16 on ARM) the forward pass and
the loss run under bfloat16 autocast (issue #19's author measured about 1.6 times less CPU a
step there); the weights, their gradients and the optimiser stay float32, so the saved encoder is
the float32 one the numpy encoder loads. Without those instructions bfloat16 is emulated and costs
far more than float32 (12 times the CPU a step on an AVX2-only EPYC), so it stays off unless
asked for.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.nn import functional as F

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


def bf16_native() -> bool:
    """Whether this CPU computes in bfloat16 itself (so autocast to it pays)."""
    caps = torch.cpu.get_capabilities()
    return any(bool(caps.get(k)) for k in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))


def _autocast(bf16: bool) -> AbstractContextManager[Any]:
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)


def _bert(model: SentenceTransformer) -> Any:
    # The Hugging Face model under the first (Transformer) module of the pipeline.
    return model[0].auto_model


def _additive_mask(mask: torch.Tensor) -> torch.Tensor:
    # [B, L] of 1/0 -> [B, 1, 1, L] of 0/-inf-ish: accepted by eager and SDPA attention alike.
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def _run_layers(layers: list[Any], hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    add = _additive_mask(mask)
    for layer in layers:
        out = layer(hidden, add)
        hidden = out[0] if isinstance(out, tuple) else out  # transformers 4 returns a tuple
    return hidden


def _pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over real tokens, then unit length: what the shipped pipeline's pooling does."""
    m = mask[:, :, None].float()
    return F.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1.0), dim=-1)


def _batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length, so little compute goes on padding."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lengths.__getitem__)
        batches += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


def _cache_lower(
    model: SentenceTransformer, texts: list[str], n_frozen: int, max_len: int
) -> list[torch.Tensor]:
    """Each text's hidden states after the frozen layers, trimmed to its own length."""
    bert, tok = _bert(model), model.tokenizer
    layers = list(bert.encoder.layer)[:n_frozen]
    lengths = [len(ids) for ids in tok(texts, truncation=True, max_length=max_len)["input_ids"]]
    cache: list[torch.Tensor] = [torch.empty(0)] * len(texts)
    order = sorted(range(len(texts)), key=lengths.__getitem__)
    with torch.inference_mode():
        for start in range(0, len(order), 128):
            idx = order[start : start + 128]
            enc = tok(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=max_len,
                return_tensors="pt",
            )
            hidden = bert.embeddings(
                input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids")
            )
            hidden = _run_layers(layers, hidden, enc["attention_mask"])
            for row, i in enumerate(idx):
                cache[i] = hidden[row, : lengths[i]].clone()
    return cache


def _unfreeze_top(bert: Any, train_layers: int) -> tuple[int, list[Any], list[Any]]:
    """Freeze the encoder but its top ``train_layers`` layers. Returns how many stay frozen,
    the trainable layers and their parameters."""
    all_layers = list(bert.encoder.layer)
    n_frozen = max(0, len(all_layers) - train_layers)
    top = all_layers[n_frozen:]
    for p in bert.parameters():
        p.requires_grad_(False)
    params = [p for layer in top for p in layer.parameters()]
    for p in params:
        p.requires_grad_(True)
    return n_frozen, top, params


def _padded(cache: list[Any], lengths: list[int], idx: list[int], dim: int) -> tuple[Any, Any]:
    """A batch of cached lower-layer states, zero-padded to its longest text, with its mask."""
    width = max(lengths[i] for i in idx)
    hidden = torch.zeros(len(idx), width, dim)
    mask = torch.zeros(len(idx), width, dtype=torch.long)
    for row, i in enumerate(idx):
        hidden[row, : lengths[i]] = cache[i]
        mask[row, : lengths[i]] = 1
    return hidden, mask


def _epoch(
    top: list[Any],
    head: torch.nn.Module,
    scale: torch.Tensor,
    step: Any,
    data: tuple[list[torch.Tensor], list[int], torch.Tensor],
    batches: list[list[int]],
    bar: Any,
    bf16: bool = False,
) -> float:
    """One pass over ``batches``; returns the summed loss. ``step`` runs optimiser and schedule.
    ``bf16``: forward and loss under bfloat16 autocast (backward and the update stay outside)."""
    cache, lengths, y = data
    dim = cache[0].shape[-1]
    total = 0.0
    for idx in batches:
        hidden, mask = _padded(cache, lengths, idx, dim)
        with _autocast(bf16):
            emb = _pool(_run_layers(top, hidden, mask), mask)
            loss = F.cross_entropy(scale * head(emb), y[idx])
        step(loss)
        total += float(loss.detach()) * len(idx)
        bar.update(1)
    return total


def _stepper(
    encoder_params: list[Any], head_params: list[Any], lrs: tuple[float, float], steps: int
) -> Callable[[torch.Tensor], None]:
    """AdamW with a one-cycle schedule (encoder and head at their own rates), as one step call."""
    opt = torch.optim.AdamW(
        [{"params": encoder_params, "lr": lrs[0]}, {"params": head_params, "lr": lrs[1]}],
        weight_decay=0.01,
    )
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=list(lrs), total_steps=steps, pct_start=0.1, anneal_strategy="linear"
    )

    def step(loss: torch.Tensor) -> None:
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()

    return step


def finetune(
    model: SentenceTransformer,
    texts: list[str],
    labels: np.ndarray,
    n_classes: int,
    *,
    epochs: int = 3,
    train_layers: int = 6,
    batch_size: int = 32,
    lr: float = 1e-4,
    head_lr: float = 3e-3,
    seed: int = 0,
    max_len: int = 64,
    progress: bool = False,
    bf16: bool | None = None,
) -> None:
    """Train the top ``train_layers`` encoder layers (in place) with a throwaway softmax layer.

    The softmax layer is discarded: the caller refits one on the tuned embeddings and calibrates
    it, which is cheap and keeps one code path for frozen and fine-tuned heads. ``progress``
    shows a bar over every batch of every epoch, with the time left. ``bf16``: bfloat16 autocast
    for the steps; None uses it where the CPU has bfloat16 instructions (:func:`bf16_native`).
    """
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    rng = random.Random(seed)
    bf16 = bf16_native() if bf16 is None else bf16
    bert = _bert(model)
    n_frozen, top, params = _unfreeze_top(bert, train_layers)
    t0 = time.monotonic()
    cache = _cache_lower(model, texts, n_frozen, max_len)
    log.info(
        "cached %d texts below layer %d in %.0fs; steps in %s",
        len(texts),
        n_frozen,
        time.monotonic() - t0,
        "bfloat16" if bf16 else "float32",
    )
    head = torch.nn.Linear(cache[0].shape[-1], n_classes)
    scale = torch.nn.Parameter(torch.tensor(20.0))  # unit-length inputs need a large logit scale
    lengths = [int(c.shape[0]) for c in cache]
    steps = epochs * math.ceil(len(texts) / batch_size)
    step = _stepper(params, [*head.parameters(), scale], (lr, head_lr), steps)
    data = (cache, lengths, torch.from_numpy(np.asarray(labels, dtype=np.int64)))
    for layer in top:
        layer.train()
    with tqdm(total=steps, unit="batch", disable=not progress, dynamic_ncols=True) as bar:
        for epoch in range(epochs):
            bar.set_description(f"epoch {epoch + 1}/{epochs}")
            batches = _batches(lengths, batch_size, rng)
            total = _epoch(top, head, scale, step, data, batches, bar, bf16)
            bar.set_postfix(loss=f"{total / len(texts):.4f}")
            log.info(
                "epoch %d: loss %.4f, %.0fs", epoch + 1, total / len(texts), time.monotonic() - t0
            )
    for p in bert.parameters():
        p.requires_grad_(False)
    model.eval()
