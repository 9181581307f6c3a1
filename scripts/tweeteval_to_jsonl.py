"""Convert TweetEval sentiment (text.txt, labels.txt, mapping.txt) to gatebot head JSONL.

Writes a seeded train/test split so the shipped sentiment head's accuracy is measured on lines it
never saw. The data is read from the path given and never copied into the repository.

    python scripts/tweeteval_to_jsonl.py ../shared/data/tweeteval-sentiment --out /tmp/tweet
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def convert(src: Path, out: Path, test_share: float, seed: int) -> dict[str, int]:
    mapping = dict(
        line.split("\t", 1) for line in (src / "mapping.txt").read_text().splitlines() if line
    )
    texts = (src / "text.txt").read_text(encoding="utf-8").splitlines()
    labels = (src / "labels.txt").read_text().splitlines()
    if len(texts) != len(labels):
        raise SystemExit(f"{len(texts)} texts but {len(labels)} labels")
    rows = [(t.strip(), mapping[lab.strip()].strip()) for t, lab in zip(texts, labels, strict=True)]
    random.Random(seed).shuffle(rows)
    n_test = round(len(rows) * test_share)
    out.mkdir(parents=True, exist_ok=True)
    for name, part in (("test", rows[:n_test]), ("train", rows[n_test:])):
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            for text, label in part:
                f.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
    return {"train": len(rows) - n_test, "test": n_test}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="folder with text.txt, labels.txt, mapping.txt")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--test-share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    print(json.dumps(convert(args.src, args.out, args.test_share, args.seed)))


if __name__ == "__main__":
    main()
