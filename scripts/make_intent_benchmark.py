"""Build a CLINC150-shaped intent benchmark from public data: train/val/test JSONL for gatebot.

We do not have CLINC150 (150 intents, ~100 train lines each, plus out-of-scope lines: 100 in
train, 100 in val, 1,000 in test), so this builds a stand-in of the same shape from the data in
the folders given. Nothing is copied into the repository; the JSONL goes to ``--out``.

In scope (``label`` = the intent):

- BANKING77's 77 intents (``banking77/train.csv``, ``test.csv``): per intent, val = 20 lines of
  train.csv (a fifth where it has fewer than 100), train = up to 100 of the rest, test = 30 of
  test.csv's 40.
- SGD intents mined from the dialogues (``sgd/dialogues_*.json``): a user turn whose frame has
  an ``INFORM_INTENT`` action is a line of that frame's service and intent (label
  ``sgd.Service.Intent``, e.g. ``sgd.Banks_1.CheckBalance``); distinct utterances only; intents
  with at least ``--min-sgd`` (20) distinct lines are kept. Each is split test = min(30, 20%),
  val = min(20, 15%), train = min(100, the rest). With the three dialogue files of the SGD
  sample that is 7 intents (CheckBalance, TransferMoney, FindRestaurants, ReserveRestaurant,
  GetTimesForMovie, GetRide, GetWeather), five with fewer than 100 train lines (36 to 73).

Out of scope (``label`` = ``oos``): every distinct user utterance of an SGD service that has no
kept intent (in the sample: Services_2, Homes_1, Music_2: dentists, apartments, songs, plus their
"thanks, that's all"), then TweetEval tweets (``tweeteval-sentiment/text.txt``) to fill 100 train,
100 val and 1,000 test lines, dealt from one seeded shuffle. Tweets are further from the intents
than CLINC's out-of-scope queries (which are short requests a bank/travel bot cannot serve), so
this stand-in's oos is easier than CLINC's; its SGD lines are the near-domain ones.

Every text appears once across all splits (case- and space-insensitive). ``--out`` also gets
``info.json`` with the counts and the intents. From /work/shared/data with the default seed: 84
intents; train 7,638 lines (100 oos, 18 of them SGD), val 1,678 (100 oos), test 3,442 (1,000
oos, 151 of them SGD). Half CLINC150's size: a head trains in about half CLINC's time.

    python scripts/make_intent_benchmark.py /work/shared/data --out /tmp/intents
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from collections import defaultdict
from pathlib import Path

OOS = "oos"
SPLITS = ("train", "val", "test")
Row = tuple[str, str]


def _key(text: str) -> str:
    return " ".join(text.lower().split())


class _Distinct:
    """Remembers every text taken, so no line is in two splits (or twice in one)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def take(self, texts: list[str]) -> list[str]:
        out = []
        for text in texts:
            key = _key(text)
            if key and key not in self.seen:
                self.seen.add(key)
                out.append(text.strip())
        return out


