"""``gatebot scope eval``: how well the scope check tells what a pack covers from what it does not.

It runs the scope check exactly as a turn does (declared rules, then the domain check) over
lines that are outside the pack's domain, and over the pack's own texts held out one at a time,
and prints the share of outside lines declined and of pack texts kept. Outside lines come from
files: plain text (one message a line), CSV (its ``text`` column) or Schema-Guided Dialogue JSON
(the user's turns).
"""

from __future__ import annotations

import asyncio
import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

from bot.errors import GatebotError
from bot.packs import Pack, load_pack

#: Lines read from each outside file, evenly spread over it (a tweet file has 12,000).
DEFAULT_LIMIT = 1000


@dataclass
class Tally:
    name: str
    lines: int = 0
    declared: int = 0  # declined by a declared out-of-scope rule
    domain: int = 0  # declined by the domain check
    kept_declared: int = 0  # kept because a declared product, topic or intent keyword matched
    edge: int = 0  # of ``domain``: declined by the edge rule (close, but nothing ties it)

    @property
    def declined(self) -> float:
        return (self.declared + self.domain) / self.lines if self.lines else 0.0


def read_lines(path: Path, limit: int) -> list[str]:
    """The messages in ``path``, at most ``limit``, evenly spread (deterministic)."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            lines = [row["text"] for row in csv.DictReader(f)]
    elif path.suffix == ".json":
        dialogues = json.loads(path.read_text(encoding="utf-8"))
        lines = [
            t["utterance"] for d in dialogues for t in d["turns"] if t.get("speaker") == "USER"
        ]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
    lines = [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
    if len(lines) > limit:
        picks = np.linspace(0, len(lines) - 1, limit).round().astype(int)
        lines = [lines[i] for i in dict.fromkeys(picks.tolist())]
    return lines


class PrecomputedRows:
    """Stands in for the heads' batcher with rows embedded in bulk beforehand; a text not among
    them (the scope check embeds a message without the pack's words: see
    :meth:`bot.turn.scope.ScopeCheck._weigh_product_words`) is embedded when asked for."""

    def __init__(self, rows: dict[str, np.ndarray]) -> None:
        self.rows = rows

    async def embed(self, text: str) -> np.ndarray:
        if text not in self.rows:
            from bot.heads.encoder import embed_shipped

            self.rows[text] = (await asyncio.to_thread(embed_shipped, [text]))[0]
        return self.rows[text]


async def evaluate(pack: Pack, outside: dict[str, list[str]]) -> dict[str, Any]:
    """The fit, the pack's held-out texts kept, and each outside set's share declined."""
    from bot.heads.encoder import embed, load_encoder
    from bot.turn.domain import leave_one_out
    from bot.turn.reading import Readers
    from bot.turn.scope import NO_MATCH, ScopeCheck, check_scope

    every = list(dict.fromkeys(line for lines in outside.values() for line in lines))
    rows = await asyncio.to_thread(lambda: embed(load_encoder(), every))
    check = ScopeCheck(pack, Readers(pack), PrecomputedRows(dict(zip(every, rows, strict=True))))
    domain = await check.domain()
    if domain is None:
        raise GatebotError("the domain check cannot run here: embeddings are off or unavailable")
    tallies = []
    for name, lines in outside.items():
        tally = Tally(name, len(lines))
        for line in lines:
            scope = await check.check(line, {"values": {}})
            if scope["verdict"] == "out":
                declared = scope["rule"].startswith("out_of_scope:")
                tally.declared += declared
                tally.domain += not declared
                tally.edge += scope["rule"].startswith("domain:edge,")
            elif scope["score"] is None:
                tally.kept_declared += 1
        tallies.append(tally)
    # A pack text is kept when a declared rule keeps it or it is close enough to the others.
    held_out = leave_one_out(domain.vectors)
    threshold = domain.fit.threshold
    rules = [check_scope(pack, text, set()) for text in domain.texts]
    edge_out = await _edge_declined(check, domain, rules, held_out)
    kept = [
        (rule["verdict"] != "out" and rule["rule"] != NO_MATCH and not weighed)
        or (score >= threshold and not edged)
        for rule, score, weighed, edged in zip(
            rules, held_out, _weighed_out(check, domain, rules, held_out), edge_out, strict=True
        )
    ]
    return {
        "pack": pack.name,
        "version": pack.version,
        "threshold": threshold,
        "fit": domain.fit.describe(),
        "margin_fit": domain.margin_fit.describe() if domain.margin_fit else None,
        "inside": {"texts": len(kept), "kept": float(np.mean(kept))},
        "outside": [
            {
                "file": t.name,
                "lines": t.lines,
                "declined": round(t.declined, 4),
                "by_declared_rules": t.declared,
                "by_domain_check": t.domain,
                "kept_by_declared_keywords": t.kept_declared,
                "by_edge_rule": t.edge,
            }
            for t in tallies
        ],
    }


def _weighed_out(check: Any, domain: Any, rules: list[Any], held_out: np.ndarray) -> list[bool]:
    """Whether each pack text, kept by declared topic words alone, is declined by the margin
    (see :meth:`bot.turn.domain.Domain.margin`), itself held out as in the closeness."""
    from bot.turn.domain import closeness

    if domain.outside_vectors is None or domain.margin_fit is None:
        return [False] * len(rules)
    margins = held_out - closeness(domain.vectors, domain.outside_vectors)
    cut = domain.margin_fit.threshold
    return [
        check.topic_words_only(rule) and margin < cut
        for rule, margin in zip(rules, margins, strict=True)
    ]


async def _edge_declined(
    check: Any, domain: Any, rules: list[Any], held_out: np.ndarray
) -> list[bool]:
    """Whether each pack text that only the domain check keeps, in the edge band, is declined by
    the edge rule (see :meth:`bot.turn.scope.ScopeCheck._weigh_edge`), held out: its margin from
    its closeness to the other texts, its words against the other texts' words. The intent head
    reads the text as it is (an intent's own examples are its training lines, so for those the
    head's "none" is the less likely: the rule is, if anything, kinder to them here)."""
    from collections import Counter

    from bot.heads import NONE
    from bot.turn.anchor import content_words
    from bot.turn.domain import EDGE, closeness
    from bot.turn.scope import EDGE_MARGIN, NO_MATCH

    threshold = domain.fit.threshold
    counts = Counter(w for text in domain.texts for w in set(content_words(text)))
    margins = (
        held_out - closeness(domain.vectors, domain.outside_vectors)
        if domain.outside_vectors is not None
        else None
    )
    out = []
    for n, (text, rule, score) in enumerate(zip(domain.texts, rules, held_out, strict=True)):
        if rule["rule"] != NO_MATCH or not threshold <= score < threshold + EDGE:
            out.append(False)
            continue
        if margins is not None and margins[n] < EDGE_MARGIN:
            out.append(True)
            continue
        own = set(content_words(text))
        anchored = any(counts[w] - (w in own) > 0 for w in content_words(text))
        reading = await check.readers.intent(text, None, domain.vectors[n])
        out.append(
            not anchored
            and reading.answer == NONE
            and reading.confidence >= check.pack.gates["intent"]
        )
    return out


@click.group("scope")
def command() -> None:
    """Check how the scope check separates what a pack covers from everything else."""


@command.command("eval")
@click.option(
    "--pack",
    "pack_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The pack whose scope is checked.",
)
@click.option(
    "--outside",
    "files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Out-of-domain messages: .txt (a line each), .csv (text column), .json (SGD dialogues).",
)
@click.option("--limit", default=DEFAULT_LIMIT, show_default=True, help="Lines per file at most.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def eval_cmd(pack_dir: Path, files: tuple[Path, ...], limit: int, as_json: bool) -> None:
    """Share of outside lines declined and of the pack's held-out texts kept."""
    pack = load_pack(pack_dir)
    outside = {str(path): read_lines(path, limit) for path in files}
    report = asyncio.run(evaluate(pack, outside))
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"pack {report['pack']} ({report['version']}): {report['fit']}")
    if report["margin_fit"]:
        click.echo(f"  margin (pack minus outside lines): {report['margin_fit']}")
    inside = report["inside"]
    click.echo(
        f"  pack texts kept (held out, declared rules + domain): {inside['kept']:.1%} "
        f"of {inside['texts']}"
    )
    for row in report["outside"]:
        click.echo(
            f"  {row['file']}: declined {row['declined']:.1%} of {row['lines']} lines "
            f"({row['by_declared_rules']} by declared rules, {row['by_domain_check']} by the "
            f"domain check, {row['by_edge_rule']} of them by the edge rule; "
            f"{row['kept_by_declared_keywords']} kept by a declared keyword)"
        )
