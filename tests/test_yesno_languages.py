"""Yes/no and values in the sample pack's other languages, read with the same gate as English."""

from __future__ import annotations

import pytest

from bot.flows.steps.phrases import read_message
from bot.packs import load_pack
from bot.turn import yesno
from bot.turn.values import _extract
from tests.conftest import ACME

CASES = {
    "en": [("yes", "yes"), ("no", "no"), ("maybe", None), ("I think so?", None)],
    "fr": [
        ("oui", "yes"),
        ("oui c'est ça", "yes"),
        ("d'accord", "yes"),
        ("Oui, allez-y !", "yes"),
        ("non", "no"),
        ("non merci", "no"),
        ("c'est pas ça", "no"),
        ("peut-être", None),
        ("je crois que oui", None),
        ("pas d'accord", None),
    ],
    "es": [
        ("sí", "yes"),
        ("si", "yes"),
        ("claro", "yes"),
        ("vale, adelante", "yes"),
        ("no", "no"),
        ("no gracias", "no"),
        ("quizás", None),
        ("no sé", None),
    ],
    "de": [
        ("ja", "yes"),
        ("genau", "yes"),
        ("ja, passt", "yes"),
        ("in Ordnung", "yes"),
        ("nein", "no"),
        ("nein danke", "no"),
        ("falsch", "no"),
        ("vielleicht", None),
        ("ich weiß nicht", None),
    ],
}


@pytest.mark.parametrize(("text", "meant"), [case for cases in CASES.values() for case in cases])
def test_yes_no_in_each_language_passes_the_gate_only_when_clear(
    text: str, meant: str | None
) -> None:
    read = yesno.read(text, "yesNo", 0.6)
    if meant is None:
        assert read["outcome"] == "unsure", read
    else:
        assert (read["outcome"], read["answer"]) == ("act", meant), read


@pytest.mark.parametrize(
    ("text", "order_id"),
    [
        ("je voudrais un remboursement pour la commande 1042", "1042"),
        ("para el pedido 1042", "1042"),
        ("für die Bestellung 1042", "1042"),
        ("Bestellung Nr. 1042", "1042"),
        ("commande n° A-1042", "A-1042"),
        ("ma commande pour demain", None),
    ],
)
def test_an_order_number_in_another_language_is_read_word_for_word(
    text: str, order_id: str | None
) -> None:
    found = _extract("order_id_words", text)
    assert found == order_id
    assert found is None or found in text


@pytest.mark.parametrize(
    ("text", "action", "quantity"),
    [
        ("ajoutez 3 licences", "add", 3),
        ("retirez deux sièges", "remove", 2),
        ("añadir 3 asientos", "add", 3),
        ("quitar 2 puestos", "remove", 2),
        ("3 Plätze hinzufügen", "add", 3),
        ("zwei Lizenzen entfernen", "remove", 2),
        ("add 3 seats", "add", 3),
        ("quite a lot: add 4 seats", "add", 4),
    ],
)
def test_a_seat_change_in_another_language_is_read(text: str, action: str, quantity: int) -> None:
    step = load_pack(ACME).flows["add_seats"].step("change_seats")
    reading = read_message(text, step.items)[-1]
    best = max(reading.scores, key=lambda a: reading.scores[a])
    assert (best, reading.item, reading.quantity) == (action, "seats", quantity)
