"""``gatebot heads``: train a head from JSONL or from a pack's intents, and evaluate one."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.errors import GatebotError

if TYPE_CHECKING:
    from bot.heads.train import TrainOptions

DEFAULT_GATE = 0.9


def _options(
    epochs: int,
    train_layers: int,
    no_none: bool,
    seed: int,
    novelty: tuple[float, float],
    bf16: bool | None = None,
) -> TrainOptions:
    # Imported here so `gatebot --help` does not pay for torch.
    from bot.heads.train import TrainOptions

    false_act, gate = novelty
    return TrainOptions(
        epochs=epochs,
        train_layers=train_layers,
        none_class=not no_none,
        seed=seed,
        progress=True,
        novelty_false_act=false_act,
        gate=gate,
        bf16=bf16,
    )


def _placed(fitted: dict[str, object]) -> str:
    """How training placed the novelty threshold, in words (empty for a head saved before)."""
    if not fitted:
        return ""
    if "false_act" not in fitted:
        return f" (quantile {fitted.get('quantile')} of held-out known lines)"
    few = fitted.get("hidden_too_few")
    trust = f", too few to place it (under {few})" if few else ""
    return (
        f" (by {fitted['by']}; {fitted['hidden_lines']} lines of hidden intents{trust}, "
        f"{fitted['hidden_false_act']} of them act at gate {fitted['gate']}, "
        f"target {fitted['false_act']})"
    )


def _wrote(out: Path) -> str:
    """The files a head folder holds and their sizes, for the line that says what was written."""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    total = sum(p.stat().st_size for p in files)
    top = sorted({p.relative_to(out).parts[0] for p in files})
    return f"{out} ({', '.join(top)}; {total / 1024:.0f} KB)"


def _train_candidate(pack_dir: Path | None, name: str, opts: TrainOptions, holdout: float) -> None:
    if pack_dir is None or name != "intent":
        raise click.UsageError("--candidate trains --pack's intent head")
    from bot.cli.heads_outcomes import train_candidate

    click.echo(train_candidate(pack_dir, name, opts, holdout))


@click.group("heads")
def command() -> None:
    """Train and evaluate the small classifiers (heads) that read intent and sentiment."""


@command.command("train")
@click.option(
    "--data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL lines of {"text": ..., "label": ...}; label "oos" means out of scope.',
)
@click.option(
    "--pack",
    "pack_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Train the pack's intent head (from its intents' and flows' examples) or move head "
    "(--name move) into PACK/heads/NAME.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the head to (with --data).",
)
@click.option("--name", default="intent", show_default=True, help="What the head reads.")
@click.option(
    "--epochs",
    default=0,
    show_default=True,
    help="Encoder fine-tuning epochs; 0 keeps the shipped encoder frozen (small head).",
)
@click.option(
    "--train-layers",
    default=6,
    show_default=True,
    help="Top encoder layers tuned when --epochs > 0 (6: all of them; 2 costs half the CPU and "
    "covered less on a large intent set; see README).",
)
@click.option(
    "--bf16/--no-bf16",
    default=None,
    help="Fine-tune in bfloat16 autocast (weights stay float32). Default: on where the CPU has "
    "bfloat16 instructions (AVX512-BF16, AMX), off elsewhere, where it is many times slower.",
)
@click.option("--no-none", is_flag=True, help="No 'none' class (unless the data has oos lines).")
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--novelty-false-act",
    default=0.03,
    show_default=True,
    help="Place the novelty threshold so at most this share of an intent hidden from the fit "
    "acts (1: only the quantile of known lines places it).",
)
@click.option(
    "--gate", default=DEFAULT_GATE, show_default=True, help="The intent gate the head acts at."
)
@click.option(
    "--candidate",
    is_flag=True,
    help="With --pack: train on the pack's lines plus the turns staff labelled (DATABASE_URL), "
    "write PACK/heads/NAME.candidate and pin it as the candidate read in the shadow.",
)
@click.option(
    "--holdout",
    default=0.3,
    show_default=True,
    help="With --candidate: the share of labelled turns kept out of training, for promotion.",
)
def train(
    data: Path | None,
    pack_dir: Path | None,
    out: Path | None,
    name: str,
    epochs: int,
    train_layers: int,
    bf16: bool | None,
    no_none: bool,
    seed: int,
    novelty_false_act: float,
    gate: float,
    candidate: bool,
    holdout: float,
) -> None:
    """Train a head and print its version (NAME@HASH) for a pack to pin."""
    from bot.heads.train import read_jsonl, train_head

    if (data is None) == (pack_dir is None):
        raise click.UsageError("give exactly one of --data or --pack")
    if candidate:  # the pack's lines and staff's labels, pinned beside the head, never acting
        opts = _options(epochs, train_layers, no_none, seed, (novelty_false_act, gate), bf16)
        return _train_candidate(pack_dir, name, opts, holdout)
    if pack_dir is not None:
        from bot.packs import load_pack

        pack = load_pack(pack_dir)
        if name == "move":
            from bot.heads.moves import move_rows

            rows = move_rows(pack)
            no_none = True  # every line names a move; the playbook's preference is the fallback
        elif name == "intent":
            rows = pack.intent_lines()  # the intents' examples and the flows' own
        else:
            raise click.UsageError("--pack trains --name intent or --name move")
        out = out or pack_dir / "heads" / name
    else:
        assert data is not None
        if out is None:
            raise click.UsageError("--out is required with --data")
        try:
            rows = read_jsonl(data)
        except ValueError as exc:
            raise GatebotError(str(exc)) from exc
    start = time.monotonic()
    try:
        opts = _options(epochs, train_layers, no_none, seed, (novelty_false_act, gate), bf16)
        head = train_head(rows, name, out, opts)
    except ValueError as exc:
        raise GatebotError(str(exc)) from exc
    novelty = ""
    if head.novelty:
        novelty = f", novelty threshold {head.novelty.threshold:.4f}{_placed(head.novelty.fitted)}"
    click.echo(
        f"trained {head.version} on {len(rows)} lines in {time.monotonic() - start:.1f}s "
        f"(temperature {head.temperature:.3f}{novelty}); wrote {_wrote(out)}",
        err=True,
    )
    click.echo(head.version)


@command.command("eval")
@click.option(
    "--head",
    "head_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--data", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--gate",
    default=DEFAULT_GATE,
    show_default=True,
    help="Act only when the top label is not none and its probability is at least this.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def evaluate_cmd(head_dir: Path, data: Path, gate: float, as_json: bool) -> None:
    """Coverage, selective accuracy, out-of-scope false acts and calibration at a gate."""
    from bot.cli.output import progress
    from bot.heads import load_head
    from bot.heads.evaluate import EVAL_BATCH, evaluate
    from bot.heads.train import read_jsonl

    try:
        rows = read_jsonl(data)
        head = load_head(head_dir)
    except (ValueError, FileNotFoundError) as exc:
        raise GatebotError(str(exc)) from exc
    texts, gold = [t for t, _ in rows], [label for _, label in rows]
    batches = (len(texts) + EVAL_BATCH - 1) // EVAL_BATCH
    result = evaluate(
        head, texts, gold, gate, lambda b: progress(b, "heads eval (batches)", total=batches)
    )
    if as_json:
        click.echo(json.dumps(result))
        return
    ins, oos = result["in_scope"], result["oos"]
    click.echo(f"{head.version} on {result['n']} lines at gate {gate}")
    click.echo(
        f"  in scope ({ins['n']}): coverage {ins['coverage']:.3f}, selective accuracy "
        f"{ins['selective_accuracy']:.3f}, accuracy {ins['accuracy']:.3f}"
    )
    click.echo(f"  out of scope ({oos['n']}): false act rate {oos['false_act_rate']:.3f}")
    novelty = result.get("novelty")
    if novelty:
        click.echo(
            f"  novelty threshold {novelty['threshold']:.4f}: held back "
            f"{novelty['in_scope_held_back']:.3f} of in-scope and {novelty['oos_held_back']:.3f} "
            f"of out-of-scope lines; novel false act rate {oos['false_act_rate']:.3f} "
            f"(softmax alone {novelty['oos_false_act_rate_softmax_only']:.3f})"
        )
        if novelty.get("fitted"):
            click.echo(f"  threshold placed{_placed(novelty['fitted'])}")
    click.echo(f"  ECE {result['ece']:.4f}")


if __name__ == "__main__":
    # `python -m bot.cli.heads ...` works before the group is registered with `gatebot`.
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    command()
