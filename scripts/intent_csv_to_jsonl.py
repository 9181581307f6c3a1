"""Convert BANKING77 (PolyAI CSVs) to gatebot head JSONL, holding out intents as ``oos``.

The dataset has no out-of-scope class, so a fixed, seeded set of intents is held out and relabelled
``oos``. In test every held-out line is ``oos``. In train, a seeded ``--oos-train-share`` of each
held-out intent's lines is kept (as ``oos``), the way a deployment has logged some off-topic
traffic; ``--unseen-oos N`` of the held-out intents keep no train lines at all, to measure topics
the head has never seen. The data is read from the path given and never copied into the repository.

    python scripts/intent_csv_to_jsonl.py ../shared/data/banking77 --out /tmp/b77
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path


def _read(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return [(row["text"].strip(), row["category"]) for row in csv.DictReader(f)]


def _write(path: Path, rows: list[tuple[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for text, label in rows:
            f.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")


def convert(
    src: Path, out: Path, n_oos: int, oos_train_share: float, unseen: int, seed: int
) -> dict[str, int]:
    train, test = _read(src / "train.csv"), _read(src / "test.csv")
    intents = sorted({label for _, label in train})
    rng = random.Random(seed)
    held = sorted(rng.sample(intents, n_oos))
    never = set(rng.sample(held, unseen))
    train_rows = [(t, lab) for t, lab in train if lab not in held]
    for intent in held:
        if intent in never:
            continue
        lines = [t for t, lab in train if lab == intent]
        keep = rng.sample(lines, round(len(lines) * oos_train_share))
        train_rows += [(t, "oos") for t in keep]
    test_rows = [(t, "oos" if lab in held else lab) for t, lab in test]
    rng.shuffle(train_rows)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "train.jsonl", train_rows)
    _write(out / "test.jsonl", test_rows)
    info = {
        "held_out": held,
        "unseen_in_train": sorted(never),
        "seed": seed,
        "oos_train_share": oos_train_share,
    }
    (out / "oos_intents.json").write_text(json.dumps(info, indent=1) + "\n")
    return {
        "train": len(train_rows),
        "train_oos": sum(lab == "oos" for _, lab in train_rows),
        "test": len(test_rows),
        "test_oos": sum(lab == "oos" for _, lab in test_rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="folder with train.csv and test.csv")
    parser.add_argument("--out", type=Path, required=True, help="folder for train/test.jsonl")
    parser.add_argument("--oos-intents", type=int, default=10, help="intents held out as oos")
    parser.add_argument(
        "--oos-train-share",
        type=float,
        default=0.25,
        help="share of each held-out intent's train lines kept in train (as oos)",
    )
    parser.add_argument(
        "--unseen-oos", type=int, default=0, help="held-out intents with no lines in train"
    )
    parser.add_argument("--seed", type=int, default=77)
    args = parser.parse_args()
    counts = convert(
        args.src, args.out, args.oos_intents, args.oos_train_share, args.unseen_oos, args.seed
    )
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
