"""The sample pack's paraphrase set (tests/data/acme_paraphrases.jsonl), its probe set
(tests/data/acme_probe.jsonl: written later, the way customers write, and not tuned against) and
its requests set (tests/data/acme_requests.jsonl: requests for a person and to act, and questions
that only look like them) as regression tests: every message through a whole turn, each kind
held to a floor it reached when the floor was set. Raise a floor when the agent gets better; a
drop below one is a regression."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import App
from bot.errors import ConfigError
from bot.evalset import Case, load_set, run_set, verdict
from bot.turn.record import new_record

SET = Path(__file__).parent / "data" / "acme_paraphrases.jsonl"
PROBE = Path(__file__).parent / "data" / "acme_probe.jsonl"
HOLDOUT = Path(__file__).parent / "data" / "acme_holdout.jsonl"
REQUESTS = Path(__file__).parent / "data" / "acme_requests.jsonl"
OFFTOPIC = Path(__file__).parent / "data" / "acme_offtopic.jsonl"
FRESH = Path(__file__).parent / "data" / "acme_fresh.jsonl"
FRESH4 = Path(__file__).parent / "data" / "acme_fresh4.jsonl"
REQUESTS2 = Path(__file__).parent / "data" / "acme_requests2.jsonl"
FRESH5 = Path(__file__).parent / "data" / "acme_fresh5.jsonl"
REQUESTS6 = Path(__file__).parent / "data" / "acme_requests6.jsonl"
FRESH6 = Path(__file__).parent / "data" / "acme_fresh6.jsonl"
FRESH7 = Path(__file__).parent / "data" / "acme_fresh7.jsonl"
FRESH11 = Path(__file__).parent / "data" / "acme_fresh11.jsonl"
FRESH12 = Path(__file__).parent / "data" / "acme_fresh12.jsonl"
FRESH16 = Path(__file__).parent / "data" / "acme_fresh16.jsonl"
FRESH17 = Path(__file__).parent / "data" / "acme_fresh17.jsonl"
FRESH22 = Path(__file__).parent / "data" / "acme_fresh22.jsonl"
FRESH23 = Path(__file__).parent / "data" / "acme_fresh23.jsonl"
FRESH26 = Path(__file__).parent / "data" / "acme_fresh26.jsonl"
FRESH27 = Path(__file__).parent / "data" / "acme_fresh27.jsonl"
FRESH28 = Path(__file__).parent / "data" / "acme_fresh28.jsonl"
FRESH31 = Path(__file__).parent / "data" / "acme_fresh31.jsonl"
FRESH32 = Path(__file__).parent / "data" / "acme_fresh32.jsonl"
FRESH33 = Path(__file__).parent / "data" / "acme_fresh33.jsonl"
FRESH34 = Path(__file__).parent / "data" / "acme_fresh34.jsonl"
FRESH35 = Path(__file__).parent / "data" / "acme_fresh35.jsonl"
FRESH36 = Path(__file__).parent / "data" / "acme_fresh36.jsonl"
FRESH37 = Path(__file__).parent / "data" / "acme_fresh37.jsonl"
FRESH38 = Path(__file__).parent / "data" / "acme_fresh38.jsonl"
FRESH39 = Path(__file__).parent / "data" / "acme_fresh39.jsonl"
FRESH40 = Path(__file__).parent / "data" / "acme_fresh40.jsonl"
FRESH41 = Path(__file__).parent / "data" / "acme_fresh41.jsonl"
FRESH42 = Path(__file__).parent / "data" / "acme_fresh42.jsonl"
FRESH43 = Path(__file__).parent / "data" / "acme_fresh43.jsonl"
FRESH44 = Path(__file__).parent / "data" / "acme_fresh44.jsonl"
FRESH45 = Path(__file__).parent / "data" / "acme_fresh45.jsonl"
FRESH46 = Path(__file__).parent / "data" / "acme_fresh46.jsonl"
FRESH47 = Path(__file__).parent / "data" / "acme_fresh47.jsonl"
FRESH48 = Path(__file__).parent / "data" / "acme_fresh48.jsonl"
FRESH49 = Path(__file__).parent / "data" / "acme_fresh49.jsonl"
FRESH50 = Path(__file__).parent / "data" / "acme_fresh50.jsonl"
FRESH51 = Path(__file__).parent / "data" / "acme_fresh51.jsonl"
FRESH52 = Path(__file__).parent / "data" / "acme_fresh52.jsonl"
FRESH53 = Path(__file__).parent / "data" / "acme_fresh53.jsonl"
FRESH54 = Path(__file__).parent / "data" / "acme_fresh54.jsonl"
FRESH55 = Path(__file__).parent / "data" / "acme_fresh55.jsonl"
FRESH56 = Path(__file__).parent / "data" / "acme_fresh56.jsonl"
FRESH57 = Path(__file__).parent / "data" / "acme_fresh57.jsonl"
FRESH58 = Path(__file__).parent / "data" / "acme_fresh58.jsonl"
FRESH59 = Path(__file__).parent / "data" / "acme_fresh59.jsonl"
FRESH60 = Path(__file__).parent / "data" / "acme_fresh60.jsonl"
FRESH61 = Path(__file__).parent / "data" / "acme_fresh61.jsonl"
FRESH62 = Path(__file__).parent / "data" / "acme_fresh62.jsonl"
FRESH63 = Path(__file__).parent / "data" / "acme_fresh63.jsonl"
FRESH64 = Path(__file__).parent / "data" / "acme_fresh64.jsonl"
FRESH65 = Path(__file__).parent / "data" / "acme_fresh65.jsonl"
FRESH66 = Path(__file__).parent / "data" / "acme_fresh66.jsonl"
FRESH67 = Path(__file__).parent / "data" / "acme_fresh67.jsonl"
FRESH68 = Path(__file__).parent / "data" / "acme_fresh68.jsonl"
FRESH69 = Path(__file__).parent / "data" / "acme_fresh69.jsonl"
FRESH70 = Path(__file__).parent / "data" / "acme_fresh70.jsonl"
FRESH71 = Path(__file__).parent / "data" / "acme_fresh71.jsonl"
FRESH72 = Path(__file__).parent / "data" / "acme_fresh72.jsonl"
FRESH73 = Path(__file__).parent / "data" / "acme_fresh73.jsonl"
FRESH74 = Path(__file__).parent / "data" / "acme_fresh74.jsonl"
FRESH75 = Path(__file__).parent / "data" / "acme_fresh75.jsonl"
FRESH76 = Path(__file__).parent / "data" / "acme_fresh76.jsonl"
FRESH77 = Path(__file__).parent / "data" / "acme_fresh77.jsonl"
FRESH78 = Path(__file__).parent / "data" / "acme_fresh78.jsonl"
FRESH79 = Path(__file__).parent / "data" / "acme_fresh79.jsonl"
FRESH80 = Path(__file__).parent / "data" / "acme_fresh80.jsonl"
FRESH81 = Path(__file__).parent / "data" / "acme_fresh81.jsonl"
FRESH82 = Path(__file__).parent / "data" / "acme_fresh82.jsonl"
FRESH83 = Path(__file__).parent / "data" / "acme_fresh83.jsonl"
FRESH84 = Path(__file__).parent / "data" / "acme_fresh84.jsonl"
FRESH85 = Path(__file__).parent / "data" / "acme_fresh85.jsonl"
FRESH86 = Path(__file__).parent / "data" / "acme_fresh86.jsonl"
FRESH87 = Path(__file__).parent / "data" / "acme_fresh87.jsonl"
FRESH88 = Path(__file__).parent / "data" / "acme_fresh88.jsonl"
FRESH89 = Path(__file__).parent / "data" / "acme_fresh89.jsonl"
FRESH90 = Path(__file__).parent / "data" / "acme_fresh90.jsonl"
FRESH91 = Path(__file__).parent / "data" / "acme_fresh91.jsonl"
FRESH92 = Path(__file__).parent / "data" / "acme_fresh92.jsonl"
FRESH93 = Path(__file__).parent / "data" / "acme_fresh93.jsonl"
FRESH94 = Path(__file__).parent / "data" / "acme_fresh94.jsonl"
FRESH95 = Path(__file__).parent / "data" / "acme_fresh95.jsonl"
FRESH96 = Path(__file__).parent / "data" / "acme_fresh96.jsonl"
FRESH97 = Path(__file__).parent / "data" / "acme_fresh97.jsonl"
FRESH98 = Path(__file__).parent / "data" / "acme_fresh98.jsonl"
FRESH99 = Path(__file__).parent / "data" / "acme_fresh99.jsonl"
FRESH100 = Path(__file__).parent / "data" / "acme_fresh100.jsonl"
FRESH101 = Path(__file__).parent / "data" / "acme_fresh101.jsonl"
FRESH102 = Path(__file__).parent / "data" / "acme_fresh102.jsonl"
FRESH103 = Path(__file__).parent / "data" / "acme_fresh103.jsonl"
FRESH104 = Path(__file__).parent / "data" / "acme_fresh104.jsonl"
FRESH105 = Path(__file__).parent / "data" / "acme_fresh105.jsonl"
FRESH106 = Path(__file__).parent / "data" / "acme_fresh106.jsonl"
FRESH107 = Path(__file__).parent / "data" / "acme_fresh107.jsonl"
FRESH108 = Path(__file__).parent / "data" / "acme_fresh108.jsonl"
FRESH109 = Path(__file__).parent / "data" / "acme_fresh109.jsonl"
FRESH110 = Path(__file__).parent / "data" / "acme_fresh110.jsonl"
FRESH111 = Path(__file__).parent / "data" / "acme_fresh111.jsonl"
FRESH112 = Path(__file__).parent / "data" / "acme_fresh112.jsonl"
FRESH113 = Path(__file__).parent / "data" / "acme_fresh113.jsonl"
FRESH114 = Path(__file__).parent / "data" / "acme_fresh114.jsonl"
FRESH115 = Path(__file__).parent / "data" / "acme_fresh115.jsonl"
FRESH116 = Path(__file__).parent / "data" / "acme_fresh116.jsonl"
FRESH117 = Path(__file__).parent / "data" / "acme_fresh117.jsonl"
FRESH118 = Path(__file__).parent / "data" / "acme_fresh118.jsonl"
FRESH119 = Path(__file__).parent / "data" / "acme_fresh119.jsonl"
FRESH120 = Path(__file__).parent / "data" / "acme_fresh120.jsonl"
FRESH121 = Path(__file__).parent / "data" / "acme_fresh121.jsonl"
FRESH122 = Path(__file__).parent / "data" / "acme_fresh122.jsonl"
FRESH123 = Path(__file__).parent / "data" / "acme_fresh123.jsonl"
FRESH124 = Path(__file__).parent / "data" / "acme_fresh124.jsonl"
FRESH125 = Path(__file__).parent / "data" / "acme_fresh125.jsonl"
FRESH126 = Path(__file__).parent / "data" / "acme_fresh126.jsonl"
FRESH127 = Path(__file__).parent / "data" / "acme_fresh127.jsonl"
FRESH128 = Path(__file__).parent / "data" / "acme_fresh128.jsonl"
FRESH129 = Path(__file__).parent / "data" / "acme_fresh129.jsonl"
FRESH130 = Path(__file__).parent / "data" / "acme_fresh130.jsonl"
FRESH131 = Path(__file__).parent / "data" / "acme_fresh131.jsonl"
FRESH132 = Path(__file__).parent / "data" / "acme_fresh132.jsonl"
FRESH133 = Path(__file__).parent / "data" / "acme_fresh133.jsonl"
FRESH134 = Path(__file__).parent / "data" / "acme_fresh134.jsonl"
FRESH135 = Path(__file__).parent / "data" / "acme_fresh135.jsonl"
FRESH136 = Path(__file__).parent / "data" / "acme_fresh136.jsonl"
FRESH137 = Path(__file__).parent / "data" / "acme_fresh137.jsonl"
FRESH138 = Path(__file__).parent / "data" / "acme_fresh138.jsonl"
FRESH139 = Path(__file__).parent / "data" / "acme_fresh139.jsonl"
FRESH140 = Path(__file__).parent / "data" / "acme_fresh140.jsonl"

#: kind -> (the least share right, the most wrong): measured on this pack, offline provider.
FLOORS = {
    # measured 33 with the pack's fit (30 before), 32 with the second round of ``asked`` questions
    # ("when is a check marked as down": the Slack entry's "Can Monitor call me on the phone when
    # something is down?" now sits closer than the checks section): one of margin
    "answer": (32 / 34, 0),  # 33 after the tenth round
    # measured 16 of 16: one of margin ("can I export incident timelines to Jira" read 0.59
    # against the gate's 0.6 before the unseen-name rule, 0.35 with it)
    "unanswerable": (15 / 16, 0),  # 16 after the tenth round
    "out_of_scope": (10 / 10, 0),
    "person": (4 / 4, 0),
    "action": (8 / 8, 0),
    "non_english": (9 / 10, 0),
}
#: The probe set's floors, as measured after the fixes it found (README, "The sample pack's
#: paraphrase set"): far below the tuned set's, which is the point of it.
PROBE_FLOORS = {
    # measured 23 with the pack's ``asked`` questions (13 with the pack's fit, 10 before): one of
    # margin
    "answer": (26 / 27, 0),  # 27 after the tenth round
    # measured 10 of 10: one of margin ("is there a pagerduty integration" read 0.56 before the
    # unseen-name rule, 0.32 with it)
    "unanswerable": (9 / 10, 0),  # measured 10 of 10 with the target-name penalty
    # measured 6: "my landlord won't give back my deposit" is declined since the hand-off and
    # seats lines joined the pack's texts (closeness 0.002 below the threshold; at the edge, its
    # margin -0.002 would decline it too), "tell me a joke" by the edge rule (margin -0.029)
    "out_of_scope": (7 / 8, 0),  # 8 after the tenth round
    "person": (6 / 6, 0),
    "action": (11 / 11, 0),
    "non_english": (2 / 4, 0),  # measured 3 with the ``asked`` questions (1 before)
}
#: The requests set's floors (README, "The sample pack's paraphrase set"): every look-alike
#: neither handed off nor started on a flow.
REQUESTS_FLOORS = {
    "person": (11 / 12, 0),  # measured 12 (11 before the advisor line: the French conseiller)
    "action": (11 / 13, 0),  # measured 12 (11 before the demo lean)
    "lookalike": (9 / 9, 0),
}

#: The holdout set (written before the pack's fit and not tuned on; README, "The holdout set"):
#: answers and in-scope questions the pack does not answer only. Its wrong answers are held where
#: they were measured, not at 0: the figures are what it is for.
HOLDOUT_FLOORS = {
    # measured 23 right, 0 wrong (18 and 1 before the ``asked`` questions); 25 since an asked
    # question close to the message vouches for its section (the seventh round)
    "answer": (26 / 27, 0),  # 27 after the tenth round
    # measured 12 right, 0 wrong (11 and 1 before: "does pipelines support Windows build
    # machines?" was matched to the Docker entry)
    "unanswerable": (11 / 12, 0),
}


#: The off-topic set (issue #19; README, "The off-topic set"): what visitors send a support widget
#: that is not about the company, and in-scope messages that look like it, which must not be
#: declined (an unanswerable one declined is safe, not right). Written before the edge rule.
OFFTOPIC_FLOORS = {
    # measured 19 of 22 (18 before the edge rule: "knock knock"); kept: "how do I cancel my
    # Netflix subscription" (declared billing words), "hey, how's your day going?" (a greeting)
    # and "my PS5 controller keeps disconnecting, how do I fix it" (edge, margin 0.126, intent
    # head none at 0.78)
    "out_of_scope": (20 / 22, 0),  # 21 after the tenth round
    "answer": (0 / 4, 0),  # measured 0 right, 4 safe: nothing wrong said, none declined
    # measured 8 of 10: "can I manage all of this from Ansible?" (below the threshold) and
    # "Linear integration?" (the margin) are declined, before the edge rule as after
    "unanswerable": (8 / 10, 0),
}

#: The fresh set (README, "How customers ask"): three sets (50, 50 and 60 lines) written by helper
#: sessions that saw only the pack's facts, not its ``asked`` questions, with requests, off-topic
#: messages and questions in other languages written in the same session.
FRESH_FLOORS = {
    # measured 83 of 107 right, 0 wrong (the first 67: 49, against 31 right and 1 wrong before
    # ``asked``; the last 40, written later: 34, against 22 before); 86 since shorthand is
    # written out ("PRs", "MS Teams") and a sure FAQ match far ahead in the ranking answers
    # 92 since an asked question close to the message vouches for its section (the seventh round)
    "answer": (102 / 107, 0),  # 103 after the tenth round
    # measured 51 of 57 right, 3 wrong (VAT twice, the Business plan's monthly price; 6 wrong
    # before the unseen-action rule: the trial extended twice, status page subscriptions); 5 of
    # them in Spanish, German and French, all right. 53, 2 wrong (VAT twice) since a plan the
    # passage does not name is no answer to its price (the seventh round)
    "unanswerable": (52 / 57, 2),
    "out_of_scope": (16 / 16, 0),
    # measured 13 (12 before ACROSS_AT 0.5: the Spanish refund); a French demo is missed
    "action": (13 / 14, 0),
    "person": (8 / 8, 0),  # measured 8 ("Je voudrais parler à un conseiller" since ACROSS_AT 0.5)
    # measured 8 of 10 (1 before document sections' asked questions joined the cross-language
    # match)
    "non_english": (7 / 10, 0),
}


#: The fourth fresh set (README, "How customers ask for things"): written by a helper session that
#: saw only the pack's facts (90 lines; the 6 that other sets already hold were dropped). Its
#: requests to act are the weak kind: the floors hold what main reads, not a goal.
FRESH4_FLOORS = {
    # measured 31 of 38 right, 0 wrong (30 before "MS Teams" was read); 33 since the seventh round
    "answer": (37 / 38, 0),  # 38 after the tenth round
    # measured 14 right, 2 wrong (the Business plan's price, logs kept longer); 16, 0 wrong, since
    # the seventh round
    "unanswerable": (15 / 16, 0),
    "out_of_scope": (7 / 7, 0),
    # measured 3: "speak with someone from your sales team" read demo; 4 since a person asked for
    # in so many words is a hand-off (the seventh round)
    "person": (4 / 4, 0),
    # measured 8 (6 before a lean to the flow's intent worded as a request started it, and the
    # playbook's demo counted as the demo started): a refund read as an order question ("our card
    # was charged twice this month, pls send back the duplicate") and a seat change in engineers
    # 9 since the refund flow's lines on a charge to reverse (a double charge now starts it)
    "action": (8 / 10, 0),
    "non_english": (4 / 5, 0),  # measured 5 since the seventh round (French read alone)
    # measured 4 of 4 since a recording to watch on one's own starts nothing (3 before)
    "lookalike": (3 / 4, 0),
}
#: The second requests set: 115 lines a helper session wrote from its own sense of how customers
#: ask for money back, seat changes, a demo given by a person and a person, and look-alikes that
#: only mention them (README, "How customers ask for things").
REQUESTS2_FLOORS = {
    # measured 49 of 70 (50 before the hand-off intent's advisor line: "Hey, can we hop on a call
    # where you show us around Acme Cloud?" is asked "did you mean a demo?"; 47 before the demo
    # lean and "can we"; 44 before the refund flow's
    # double-charge line; 37 before a lean to the flow's intent worded as a request started it and
    # the playbook's demo counted as the demo started; 36 before a flow intent's keyword kept "hey,
    # add seats for the 4 folks from the Berlin office please" in scope)
    # 57 since the fifth round (README, "How customers ask for things"): wants and bookings as
    # requests, a new seat total, more refund and seat lines, the demo flow's call words; 62 since
    # a person asked to show the product starts the guided demo (the seventh round)
    "action": (61 / 70, 0),
    # measured 24 of 25 (19 before four hand-off lines written after reading this set's misses),
    # 23 since the refund and seat lines ("Please have someone call me back" reads a person at 0.59)
    # 25 since a person asked for in so many words is a hand-off (the seventh round)
    "person": (24 / 25, 0),
    # measured 20 of 20 (16, 4 wrong, before a recorded demo, a self-guided tour, a webinar
    # recording and a sandbox to click around in were read as things to go through alone)
    "lookalike": (19 / 20, 0),
}
#: The fifth fresh set: 100 lines a helper session wrote from the pack's facts alone (the 4 that
#: other sets already held dropped), run once before the fifth round and measured after each
#: change of it, so no longer held out.
FRESH5_FLOORS = {
    # measured 34 (31 before the fifth round), 0 wrong; 39 after the tenth round
    "answer": (38 / 40, 0),
    # measured 10 right, 2 wrong (the Business plan's price, a phone app); 13, 0 wrong, since the
    # seventh round
    "unanswerable": (12 / 14, 0),
    "out_of_scope": (10 / 10, 0),
    "person": (5 / 5, 0),
    "action": (14 / 15, 0),  # measured 15 (11 before)
    # measured 4; 5 since the seventh round (Italian); 6 after the tenth round
    "non_english": (5 / 6, 0),
    "lookalike": (5 / 6, 0),  # measured 6 (4, 2 wrong, before)
}
#: The sixth requests set: 64 request lines a helper session wrote without seeing the pack's
#: lines (2 that other sets held dropped), written during the fifth round: run first on the code
#: of that round so far, then used to choose among variants of the pack's new lines.
REQUESTS6_FLOORS = {
    "action": (35 / 40, 0),  # measured 34 (26 at the start of the fifth round); 36 since round 7
    # measured 6 of 7 (5 before a person asked for in one sentence of several was read from it); 7
    # since a call back asked for in so many words is a hand-off (the seventh round)
    "person": (6 / 7, 0),
    # measured 14, 1 wrong (13, 2 wrong, before the sixth round read a demo already had): "We
    # got refunded last week ... it's all sorted now" tells of what happened
    "lookalike": (13 / 15, 1),
}
#: The sixth fresh set: 105 lines a helper session wrote from the pack's facts alone (not its
#: asked questions, examples or keywords; 6 that other sets held dropped), run once on the code
#: before the sixth round, then used to develop it (README, "The sixth round").
FRESH6_FLOORS = {
    # measured 31 (26 before the sixth round), 0 wrong; 33 since round 7; 38 after the tenth round
    "answer": (37 / 39, 0),
    # measured 14, 1 wrong (the Business plan's exact price); 15, 0 wrong, since the seventh round
    "unanswerable": (14 / 15, 0),
    "out_of_scope": (7 / 7, 0),
    "person": (5 / 6, 0),  # measured 5; 6 since the seventh round ("escalate this to a manager")
    "action": (17 / 18, 0),  # measured 17; 18 since the seventh round (a call to walk us through)
    "non_english": (4 / 6, 0),  # measured 3; 5 since the seventh round (Italian, Portuguese)
    "lookalike": (7 / 8, 0),  # measured 8 (5, 3 wrong, before)
}
#: The seventh fresh set: 100 lines a helper session wrote from the pack's facts alone (5 that
#: other sets held dropped), run once on the code before the seventh round, then used to develop
#: it (README, "The seventh round").
FRESH7_FLOORS = {
    # measured 36 (33 before the seventh round), 0 wrong; 39 after the tenth round
    "answer": (38 / 39, 0),
    "unanswerable": (14 / 15, 0),  # measured 15 (12, 3 wrong, before)
    # measured 7 of 9: a cancelled flight to rebook with an airline, a build matrix in another
    # vendor's CI (both in scope, not answered, a person offered)
    "out_of_scope": (7 / 9, 0),
    "person": (6 / 6, 0),
    # measured 13 of 15 (a call "so my CTO can see pipelines in action" and a guided tour "when
    # are you free?" were not read as demo requests); 15 since a person asked to show the product
    # starts the guided demo
    "action": (14 / 15, 0),
    "non_english": (4 / 5, 0),  # measured 5 (2 before: Spanish, Italian and Dutch)
    "lookalike": (6 / 6, 0),
}

#: The eleventh and twelfth fresh sets: written by helper sessions from the pack's facts alone
#: (the eighth round's held-out sets, then used to develop it and the ninth; README, "The eighth
#: round"). Floors one below what main read when they were set, none wrong.
FRESH11_FLOORS = {
    "answer": (36 / 39, 0),  # measured 37 (35 before the ninth round)
    "unanswerable": (13 / 14, 0),  # measured 14
    # measured 7 of 8: "my iphone won't charge past 80%, is the battery dying?" is kept by the
    # order-status intent's keyword "charge" (an intent's word outweighs the consumer_products
    # topic), and answered by nothing
    "out_of_scope": (7 / 8, 0),
    "person": (5 / 5, 0),
    "action": (14 / 14, 0),
    "non_english": (7 / 8, 0),  # measured 8
    "lookalike": (6 / 6, 0),
}
FRESH12_FLOORS = {
    "answer": (30 / 40, 0),  # measured 31 (28 before the ninth round)
    "unanswerable": (14 / 15, 0),  # measured 15
    "out_of_scope": (8 / 8, 0),
    "person": (5 / 5, 0),
    "action": (10 / 10, 0),
}
#: The sixteenth and seventeenth fresh sets: 85 lines each, written by helper sessions from the
#: pack's facts alone, run once on the code before the tenth round (README, "The tenth round"),
#: then used to develop it; the lines other sets already held dropped (76 and 80 left).
FRESH16_FLOORS = {
    # measured 35 of 37, 0 wrong (34 before the tenth round, on the 37 kept)
    "answer": (34 / 37, 0),
    # measured 12 of 12 (2 asserted before: the trial extended, caches kept past a week)
    "unanswerable": (11 / 12, 0),
    "out_of_scope": (9 / 9, 0),
    "person": (3 / 3, 0),
    "action": (10 / 10, 0),
    "non_english": (5 / 5, 0),
}
FRESH17_FLOORS = {
    "answer": (34 / 37, 0),  # measured 35, 0 wrong (34 before the tenth round)
    # measured 15 of 15 (2 asserted before: the trial's end, an email address changed)
    "unanswerable": (14 / 15, 0),
    "out_of_scope": (9 / 9, 0),  # measured 9 (8 before: an iPhone factory reset)
    "person": (5 / 5, 0),
    "action": (10 / 10, 0),
    "non_english": (4 / 4, 0),
}
#: The twenty-second and twenty-third fresh sets: 80 lines each, written by helper sessions from
#: the pack's facts alone, run once on the code before the eleventh round (README, "The eleventh
#: round"), then used to develop it; the lines other sets already held dropped (73 and 78 left).
FRESH22_FLOORS = {
    "answer": (34 / 37, 0),  # measured 35 of 37, 0 wrong
    # measured 14 of 14 (2 asserted before: logs kept for 90 days, invoices downloaded by admins
    # where the entry says owners)
    "unanswerable": (13 / 14, 0),
    "out_of_scope": (8 / 8, 0),
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH23_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40, 0 wrong
    # measured 14 of 15, 1 asserted (billing during a deleted workspace's grace period; 2 before:
    # self-hosted runners on Windows)
    "unanswerable": (13 / 15, 1),
    "out_of_scope": (9 / 9, 0),
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
#: The twelfth round's sets (README, "The twelfth round"): written with out-of-scope lines in the
#: pack's own words on purpose ("heart rate monitor", "a refund from ryanair").
FRESH26_FLOORS = {
    "answer": (35 / 37, 0),  # measured 36 of 37, 0 wrong (35 before the round)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (2 asserted before)
    "out_of_scope": (9 / 9, 0),  # 5 before the round's declared phrases (1 answered)
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH27_FLOORS = {
    "answer": (36 / 39, 0),  # measured 37 of 39, 0 wrong (34 before the round)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (1 asserted before: a 30-day trial)
    # measured 8 of 9 (4 before): "a new monitor for gaming" is kept by Monitor's word
    "out_of_scope": (8 / 9, 0),
    "person": (5 / 5, 0),  # 4 before: "¿puedo hablar con un agente de verdad? Prefiero ..."
    "action": (10 / 10, 0),
}
FRESH28_FLOORS = {
    "answer": (37 / 39, 0),  # measured 38 of 39, 0 wrong (36 before the round)
    # measured 12 of 14, 1 asserted (recovering a deleted workspace from backups after the grace
    # period, from the deletion passage)
    "unanswerable": (12 / 14, 1),
    # measured 8 of 9 (6 before): "27 inch 4k or ultrawide, which monitor is better" is kept by
    # Monitor's word
    "out_of_scope": (8 / 9, 0),
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),  # 9 before: "Need to get reimbursed for order 77310"
}
#: The thirteenth round's sets (README, "The thirteenth round"): 31-33 read on the code before
#: the round, 34 and 35 once mid-round (held out), then all five used to develop it. Answers and
#: unanswerable lines one below what main reads, the rest as main reads them.
FRESH31_FLOORS = {
    "answer": (35 / 38, 0),  # measured 36 of 38 (35 before the round)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (3 asserted before: "make it last 24h")
    "out_of_scope": (9 / 9, 0),  # 7 before: a parcel's status, oil pipelines
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH32_FLOORS = {
    # measured 34 of 40 (25 before: long messages of context, their question after it)
    "answer": (33 / 40, 0),
    "unanswerable": (14 / 15, 0),  # measured 15 of 15
    "out_of_scope": (10 / 10, 0),  # 8 before: DHL tracking, a treehouse
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH33_FLOORS = {
    # measured 38 of 40; "Is there some free version or everything is paid?" cited the trial
    # entry (a wrong source) until "free version" was read as the free tier (now unanswered)
    "answer": (37 / 40, 0),
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (1 asserted before)
    "out_of_scope": (10 / 10, 0),  # 9 before: a parcel's status
    "person": (5 / 5, 0),
    # measured 9 of 10: "Rückerstattung bitte for order 55031" is read as an order question
    "action": (9 / 10, 0),
}
FRESH34_FLOORS = {
    "answer": (29 / 40, 0),  # measured 30 of 40 (27 before the round, 28 held out)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (2 asserted before)
    "out_of_scope": (9 / 9, 0),  # 7 before: USPS tracking, "which 27 inch monitor"
    "person": (5 / 5, 0),
    "action": (10 / 10, 0),
}
FRESH35_FLOORS = {
    "answer": (27 / 40, 0),  # measured 28 of 40 (26 before the round and held out)
    # measured 14 of 15, 1 asserted: "which country exactly does it sit in? Germany? Ireland?"
    # (the data-location entry, P 0.61 with both names against it)
    "unanswerable": (13 / 15, 1),
    # measured 9 of 10: "help me write a polite note to a supplier" reads as a support request
    "out_of_scope": (9 / 10, 0),
    "person": (5 / 5, 0),
    "action": (10 / 10, 0),  # 9 before: "set up a call with your sales people"
}
#: Sets 36 to 39, each read once held out during the thirteenth round, then used for its last
#: changes. Set 36 lost 12 of its 80 lines to earlier sets (the same words), the others 1 to 4.
FRESH36_FLOORS = {
    "answer": (31 / 32, 0),  # measured 32 of 32
    "unanswerable": (12 / 14, 0),  # measured 13 of 14 (SOC 2 declined as outside, safe)
    "out_of_scope": (9 / 9, 0),
    "person": (3 / 3, 0),
    "action": (10 / 10, 0),
}
FRESH37_FLOORS = {
    "answer": (36 / 40, 0),  # measured 37 of 40
    "unanswerable": (14 / 15, 0),  # measured 15 of 15
    "out_of_scope": (10 / 10, 0),
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH38_FLOORS = {
    "answer": (37 / 39, 0),  # measured 38 of 39
    "unanswerable": (12 / 14, 0),  # measured 13 of 14 (SOC 2 declined, safe)
    "out_of_scope": (8 / 9, 0),  # measured 8 of 9: "How many seats are there on a Boeing 737?"
    "person": (4 / 4, 0),
    "action": (10 / 10, 0),
}
FRESH39_FLOORS = {
    # a third of its lines in Spanish, French, German, Portuguese or Italian
    "answer": (35 / 39, 0),  # measured 36 of 39
    "unanswerable": (13 / 15, 0),  # measured 14 of 15
    "out_of_scope": (9 / 9, 0),
    # 3 of 4 held out: "Posso parlare con un operatore?" (0.48 of 0.5 across languages); in so
    # many words since
    "person": (4 / 4, 0),
    # measured 9 of 10: "je voudrais être remboursé pour la commande 99120" (0.39 across)
    "action": (9 / 10, 0),
}
#: Sets 40 and 41, read once held out at the end of the round (6772bb3), then used for its last
#: change; 10 and 7 of their lines were other sets' already.
FRESH40_FLOORS = {
    "answer": (33 / 36, 0),  # measured 34 of 36
    "unanswerable": (12 / 13, 0),  # measured 13 of 13 (2 asserted held out: "longer than 30?")
    "out_of_scope": (9 / 9, 0),
    "person": (2 / 2, 0),
    "action": (10 / 10, 0),
}
FRESH41_FLOORS = {
    "answer": (35 / 38, 0),  # measured 36 of 38
    # measured 14 of 15, 1 asserted: "What exactly can an admin do that a regular member can't?"
    # (the roles passage names admins and says nothing of what they may do)
    "unanswerable": (13 / 15, 1),
    "out_of_scope": (7 / 7, 0),  # 5 held out: a blood pressure monitor, a gym membership
    "person": (4 / 4, 0),
    "action": (9 / 9, 0),
}
#: Sets 42 and 43, the round's last held-out sets (4976970), then used for its last two changes.
FRESH42_FLOORS = {
    "answer": (31 / 38, 0),  # measured 32 of 38 (a wrong source held out: "a free version")
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (2 asserted held out)
    "out_of_scope": (9 / 9, 0),
    "person": (3 / 3, 0),
    "action": (10 / 10, 0),
}
FRESH43_FLOORS = {
    # measured 22 of 40: non-software businesses in plain words ("your build service", "the
    # website checker"); the misses are unanswered, none wrongly
    "answer": (21 / 40, 0),
    # measured 13 of 15, 2 asserted: a workspace deleted two months ago (the deletion passage
    # says the data goes after 30 days), "is there a phone app for the alerts" (the alerts entry)
    "unanswerable": (12 / 15, 2),
    "out_of_scope": (8 / 9, 0),  # "la meilleure façon d'apprendre la guitare" kept, unanswered
    "person": (3 / 3, 0),
    "action": (9 / 10, 0),  # "Quiero que me devuelvan el dinero del pedido 77310" missed
}

#: The fourteenth round (README, "The fourteenth round"): sets 44-51 read held out on 3e9b526,
#: 52-56 on b5ddefc and 57-60 on b346782 (the "held out" figures), then used for its changes.
FRESH44_FLOORS = {
    "answer": (34 / 36, 0),  # measured 35 of 36 (held out 34)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 13, 1 wrong)
    "out_of_scope": (9 / 9, 0),  # measured 9 of 9 (held out 8)
    "person": (3 / 3, 0),  # measured 3 of 3 (held out 3)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH45_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 35, 1 wrong)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 8)
}
FRESH46_FLOORS = {
    "answer": (17 / 40, 1),  # measured 18 of 40, 1 wrong (held out 18, 1 wrong)
    "unanswerable": (12 / 15, 1),  # measured 13 of 15, 1 wrong (held out 13, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}
FRESH47_FLOORS = {
    "answer": (37 / 39, 0),  # measured 38 of 39 (held out 38)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 13, 2 wrong)
    "out_of_scope": (9 / 9, 0),  # measured 9 of 9 (held out 8)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 9, 0),  # measured 9 of 9 (held out 9)
}
FRESH48_FLOORS = {
    "answer": (29 / 40, 0),  # measured 30 of 40 (held out 30)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 12, 3 wrong)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 9, 0),  # measured 9 of 9 (held out 8)
}
FRESH49_FLOORS = {
    "answer": (36 / 39, 0),  # measured 37 of 39 (held out 36)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 13, 1 wrong)
    "out_of_scope": (9 / 9, 0),  # measured 9 of 9 (held out 8)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH50_FLOORS = {
    "answer": (36 / 40, 0),  # measured 37 of 40 (held out 37)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 13, 2 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH51_FLOORS = {
    "answer": (30 / 40, 0),  # measured 31 of 40 (held out 31)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 8, 0),  # measured 8 of 8 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}
FRESH52_FLOORS = {
    "answer": (32 / 36, 0),  # measured 33 of 36 (held out 32)
    "unanswerable": (11 / 13, 1),  # measured 12 of 13, 1 wrong (held out 12, 1 wrong)
    "out_of_scope": (8 / 8, 0),  # measured 8 of 8 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 8)
}
FRESH53_FLOORS = {
    "answer": (20 / 40, 0),  # measured 21 of 40 (held out 21)
    "unanswerable": (11 / 15, 3),  # measured 12 of 15, 3 wrong (held out 11, 4 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 10)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH54_FLOORS = {
    "answer": (29 / 34, 0),  # measured 30 of 34 (held out 30)
    "unanswerable": (12 / 13, 0),  # measured 13 of 13 (held out 13)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 10)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH55_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 32)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (8 / 9, 0),  # measured 8 of 9 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 8)
}
FRESH56_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 32)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (7 / 9, 0),  # measured 7 of 9 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH57_FLOORS = {
    "answer": (34 / 35, 0),  # measured 35 of 35 (held out 35)
    "unanswerable": (12 / 14, 1),  # measured 13 of 14, 1 wrong (held out 13, 1 wrong)
    "out_of_scope": (7 / 8, 0),  # measured 7 of 8 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 9, 0),  # measured 9 of 9 (held out 9)
}
FRESH58_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 31)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH59_FLOORS = {
    "answer": (29 / 34, 0),  # measured 30 of 34 (held out 30)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 9, 0),  # measured 9 of 9 (held out 9)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH60_FLOORS = {
    "answer": (34 / 37, 0),  # measured 35 of 37 (held out 35)
    "unanswerable": (11 / 13, 1),  # measured 12 of 13, 1 wrong (held out 12, 1 wrong)
    "out_of_scope": (7 / 7, 0),  # measured 7 of 7 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH61_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 31)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 5, 1 wrong)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH62_FLOORS = {
    "answer": (32 / 40, 0),  # measured 33 of 40 (held out 32)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 13, 2 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH63_FLOORS = {
    "answer": (25 / 40, 0),  # measured 26 of 40 (held out 25)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH64_FLOORS = {
    "answer": (29 / 40, 0),  # measured 30 of 40 (held out 30)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 12, 2 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH65_FLOORS = {
    "answer": (30 / 40, 0),  # measured 31 of 40 (held out 31)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH66_FLOORS = {
    "answer": (28 / 40, 0),  # measured 29 of 40 (held out 27)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}
FRESH67_FLOORS = {
    "answer": (30 / 40, 0),  # measured 31 of 40 (held out 31)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH68_FLOORS = {
    "answer": (24 / 40, 0),  # measured 25 of 40 (held out 25)
    "unanswerable": (11 / 15, 2),  # measured 12 of 15, 2 wrong (held out 11, 3 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH69_FLOORS = {
    "answer": (32 / 40, 1),  # measured 33 of 40, 1 wrong (held out 33, 1 wrong)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 3)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH70_FLOORS = {
    "answer": (27 / 40, 0),  # measured 28 of 40 (held out 28)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH71_FLOORS = {
    "answer": (16 / 40, 0),  # measured 17 of 40 (held out 17)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 4)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH72_FLOORS = {
    "answer": (30 / 40, 0),  # measured 31 of 40 (held out 28)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH73_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 35)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 4)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH74_FLOORS = {
    "answer": (28 / 40, 0),  # measured 29 of 40 (held out 29)
    "unanswerable": (11 / 15, 2),  # measured 12 of 15, 2 wrong (held out 12, 2 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH75_FLOORS = {
    "answer": (36 / 40, 0),  # measured 37 of 40 (held out 36)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (4 / 5, 0),  # measured 4 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH76_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 35)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 13, 2 wrong)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 4)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH77_FLOORS = {
    "answer": (27 / 40, 0),  # measured 28 of 40 (held out 27)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH78_FLOORS = {
    "answer": (31 / 40, 1),  # measured 32 of 40, 1 wrong (held out 32, 1 wrong)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH79_FLOORS = {
    "answer": (22 / 40, 0),  # measured 23 of 40 (held out 23)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (5 / 10, 1),  # measured 5 of 10, 1 wrong (held out 3, 1 wrong)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH80_FLOORS = {
    "answer": (26 / 40, 0),  # measured 27 of 40 (held out 25)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

# The seventeenth round (README): sets 81-86, read once on 824eacc, then used for the changes.
FRESH81_FLOORS = {
    "answer": (25 / 28, 0),  # measured 26 of 28 (held out 25, 1 wrong)
    "unanswerable": (11 / 13, 1),  # measured 12 of 13, 1 wrong (held out 11, 2 wrong)
    "out_of_scope": (7 / 7, 0),  # measured 7 of 7 (held out 4)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 9, 0),  # measured 9 of 9 (held out 9)
}
FRESH82_FLOORS = {
    "answer": (18 / 40, 1),  # measured 19 of 40, 1 wrong (held out 18, 1 wrong)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH83_FLOORS = {
    "answer": (31 / 37, 0),  # measured 32 of 37 (held out 31)
    "unanswerable": (10 / 11, 0),  # measured 11 of 11 (held out 10, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH84_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 31)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH85_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 32)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 3)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}
FRESH86_FLOORS = {
    "answer": (24 / 39, 1),  # measured 25 of 39, 1 wrong (held out 25, 1 wrong)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (7 / 9, 0),  # measured 7 of 9 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH87_FLOORS = {
    "answer": (32 / 39, 0),  # measured 33 of 39 (held out 33)
    "unanswerable": (9 / 10, 0),  # measured 10 of 10 (held out 10)
    "out_of_scope": (7 / 7, 0),  # measured 7 of 7 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH88_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 35)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (7 / 9, 0),  # measured 7 of 9 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH89_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40 (held out 33)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH90_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 30, 1 wrong)
    "unanswerable": (12 / 15, 0),  # measured 13 of 15 (held out 12, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH91_FLOORS = {
    "answer": (28 / 40, 1),  # measured 29 of 40, 1 wrong (held out 26, 1 wrong)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}
FRESH92_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 32)
    "unanswerable": (12 / 14, 1),  # measured 13 of 14, 1 wrong (held out 13, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 3)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

# The nineteenth round's six sets (README, "The nineteenth round").
FRESH93_FLOORS = {
    "answer": (32 / 37, 0),  # measured 33 of 37 (held out 32)
    "unanswerable": (8 / 13, 2),  # measured 9 of 13, 2 wrong (held out 9, 2 wrong)
    "out_of_scope": (6 / 8, 0),  # measured 6 of 8 (held out 6)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH94_FLOORS = {
    "answer": (32 / 40, 0),  # measured 33 of 40 (held out 33)
    "unanswerable": (11 / 15, 1),  # measured 12 of 15, 1 wrong (held out 11, 2 wrong)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH95_FLOORS = {
    "answer": (29 / 39, 0),  # measured 30 of 39 (held out 29)
    "unanswerable": (11 / 15, 2),  # measured 12 of 15, 2 wrong (held out 11, 3 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 10)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH96_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 31)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH97_FLOORS = {
    "answer": (27 / 40, 2),  # measured 28 of 40, 2 wrong (held out 28, 2 wrong)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH98_FLOORS = {
    "answer": (28 / 38, 0),  # measured 29 of 38 (held out 29)
    "unanswerable": (11 / 15, 1),  # measured 12 of 15, 1 wrong (held out 12, 1 wrong)
    "out_of_scope": (2 / 10, 0),  # measured 2 of 10 (held out 2)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (8 / 10, 0),  # measured 8 of 10 (held out 8)
}

FRESH99_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40 (held out 34)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 12, 3 wrong)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH100_FLOORS = {
    "answer": (38 / 40, 0),  # measured 39 of 40 (held out 38)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 13, 2 wrong)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH101_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 30)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 6)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH102_FLOORS = {
    "answer": (25 / 40, 1),  # measured 26 of 40, 1 wrong (held out 25, 2 wrong)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH103_FLOORS = {
    "answer": (34 / 37, 0),  # measured 35 of 37 (held out 34)
    "unanswerable": (12 / 15, 2),  # measured 13 of 15, 2 wrong (held out 13, 2 wrong)
    "out_of_scope": (4 / 10, 0),  # measured 4 of 10 (held out 4)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH104_FLOORS = {
    "answer": (33 / 39, 0),  # measured 34 of 39 (held out 31)
    "unanswerable": (11 / 14, 1),  # measured 12 of 14, 1 wrong (held out 12, 1 wrong)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH105_FLOORS = {
    "answer": (30 / 39, 0),  # measured 31 of 39 (held out 28)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH106_FLOORS = {
    "answer": (32 / 37, 0),  # measured 33 of 37 (held out 31, 1 wrong)
    "unanswerable": (11 / 13, 1),  # measured 12 of 13, 1 wrong (held out 12, 1 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH107_FLOORS = {
    "answer": (31 / 39, 1),  # measured 32 of 39, 1 wrong (held out 31, 1 wrong)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH108_FLOORS = {
    "answer": (31 / 38, 0),  # measured 32 of 38 (held out 31)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 10)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 3)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH109_FLOORS = {
    "answer": (36 / 39, 0),  # measured 37 of 39 (held out 36)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH110_FLOORS = {
    "answer": (38 / 39, 0),  # measured 39 of 39 (held out 39)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 14, 1 wrong)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 8)
}

FRESH111_FLOORS = {
    "answer": (21 / 40, 0),  # measured 22 of 40 (held out 17)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH112_FLOORS = {
    "answer": (32 / 38, 0),  # measured 33 of 38 (held out 30)
    "unanswerable": (12 / 15, 0),  # measured 13 of 15 (held out 13)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH113_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 34)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH114_FLOORS = {
    "answer": (32 / 39, 0),  # measured 33 of 39 (held out 31)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 14)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH115_FLOORS = {
    "answer": (33 / 38, 0),  # measured 34 of 38 (held out 33)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 5)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH116_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40 (held out 32)
    "unanswerable": (13 / 15, 1),  # measured 14 of 15, 1 wrong (held out 12, 3 wrong)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 8)
    "person": (4 / 4, 0),  # measured 4 of 4 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH117_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 34)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 13, 1 wrong)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 4, 1 wrong)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH118_FLOORS = {
    "answer": (34 / 38, 0),  # measured 35 of 38 (held out 33)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 14)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 7, 1 wrong)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH119_FLOORS = {
    "answer": (30 / 39, 0),  # measured 31 of 39 (held out 29)
    "unanswerable": (12 / 15, 0),  # measured 13 of 15 (held out 13)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH120_FLOORS = {
    "answer": (25 / 39, 0),  # measured 26 of 39 (held out 26)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 7)
    "person": (4 / 5, 0),  # measured 4 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH121_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40 (held out 33)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 7)
    "person": (3 / 3, 0),  # measured 3 of 3 (held out 2)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH122_FLOORS = {
    "answer": (32 / 39, 0),  # measured 33 of 39 (held out 33)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH123_FLOORS = {
    "answer": (33 / 40, 0),  # measured 34 of 40 (held out 31)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 9)
    "person": (3 / 4, 0),  # measured 3 of 4 (held out 2)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 8)
}

FRESH124_FLOORS = {
    "answer": (35 / 40, 1),  # measured 36 of 40, 1 wrong (held out 36, 1 wrong)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH125_FLOORS = {
    "answer": (28 / 40, 0),  # measured 29 of 40 (held out 28)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH126_FLOORS = {
    "answer": (31 / 40, 0),  # measured 32 of 40 (held out 29)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 14)
    "out_of_scope": (9 / 10, 0),  # measured 9 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH127_FLOORS = {
    "answer": (26 / 40, 0),  # measured 27 of 40 (held out 25)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 7)
}

FRESH128_FLOORS = {
    "answer": (34 / 39, 0),  # measured 35 of 39 (held out 33)
    "unanswerable": (13 / 14, 0),  # measured 14 of 14 (held out 13, 1 wrong)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 9)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH129_FLOORS = {
    "answer": (38 / 40, 0),  # measured 39 of 40 (held out 38)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH130_FLOORS = {
    "answer": (29 / 40, 0),  # measured 30 of 40 (held out 30)
    "unanswerable": (11 / 15, 0),  # measured 12 of 15 (held out 11, 1 wrong)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 8)
}

FRESH131_FLOORS = {
    "answer": (21 / 40, 0),  # measured 22 of 40 (held out 21)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 14, 1 wrong)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH132_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 34)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 9)
}

FRESH133_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 34)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH134_FLOORS = {
    "answer": (24 / 40, 0),  # measured 25 of 40 (held out 25)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 14)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH135_FLOORS = {
    "answer": (32 / 40, 0),  # measured 33 of 40 (held out 33)
    "unanswerable": (13 / 15, 0),  # measured 14 of 15 (held out 13)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 8)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH136_FLOORS = {
    "answer": (27 / 40, 0),  # measured 28 of 40 (held out 27)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (8 / 10, 0),  # measured 8 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH137_FLOORS = {
    "answer": (28 / 40, 0),  # measured 29 of 40 (held out 26)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 15)
    "out_of_scope": (5 / 10, 0),  # measured 5 of 10 (held out 5)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH138_FLOORS = {
    "answer": (25 / 40, 0),  # measured 26 of 40 (held out 26)
    # (one asserted: "Can invoices be emailed directly to our accounts payable mailbox ...?")
    "unanswerable": (12 / 15, 1),  # measured 13 of 15 (held out 13)
    "out_of_scope": (7 / 10, 0),  # measured 7 of 10 (held out 7)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

FRESH139_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 35)
    "unanswerable": (14 / 15, 0),  # measured 15 of 15 (held out 13)
    "out_of_scope": (10 / 10, 0),  # measured 10 of 10 (held out 10)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 4)
    "action": (9 / 10, 0),  # measured 9 of 10 (held out 9)
}

FRESH140_FLOORS = {
    "answer": (34 / 40, 0),  # measured 35 of 40 (held out 34)
    "unanswerable": (12 / 15, 0),  # measured 13 of 15 (held out 12)
    "out_of_scope": (6 / 10, 0),  # measured 6 of 10 (held out 6)
    "person": (5 / 5, 0),  # measured 5 of 5 (held out 5)
    "action": (10 / 10, 0),  # measured 10 of 10 (held out 10)
}

#: Every set with its floors: one list for the floors test and the no-shared-message check.
SETS = {
    SET: FLOORS,
    PROBE: PROBE_FLOORS,
    HOLDOUT: HOLDOUT_FLOORS,
    REQUESTS: REQUESTS_FLOORS,
    OFFTOPIC: OFFTOPIC_FLOORS,
    FRESH: FRESH_FLOORS,
    FRESH4: FRESH4_FLOORS,
    REQUESTS2: REQUESTS2_FLOORS,
    FRESH5: FRESH5_FLOORS,
    REQUESTS6: REQUESTS6_FLOORS,
    FRESH6: FRESH6_FLOORS,
    FRESH7: FRESH7_FLOORS,
    FRESH11: FRESH11_FLOORS,
    FRESH12: FRESH12_FLOORS,
    FRESH16: FRESH16_FLOORS,
    FRESH17: FRESH17_FLOORS,
    FRESH22: FRESH22_FLOORS,
    FRESH23: FRESH23_FLOORS,
    FRESH26: FRESH26_FLOORS,
    FRESH27: FRESH27_FLOORS,
    FRESH28: FRESH28_FLOORS,
    FRESH31: FRESH31_FLOORS,
    FRESH32: FRESH32_FLOORS,
    FRESH33: FRESH33_FLOORS,
    FRESH34: FRESH34_FLOORS,
    FRESH35: FRESH35_FLOORS,
    FRESH36: FRESH36_FLOORS,
    FRESH37: FRESH37_FLOORS,
    FRESH38: FRESH38_FLOORS,
    FRESH39: FRESH39_FLOORS,
    FRESH40: FRESH40_FLOORS,
    FRESH41: FRESH41_FLOORS,
    FRESH42: FRESH42_FLOORS,
    FRESH43: FRESH43_FLOORS,
    FRESH44: FRESH44_FLOORS,
    FRESH45: FRESH45_FLOORS,
    FRESH46: FRESH46_FLOORS,
    FRESH47: FRESH47_FLOORS,
    FRESH48: FRESH48_FLOORS,
    FRESH49: FRESH49_FLOORS,
    FRESH50: FRESH50_FLOORS,
    FRESH51: FRESH51_FLOORS,
    FRESH52: FRESH52_FLOORS,
    FRESH53: FRESH53_FLOORS,
    FRESH54: FRESH54_FLOORS,
    FRESH55: FRESH55_FLOORS,
    FRESH56: FRESH56_FLOORS,
    FRESH57: FRESH57_FLOORS,
    FRESH58: FRESH58_FLOORS,
    FRESH59: FRESH59_FLOORS,
    FRESH60: FRESH60_FLOORS,
    FRESH61: FRESH61_FLOORS,
    FRESH62: FRESH62_FLOORS,
    FRESH63: FRESH63_FLOORS,
    FRESH64: FRESH64_FLOORS,
    FRESH65: FRESH65_FLOORS,
    FRESH66: FRESH66_FLOORS,
    FRESH67: FRESH67_FLOORS,
    FRESH68: FRESH68_FLOORS,
    FRESH69: FRESH69_FLOORS,
    FRESH70: FRESH70_FLOORS,
    FRESH71: FRESH71_FLOORS,
    FRESH72: FRESH72_FLOORS,
    FRESH73: FRESH73_FLOORS,
    FRESH74: FRESH74_FLOORS,
    FRESH75: FRESH75_FLOORS,
    FRESH76: FRESH76_FLOORS,
    FRESH77: FRESH77_FLOORS,
    FRESH78: FRESH78_FLOORS,
    FRESH79: FRESH79_FLOORS,
    FRESH80: FRESH80_FLOORS,
    FRESH81: FRESH81_FLOORS,
    FRESH82: FRESH82_FLOORS,
    FRESH83: FRESH83_FLOORS,
    FRESH84: FRESH84_FLOORS,
    FRESH85: FRESH85_FLOORS,
    FRESH86: FRESH86_FLOORS,
    FRESH87: FRESH87_FLOORS,
    FRESH88: FRESH88_FLOORS,
    FRESH89: FRESH89_FLOORS,
    FRESH90: FRESH90_FLOORS,
    FRESH91: FRESH91_FLOORS,
    FRESH92: FRESH92_FLOORS,
    FRESH93: FRESH93_FLOORS,
    FRESH94: FRESH94_FLOORS,
    FRESH95: FRESH95_FLOORS,
    FRESH96: FRESH96_FLOORS,
    FRESH97: FRESH97_FLOORS,
    FRESH98: FRESH98_FLOORS,
    FRESH99: FRESH99_FLOORS,
    FRESH100: FRESH100_FLOORS,
    FRESH101: FRESH101_FLOORS,
    FRESH102: FRESH102_FLOORS,
    FRESH103: FRESH103_FLOORS,
    FRESH104: FRESH104_FLOORS,
    FRESH105: FRESH105_FLOORS,
    FRESH106: FRESH106_FLOORS,
    FRESH107: FRESH107_FLOORS,
    FRESH108: FRESH108_FLOORS,
    FRESH109: FRESH109_FLOORS,
    FRESH110: FRESH110_FLOORS,
    FRESH111: FRESH111_FLOORS,
    FRESH112: FRESH112_FLOORS,
    FRESH113: FRESH113_FLOORS,
    FRESH114: FRESH114_FLOORS,
    FRESH115: FRESH115_FLOORS,
    FRESH116: FRESH116_FLOORS,
    FRESH117: FRESH117_FLOORS,
    FRESH118: FRESH118_FLOORS,
    FRESH119: FRESH119_FLOORS,
    FRESH120: FRESH120_FLOORS,
    FRESH121: FRESH121_FLOORS,
    FRESH122: FRESH122_FLOORS,
    FRESH123: FRESH123_FLOORS,
    FRESH124: FRESH124_FLOORS,
    FRESH125: FRESH125_FLOORS,
    FRESH126: FRESH126_FLOORS,
    FRESH127: FRESH127_FLOORS,
    FRESH128: FRESH128_FLOORS,
    FRESH129: FRESH129_FLOORS,
    FRESH130: FRESH130_FLOORS,
    FRESH131: FRESH131_FLOORS,
    FRESH132: FRESH132_FLOORS,
    FRESH133: FRESH133_FLOORS,
    FRESH134: FRESH134_FLOORS,
    FRESH135: FRESH135_FLOORS,
    FRESH136: FRESH136_FLOORS,
    FRESH137: FRESH137_FLOORS,
    FRESH138: FRESH138_FLOORS,
    FRESH139: FRESH139_FLOORS,
    FRESH140: FRESH140_FLOORS,
}


@pytest.mark.parametrize("path", [SET, PROBE], ids=["paraphrases", "probe"])
def test_the_set_is_large_enough_and_covers_every_kind(path: Path) -> None:
    cases = load_set(path)
    assert len(cases) >= 60
    assert {c.kind for c in cases} == set(FLOORS)


def test_the_requests_set_covers_its_kinds_in_other_languages_too() -> None:
    cases = load_set(REQUESTS)
    assert len(cases) >= 30
    assert {c.kind for c in cases} == set(REQUESTS_FLOORS)
    # Each language the pack speaks besides English asks for a person and to act.
    for word in ("¿", "Sie", "vous"):
        assert {c.kind for c in cases if word in c.text} >= {"person"}


def test_the_sets_share_no_message() -> None:
    seen: set[str] = set()
    for path in SETS:
        said = {c.text.casefold() for c in load_set(path)}
        assert not said & seen, path
        seen |= said


@pytest.mark.parametrize(
    ("path", "floors"),
    list(SETS.items()),
    ids=[path.stem.removeprefix("acme_") for path in SETS],
)
async def test_the_set_holds_its_floors(
    app: App, path: Path, floors: dict[str, tuple[float, int]]
) -> None:
    scores = await run_set(app.agent, app.store, load_set(path))
    report = scores.as_dict()["kinds"]
    for kind, (least_right, most_wrong) in floors.items():
        assert scores.share(kind) >= least_right - 1e-9, (kind, report[kind], scores.misses)
        assert report[kind].get("wrong", 0) <= most_wrong, (kind, report[kind], scores.misses)


def _record(
    move: str, facts: list[str], flow: str | None = None, calls: int = 0, outcome: str | None = None
) -> dict:
    record: dict = dict(new_record("c", 1, "t", "web", None))
    record["move"] = {"name": move, "why": "", "escalate": False}
    record["legal"] = {"moves": [move], "rule": "r", "outcome": outcome}
    record["facts"] = [{"key": k, "source": "faq", "mode": "bm25"} for k in facts]
    record["flow"] = {"name": flow} if flow else None
    record["model_calls"] = [{"provider": "offline"}] * calls
    return record


def test_verdicts() -> None:
    answer = Case("q", "answer", ["doc-monitor"])
    cite = [{"type": "text", "text": "x", "citations": [{"key": "doc-monitor#alerts"}]}]
    assert verdict(answer, _record("answer", ["doc-monitor#alerts"]), cite) == "right"
    other = [{"type": "text", "text": "x", "citations": [{"key": "faq-docker"}]}]
    assert verdict(answer, _record("answer", ["faq-docker"]), other) == "wrong"
    assert verdict(answer, _record("answer", []), []) == "safe"
    assert verdict(Case("q", "unanswerable"), _record("answer", ["faq-x"]), other) == "wrong"
    assert verdict(Case("q", "unanswerable"), _record("decline", []), []) == "safe"
    outside = Case("q", "out_of_scope")
    assert verdict(outside, _record("decline", []), []) == "right"
    assert verdict(outside, _record("decline", [], calls=1), []) == "safe"
    assert verdict(Case("q", "action", flow="refund"), _record("ask", [], "refund"), []) == "right"
    # The playbook qualifying a demo lead is the demo started; another outcome is not.
    demo = Case("q", "action", flow="demo")
    assert verdict(demo, _record("ask", [], outcome="demo"), []) == "right"
    assert verdict(demo, _record("ask", [], outcome="engineer"), []) == "safe"
    assert verdict(demo, _record("answer", []), []) == "safe"
    assert verdict(Case("q", "person"), _record("handoff", []), []) == "right"
    lookalike = Case("what is your refund policy", "lookalike")
    assert verdict(lookalike, _record("answer", ["faq-pricing"]), []) == "right"
    assert verdict(lookalike, _record("handoff", []), []) == "wrong"
    assert verdict(lookalike, _record("ask", [], "refund"), []) == "wrong"
    assert verdict(lookalike, _record("ask", [], outcome="demo"), []) == "wrong"


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"text": "a", "kind": "answer"}\n{"text": "b", "kind": "joke"}\n')
    with pytest.raises(ConfigError, match=r"set\.jsonl:2: kind 'joke'"):
        load_set(bad)
