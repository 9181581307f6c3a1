"""The reliability diagram: per confidence bin, how often the reader was right against how sure
it said it was, with how many readings fell in each bin. matplotlib is imported only here, only
when a PNG is asked for (the ``report`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.errors import ConfigError


def _matplotlib() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: a file only
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigError(
            "the reliability diagram needs matplotlib: pip install 'gatebot[report]'"
        ) from exc
    return plt


def draw(panels: list[dict[str, Any]], path: Path) -> Path:
    """One panel per reader: ``{"title", "bins": reliability rows, "ece", "gate"?}``."""
    plt = _matplotlib()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        bins = panel["bins"]
        ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1, label="calibrated")
        centres = [(b["lo"] + b["hi"]) / 2 for b in bins]
        widths = [(b["hi"] - b["lo"]) * 0.9 for b in bins]
        ax.bar(
            centres,
            [b["accuracy"] for b in bins],
            width=widths,
            color="#4c78a8",
            alpha=0.8,
            label="observed",
        )
        ax.plot(  # the bin's mean confidence: its gap to the bar's top is the miscalibration
            centres,
            [b["confidence"] for b in bins],
            "_",
            color="#e45756",
            markersize=9,
            markeredgewidth=2,
            label="said (mean confidence)",
        )
        if panel.get("gate") is not None:
            ax.axvline(panel["gate"], color="#54a24b", linewidth=1, label=f"gate {panel['gate']}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(panel.get("xlabel", "confidence"))
        ax.set_ylabel(panel.get("ylabel", "accuracy"))
        n = sum(b["n"] for b in bins)
        ax.set_title(f"{panel['title']}\nn={n}, ECE {panel['ece']:.3f}", fontsize=9)
        ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
