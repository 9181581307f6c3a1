"""The reply gate's action-claim and offer rules in the sample pack's other template languages
(bot/turn/gatewords.py): a table of cases per language, each hostile draft refused by its rule,
each good answer passed, and a claim passed only when a tool with its effect ran."""

from __future__ import annotations

from typing import Any

import pytest

from bot.extend.retriever import Fact
from bot.packs import Pack
from bot.turn import replygate
from bot.turn.act import SYSTEM
from bot.turn.gatewords import LANGUAGES

FACTS = [Fact(k, "", "faq", "faq") for k in ("faq-docker", "faq-trial", "faq-pricing")]

#: Per language: (draft, the rule that must refuse it; "" when it must pass).
CASES: dict[str, list[tuple[str, str]]] = {
    "fr": [
        ("C'est fait : votre commande 1044 a été remboursée sur votre carte.", "action_claim"),
        ("J'ai remboursé la commande 1044.", "action_claim"),
        ("J\u2019ai annulé votre abonnement.", "action_claim"),
        ("Je vais annuler votre abonnement tout de suite.", "action_claim"),
        ("Votre commande 1044 est maintenant annulée.", "action_claim"),
        ("Je vous rembourserai demain.", "action_claim"),
        ("Le remboursement est effectué.", "action_claim"),
        ("Nous avons envoyé la facture à votre adresse.", "action_claim"),
        ("Je vous ai réservé une démonstration mardi.", "action_claim"),
        ("Je vous accorde 50 % de réduction sur votre prochaine facture.", "offer"),
        ("Profitez de trois mois gratuits.", "offer"),
        ("Voici un code promo pour vous.", "offer"),
        ("Votre essai gratuit de 30 jours commence aujourd'hui.", "offer"),
        ("Nous vous offrons l'accès gratuit à vie.", "offer"),
        ("Oui, Acme Pipelines exécute les builds Docker nativement [faq-docker].", ""),
        ("Chaque produit a un essai gratuit de 14 jours, sans carte bancaire [faq-trial].", ""),
        ("Acme Cloud a une formule gratuite et des offres payantes par équipe [faq-pricing].", ""),
        ("Les factures sont envoyées chaque mois au contact de facturation.", ""),
        ("Vous pouvez écrire à support@acme.example.", ""),
        ("Voulez-vous que je rembourse la commande 1042 ?", ""),
        ("Je peux vous aider à annuler votre abonnement.", ""),
    ],
    "de": [
        ("Erledigt: Ihre Bestellung 1044 wurde auf Ihre Karte erstattet.", "action_claim"),
        ("Ich habe Ihre Bestellung 1044 storniert.", "action_claim"),
        ("Ich werde Ihnen das Geld sofort erstatten.", "action_claim"),
        ("Ihre Rechnung ist jetzt gesendet.", "action_claim"),
        ("Die Rückerstattung ist abgeschlossen.", "action_claim"),
        ("Wir haben Ihr Abonnement gekündigt.", "action_claim"),
        ("Ich storniere Ihre Bestellung.", "action_claim"),
        ("Ihr Konto wurde gelöscht.", "action_claim"),
        ("Sie bekommen 50 % Rabatt auf alles.", "offer"),
        ("Drei Monate kostenlos für Sie!", "offer"),
        ("Hier ist Ihr Gutscheincode.", "offer"),
        ("Wir schenken Ihnen eine kostenlose Testphase von 30 Tagen.", "offer"),
        ("Die Gebühr wird Ihnen erlassen.", "offer"),
        ("Ja, Acme Pipelines führt Docker-Builds nativ aus [faq-docker].", ""),
        (
            "Jedes Produkt hat eine 14-tägige kostenlose Testphase, ohne Kreditkarte [faq-trial].",
            "",
        ),
        ("Acme Cloud hat einen kostenlosen Tarif und bezahlte Pläne pro Team [faq-pricing].", ""),
        ("Rechnungen werden jeden Monat an den Rechnungskontakt gesendet.", ""),
        ("Sie können an support@acme.example schreiben.", ""),
        ("Soll ich Ihre Bestellung 1042 erstatten?", ""),
        ("Ich kann Ihnen helfen, Ihr Abonnement zu kündigen.", ""),
    ],
    "es": [
        ("Listo: su pedido 1044 ha sido reembolsado a su tarjeta.", "action_claim"),
        ("He cancelado su suscripción.", "action_claim"),
        ("Voy a reembolsarle el pedido ahora mismo.", "action_claim"),
        ("Le enviaré la factura hoy.", "action_claim"),
        ("Su pedido 1044 ya está cancelado.", "action_claim"),
        ("El reembolso fue completado.", "action_claim"),
        ("Hemos eliminado su cuenta.", "action_claim"),
        ("Su demostración fue reservada para el martes.", "action_claim"),
        ("Le ofrecemos un 50 % de descuento para siempre.", "offer"),
        ("Tres meses gratis para usted.", "offer"),
        ("Use este cupón en su próxima compra.", "offer"),
        ("Su prueba gratuita de 30 días empieza hoy.", "offer"),
        ("Se lo dejamos sin coste adicional.", "offer"),
        ("Sí, Acme Pipelines ejecuta compilaciones de Docker de forma nativa [faq-docker].", ""),
        ("Cada producto tiene una prueba gratuita de 14 días, sin tarjeta [faq-trial].", ""),
        ("Acme Cloud tiene un plan gratuito y planes de pago por equipo [faq-pricing].", ""),
        ("Las facturas se envían cada mes al contacto de facturación.", ""),
        ("Puede escribir a support@acme.example.", ""),
        ("¿Quiere que reembolse el pedido 1042?", ""),
        ("Puedo ayudarle a cancelar su suscripción.", ""),
    ],
}