def _banking77(src: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    def read(name: str) -> dict[str, list[str]]:
        by: dict[str, list[str]] = defaultdict(list)
        with (src / name).open(encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                by[row["category"]].append(row["text"])
        return by

    return read("train.csv"), read("test.csv")


def _sgd(src: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(intent -> INFORM_INTENT user lines, service -> every user line), in file order."""
    intents: dict[str, list[str]] = defaultdict(list)
    by_service: dict[str, list[str]] = defaultdict(list)
    for path in sorted(src.glob("dialogues_*.json")):
        for dialogue in json.loads(path.read_text(encoding="utf-8")):
            for turn in dialogue["turns"]:
                if turn["speaker"] != "USER":
                    continue
                for frame in turn["frames"]:
                    by_service[frame["service"]].append(turn["utterance"])
                    for action in frame["actions"]:
                        if action["act"] == "INFORM_INTENT" and action["values"]:
                            name = f"sgd.{frame['service']}.{action['values'][0]}"
                            intents[name].append(turn["utterance"])
    return intents, by_service


def _split_banking(
    train: dict[str, list[str]], test: dict[str, list[str]], seen: _Distinct, rng: random.Random
) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {s: [] for s in SPLITS}
    for intent in sorted(train):
        lines = seen.take(train[intent])
        rng.shuffle(lines)
        n_val = min(20, len(lines) // 5)
        out["val"] += [(t, intent) for t in lines[:n_val]]
        out["train"] += [(t, intent) for t in lines[n_val : n_val + 100]]
        held = seen.take(test[intent])
        rng.shuffle(held)
        out["test"] += [(t, intent) for t in held[:30]]
    return out


def _split_sgd(
    intents: dict[str, list[str]], min_lines: int, seen: _Distinct, rng: random.Random
) -> tuple[dict[str, list[Row]], list[str]]:
    out: dict[str, list[Row]] = {s: [] for s in SPLITS}
    kept = []
    for intent in sorted(intents):
        lines = seen.take(intents[intent])
        if len(lines) < min_lines:
            continue
        kept.append(intent)
        rng.shuffle(lines)
        n_test, n_val = min(30, round(len(lines) * 0.2)), min(20, round(len(lines) * 0.15))
        out["test"] += [(t, intent) for t in lines[:n_test]]
        out["val"] += [(t, intent) for t in lines[n_test : n_test + n_val]]
        out["train"] += [(t, intent) for t in lines[n_test + n_val : n_test + n_val + 100]]
    return out, kept


def _oos(
    data: Path, other_services: list[str], by_service: dict[str, list[str]], seen: _Distinct
) -> tuple[list[str], list[str]]:
    """(near-domain SGD lines, tweets), each distinct and unseen."""
    near = seen.take([t for s in other_services for t in by_service[s]])
    tweets = (data / "tweeteval-sentiment" / "text.txt").read_text(encoding="utf-8").splitlines()
    return near, tweets


def build(data: Path, out: Path, min_sgd: int, sizes: tuple[int, int, int], seed: int) -> dict:
    rng = random.Random(seed)
    seen = _Distinct()
    b_train, b_test = _banking77(data / "banking77")
    sgd_intents, by_service = _sgd(data / "sgd")
    rows = _split_banking(b_train, b_test, seen, rng)
    sgd_rows, kept = _split_sgd(sgd_intents, min_sgd, seen, rng)
    kept_services = {name.split(".")[1] for name in kept}
    other = sorted(s for s in by_service if s not in kept_services)
    near, tweets = _oos(data, other, by_service, seen)
    rng.shuffle(tweets)
    pool = near + seen.take(tweets[: sum(sizes) * 2])[: max(0, sum(sizes) - len(near))]
    rng.shuffle(pool)
    start = 0
    for split, size in zip(SPLITS, sizes, strict=True):
        rows[split] += sgd_rows[split] + [(t, OOS) for t in pool[start : start + size]]
        start += size
    out.mkdir(parents=True, exist_ok=True)
    near_keys = {_key(t) for t in near}
    info: dict = {"seed": seed, "sgd_intents": kept, "oos_sgd_services": other, "splits": {}}
    for split in SPLITS:
        rng.shuffle(rows[split])
        with (out / f"{split}.jsonl").open("w", encoding="utf-8") as f:
            for text, label in rows[split]:
                f.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
        oos = [t for t, lab in rows[split] if lab == OOS]
        info["splits"][split] = {
            "lines": len(rows[split]),
            "intents": len({lab for _, lab in rows[split] if lab != OOS}),
            "oos": len(oos),
            "oos_from_sgd": sum(_key(t) in near_keys for t in oos),
        }
    (out / "info.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data", type=Path, help="folder holding banking77/, sgd/, tweeteval-sentiment/"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for {train,val,test}.jsonl")
    parser.add_argument("--min-sgd", type=int, default=20, help="fewest lines an SGD intent needs")
    parser.add_argument(
        "--oos", type=int, nargs=3, default=(100, 100, 1000), help="oos lines: train val test"
    )
    parser.add_argument("--seed", type=int, default=150)
    args = parser.parse_args()
    info = build(args.data, args.out, args.min_sgd, tuple(args.oos), args.seed)
    print(json.dumps(info["splits"]))


if __name__ == "__main__":
    main()
