"""Fitting the small parts of a head: a softmax layer over fixed embeddings, and its temperature.

Both are full-batch L-BFGS in torch: a few thousand rows of 384 numbers fit in well under a second
of CPU, so there is no reason for minibatches or a second ML library. Each fit runs on one torch
thread: its matrices are too small to split, and on a busy two-core machine the threads waiting on
each other made the sample pack's move head take 22 s to fit instead of under one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from bot.errors import ConfigError

if TYPE_CHECKING:  # imported where a fit runs: serving a head (softmax) needs no torch
    import torch


def require_torch() -> None:
    """Training needs torch, which the run-time install (`make run`, ``gatebot[all]``) leaves out:
    say how to get it rather than fail on a bare ModuleNotFoundError."""
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            "training a head needs torch: pip install 'gatebot[ml]' (`make test` installs it)"
        ) from exc


@contextmanager
def _one_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def fit_softmax(
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    l2: float = 1e-4,
    sample_weight: np.ndarray | None = None,
    steps: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression; returns (weight [C, D], bias [C])."""
    require_torch()
    import torch
    from torch.nn import functional as F

    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy(np.asarray(y, dtype=np.int64))
    wt = (
        torch.ones(len(yt))
        if sample_weight is None
        else torch.from_numpy(np.asarray(sample_weight, dtype=np.float32))
    )
    wt = wt / wt.sum()
    weight = torch.zeros(n_classes, xt.shape[1], requires_grad=True)
    bias = torch.zeros(n_classes, requires_grad=True)
    opt = torch.optim.LBFGS(
        [weight, bias], lr=1.0, max_iter=steps, history_size=20, line_search_fn="strong_wolfe"
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        nll = (F.cross_entropy(xt @ weight.T + bias, yt, reduction="none") * wt).sum()
        loss = nll + l2 * (weight**2).sum()
        loss.backward()
        return loss

    with _one_thread():
        opt.step(closure)
    return weight.detach().numpy().copy(), bias.detach().numpy().copy()


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The temperature T minimising held-out NLL of softmax(logits / T)."""
    import torch
    from torch.nn import functional as F

    lt = torch.from_numpy(np.asarray(logits, dtype=np.float32))
    yt = torch.from_numpy(np.asarray(y, dtype=np.int64))
    log_t = torch.zeros(1, requires_grad=True)  # optimise log T so T stays positive
    opt = torch.optim.LBFGS([log_t], lr=0.5, max_iter=100, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(lt / log_t.exp(), yt)
        loss.backward()
        return loss

    with _one_thread():
        opt.step(closure)
    return float(log_t.exp().item())


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)