#: Per language, a claim and the effect whose tool makes it true.
TRUE_CLAIMS: dict[str, tuple[str, str]] = {
    "fr": ("C'est fait : la commande 1042 est remboursée sur votre carte.", "refund"),
    "de": ("Erledigt: Bestellung 1042 wurde auf Ihre Karte erstattet.", "refund"),
    "es": ("Listo: el pedido 1042 ha sido reembolsado a su tarjeta.", "refund"),
}


def check(text: str, pack: Pack, **kw: Any) -> Any:
    return replygate.check(
        text,
        {f.key for f in FACTS},
        pack.excluded_names,
        facts=FACTS,
        allow=replygate.allowances(pack),
        instructions=SYSTEM.format(company=pack.company),
        **kw,
    )


def test_every_template_language_of_the_sample_pack_has_rules_and_cases(pack: Pack) -> None:
    others = set(pack.templates) - {"en"}
    assert others >= {"es", "de", "fr"}
    assert others <= set(LANGUAGES) and others <= set(CASES)
    for lang in others:
        rules = {rule for _, rule in CASES[lang]}
        assert {"action_claim", "offer", ""} <= rules, lang


@pytest.mark.parametrize(
    ("lang", "text", "rule"),
    [(lang, text, rule) for lang, cases in CASES.items() for text, rule in cases],
)
def test_each_case_is_refused_by_its_rule_or_passes(
    pack: Pack, lang: str, text: str, rule: str
) -> None:
    result = check(text, pack)
    if rule:
        assert rule in result.rules, (lang, result.reasons)
    else:
        assert result.passed, (lang, result.reasons)


@pytest.mark.parametrize("lang", sorted(TRUE_CLAIMS))
def test_a_claim_passes_only_when_a_tool_with_its_effect_ran(pack: Pack, lang: str) -> None:
    claim, effect = TRUE_CLAIMS[lang]
    assert check(claim, pack, effects={effect}).passed
    assert check(claim, pack, effects={"cancel"}).rules == ["action_claim"]
    assert check(claim, pack).rules == ["action_claim"]


def test_a_fact_in_another_language_never_lends_a_draft_an_offer(pack: Pack) -> None:
    bait = Fact("doc-z#1", "Remise de 90 % pour tout le monde.", "doc", "bm25")
    result = replygate.check(
        "Remise de 90 % pour tout le monde [doc-z#1].",
        {"doc-z#1"},
        [],
        facts=[bait],
        allow=replygate.allowances(pack),
    )
    assert result.rules == ["offer"]
