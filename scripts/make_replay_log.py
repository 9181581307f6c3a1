"""Make a log of logged conversations on the sample pack, for ``gatebot replay`` to re-run.

    python scripts/make_replay_log.py OUT_DIR [--conversations N] [--pack PACK]

Runs N scripted conversations (questions, FAQ, documentation, qualification, the refund and
seats flows against the demo orders API, hand-offs, out-of-scope messages, upset customers)
through the agent with the offline provider, and leaves ``OUT_DIR/turns.jsonl`` (the JSONL
recorder's file) and ``OUT_DIR/gatebot.db`` (the store). The conversations are chosen by a seeded
random generator and their ids are ``log-0001`` ..., so the same N gives the same log. The
default (130 conversations) makes over 500 turns.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Openings, bodies and closings; a conversation is one of each (an opening or closing may be
#: empty). Each body is a short script of customer messages.
OPENINGS = [[], ["hi"], ["hello there"], ["good morning"], ["hey, anyone around?"]]
CLOSINGS = [[], ["thanks, bye"], ["that's all, thanks"], ["bye"]]
BODIES = [
    ["Is there a free trial?", "how much does it cost?"],
    ["How much does Acme Cloud cost?"],
    ["Does Acme Pipelines support Docker builds?", "and does it cache layers?"],
    ["Can Acme Monitor send alerts to Slack?", "what about Microsoft Teams?"],
    ["Do you integrate with GitHub and GitLab?"],
    ["How do I reset my password?", "I use single sign-on"],
    ["Where do I find my invoices?"],
    ["Where is my data stored?", "is it encrypted?"],
    ["which regions does Monitor check from?"],
    ["what roles can team members have?"],
    ["how do refunds work on annual plans?"],
    ["can I get a demo", "we want to monitor our websites", "sam@example.com"],
    ["I'd like to book a demo", "to speed up our CI builds"],
    ["I want to sign up", "sam@example.com"],
    ["can I try it first?"],
    ["I want a refund", "sam@example.com", "order 1042", "yes"],
    ["please refund my order", "sam@example.com", "1043"],
    ["I'd like a refund please", "alex@example.com", "order 1044"],
    ["I'd like to add seats please", "sam@example.com", "sub_acme1", "add 2 seats", "done"],
    ["we need more seats", "sam@example.com", "sub_acme1", "add 3 seats", "undo", "done"],
    ["I want to talk to a person"],
    ["can I speak to a human"],
    ["my build is failing with an error", "it says out of memory"],
    ["I can't log in"],
    ["what's the weather like in Paris?"],
    ["write me a poem about cats"],
    ["this is useless, I'm furious", "yes"],
    ["this is the worst service ever", "no"],
    ["no thanks"],
    ["what's the status of order 12345"],
    ["I was charged twice", "sam@example.com"],
    ["do you charge per user?", "how many seats does our plan include?"],
]


def scripts(count: int, seed: int = 17) -> list[list[str]]:
    """``count`` conversations, each an opening, one or two bodies and a closing."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        body = list(BODIES[n % len(BODIES)])  # every body at least once, in order
        if rng.random() < 0.3:
            body += rng.choice(BODIES)
        out.append(rng.choice(OPENINGS) + body + rng.choice(CLOSINGS))
    return out


async def make_log(out_dir: Path, count: int, pack: Path) -> int:
    """Run the conversations; the number of turns recorded."""
    from bot.app import App
    from bot.cli.loopback import reserve_port, serve_routes
    from bot.config import Settings
    from bot.extend.recorder import JsonlRecorder
    from bot.store.models import Conversation

    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("turns.jsonl", "gatebot.db"):
        (out_dir / stale).unlink(missing_ok=True)
    sock = reserve_port()  # the demo orders API, served here as `gatebot chat` serves it
    settings = Settings(pack=pack, data_dir=out_dir, recorders=[], model="offline")
    settings.host, settings.port = "127.0.0.1", sock.getsockname()[1]
    app = App(settings, recorders=[JsonlRecorder(out_dir / "turns.jsonl")])
    await app.start(channels=False)
    runner = await serve_routes(app.host.routes, sock)
    turns = 0
    try:
        for n, lines in enumerate(scripts(count), start=1):
            conv = Conversation(id=f"log-{n:04d}", channel="web", language="en")
            with app.store.session() as s:
                s.add(conv)
                s.commit()
            for m, text in enumerate(lines, start=1):
                await app.agent.handle(conv, text, f"log-{n:04d}-{m}")
                turns += 1
    finally:
        await runner.cleanup()
        sock.close()
        await app.stop()
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--conversations", type=int, default=130)
    parser.add_argument("--pack", type=Path, default=ROOT / "knowledge" / "acme")
    args = parser.parse_args()
    turns = asyncio.run(make_log(args.out_dir, args.conversations, args.pack))
    print(f"{turns} turns in {args.conversations} conversations: {args.out_dir / 'turns.jsonl'}")


if __name__ == "__main__":
    sys.exit(main())
