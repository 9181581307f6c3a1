"""The reply gate's action-claim and commercial-offer rules in the sample pack's other template
languages (French, German, Spanish). English lives in :mod:`bot.turn.replygate` itself.

Every language's patterns apply to every draft, whatever the conversation's language: a hijacked
model that answers in another language than the customer's is gated all the same. Each table
maps the words of a claimed action to the effect a tool must have had for the claim to be true
(the same effects as :data:`bot.turn.replygate.EFFECTS`), in every form a claim takes: a
participle ("remboursé", "erstattet", "reembolsado"), an infinitive after "I will" ("je vais
annuler", "ich werde stornieren", "voy a cancelar"), a first-person future or present ("je
rembourserai", "ich storniere", "enviaré") and a noun that is "done" ("remboursement effectué",
"Erstattung abgeschlossen", "reembolso completado").
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    """One effect's words in one language: ``past`` (participles), ``base`` (infinitives after
    "I will"), ``first`` (first-person forms that are a promise by themselves) and ``noun``."""

    past: tuple[str, ...] = ()
    base: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    noun: tuple[str, ...] = ()


@dataclass(frozen=True)
class Language:
    """A language's action-claim pattern (named groups, each a word of :attr:`verbs`, or a bare
    "done") and its offer pattern."""

    code: str
    verbs: dict[str, str]
    action: re.Pattern[str]
    offer: re.Pattern[str]


def _inflect_romance(word: str) -> tuple[str, ...]:
    """A participle and its feminine and plural forms ("remboursé(e)(s)", "reembolsad(o|a)(s)")."""
    if " " in word:
        return (word,)
    if word.endswith("o"):
        stem = word[:-1]
        return (word, stem + "a", stem + "os", stem + "as")
    return (word, word + "e", word + "s", word + "es")


def _alt(words: list[str]) -> str:
    # The longest first, so "renvoyé" is not read as "envoyé".
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w) for w in ordered)


def _language(
    code: str, table: dict[str, Words], romance: bool, action: str, offer: str
) -> Language:
    """Compile ``action`` (with ``{past}``, ``{base}``, ``{first}``, ``{noun}`` slots) and
    ``offer`` for one language's ``table``."""
    verbs: dict[str, str] = {}
    forms: dict[str, list[str]] = {"past": [], "base": [], "first": [], "noun": []}
    for effect, words in table.items():
        for kind in forms:
            for word in getattr(words, kind):
                for form in _inflect_romance(word) if romance and kind == "past" else (word,):
                    verbs[form.lower()] = effect
                    forms[kind].append(form)
    pattern = action.format(**{kind: _alt(found) for kind, found in forms.items()})
    flags = re.IGNORECASE | re.MULTILINE
    return Language(code, verbs, re.compile(pattern, flags), re.compile(offer, flags))


# fmt: off
_APOS = r"['\u2019]"
_FR_OBJ = rf"(?:(?:vous|lui|leur|le|la|les|l{_APOS}|bien|déjà|maintenant)\s*)*"
FRENCH = _language(
    "fr",
    {
        "refund": Words(("remboursé", "crédité"), ("rembourser", "créditer"),
                        ("rembourserai", "rembourserons", "créditerai"), ("remboursement",)),
        "send": Words(("envoyé", "expédié", "renvoyé", "transmis"),
                      ("envoyer", "expédier", "renvoyer", "transmettre"),
                      ("enverrai", "enverrons", "expédierai", "renverrai", "transmettrai"),
                      ("envoi",)),
        "change": Words(("modifié", "changé", "mis à jour", "ajouté", "retiré", "activé",
                         "désactivé", "appliqué", "augmenté", "réduit", "créé", "transféré",
                         "traité", "réinitialisé"),
                        ("modifier", "changer", "ajouter", "retirer", "activer", "appliquer",
                         "augmenter", "réinitialiser"),
                        ("modifierai", "changerai", "ajouterai", "activerai", "appliquerai"),
                        ("modification",)),
        "book": Words(("réservé", "planifié", "programmé"), ("réserver", "planifier"),
                      ("réserverai", "planifierai"), ("réservation",)),
        "cancel": Words(("annulé", "résilié", "clôturé"), ("annuler", "résilier", "clôturer"),
                        ("annulerai", "annulerons", "résilierai"), ("annulation", "résiliation")),
        "delete": Words(("supprimé", "effacé"), ("supprimer", "effacer"),
                        ("supprimerai", "effacerai"), ("suppression",)),
    },
    romance=True,
    action=(
        rf"\b(?:j{_APOS}|je\s+{_FR_OBJ}|nous\s+{_FR_OBJ}|on\s+{_FR_OBJ})(?:ai|avons|a)\s+"
        rf"{_FR_OBJ}(?P<a>{{past}})\b"
        r"|\b(?:a|ont)\s+(?:bien\s+|déjà\s+|maintenant\s+)?été\s+(?P<c>{past})\b"
        r"|\b(?:votre|vos|la\s+commande|commande\s+(?:n[°o]\s*)?#?\d+)(?:\s+[\w'\u2019-]+){{0,6}}?\s+"
        r"(?:est|sont)\s+(?:maintenant\s+|déjà\s+|bien\s+)?(?P<d>{past})\b"
        rf"|\bje\s+vais\s+{_FR_OBJ}(?P<b>{{base}})\b"
        rf"|\b(?:je|nous)\s+{_FR_OBJ}(?P<g>{{first}})\b"
        r"|\b(?P<e>{noun})\s+(?:est\s+|a\s+été\s+)?(?:effectué|terminé|confirmé|réussi|validé)e?s?\b"
        r"|^\s*(?P<f>c['\u2019]est\s+fait|voilà\s+qui\s+est\s+fait|terminé)\b"
    ),
    offer=(
        r"\b\d+(?:[.,]\d+)?\s?(?:%|pour\s?cent)\s+(?:de\s+)?(?:réduction|remise|rabais)\b"
        r"|\b(?:réductions?|remises?|rabais|codes?\s+promo(?:tionnels?)?|bons?\s+de\s+réduction|"
        r"coupons?|à\s+moitié\s+prix|sans\s+frais|gracieusement|offert\s+par\s+la\s+maison)\b"
        r"|\b(?:essais?|mois|ans?|années?|semaines?|jours?|périodes?|accès|mises?\s+à\s+niveau|"
        r"sièges?|places?)\s+(?:\w+\s+)?(?:gratuit|offert)e?s?\b"
        r"|\bgratuit(?:e|s|es)?\s+pendant\b"
        r"|\b(?:\d+|un|une|deux|trois|six|douze)\s+(?:mois|ans?|années?|semaines?|jours?)\s+"
        r"(?:gratuit|offert)e?s?\b"
    ),
)

_DE_WORDS = r"(?:\s+[\w-]+){{0,8}}?\s+"  # doubled braces: the action text is formatted
GERMAN = _language(
    "de",
    {
        "refund": Words(("erstattet", "rückerstattet", "zurückerstattet", "gutgeschrieben",
                         "zurückgezahlt", "ausgezahlt"),
                        ("erstatten", "rückerstatten", "zurückerstatten", "gutschreiben",
                         "zurückzahlen", "auszahlen"),
                        ("erstatte", "überweise"), ("Erstattung", "Rückerstattung", "Gutschrift")),
        "send": Words(("gesendet", "gesandt", "geschickt", "verschickt", "versendet", "versandt",
                       "zugeschickt", "zugesandt"),
                      ("senden", "schicken", "verschicken", "versenden", "zuschicken"),
                      ("sende", "schicke", "verschicke"), ("Versand",)),
        "change": Words(("geändert", "aktualisiert", "hinzugefügt", "entfernt", "angewendet",
                         "angewandt", "aktiviert", "deaktiviert", "erhöht", "reduziert",
                         "erstellt", "übertragen", "bearbeitet", "umgestellt", "freigeschaltet",
                         "zurückgesetzt"),
                        ("ändern", "aktualisieren", "hinzufügen", "entfernen", "aktivieren",
                         "deaktivieren", "erhöhen", "reduzieren", "umstellen", "freischalten",
                         "zurücksetzen"),
                        ("ändere", "aktualisiere", "aktiviere", "erhöhe"), ("Änderung",)),
        "book": Words(("gebucht", "reserviert", "eingeplant"), ("buchen", "reservieren"),
                      ("buche", "reserviere"), ("Buchung", "Reservierung")),
        "cancel": Words(("storniert", "gekündigt", "annulliert", "geschlossen"),
                        ("stornieren", "kündigen", "annullieren", "schließen"),
                        ("storniere", "kündige"), ("Stornierung", "Kündigung")),
        "delete": Words(("gelöscht",), ("löschen",), ("lösche",), ("Löschung",)),
    },
    romance=False,
    action=(
        rf"\b(?:ich|wir)\s+(?:habe|haben|hab){_DE_WORDS}(?P<a>{{past}})\b"
        rf"|\b(?:wurde|wurden){_DE_WORDS}(?P<c>{{past}})\b"
        r"|\b(?:Ihre?[mnrs]?|die\s+Bestellung|Bestellung\s+(?:Nr\.?\s*)?#?\d+)\b(?:\s+[\w-]+){{0,6}}?"
        rf"\s+(?:ist|sind){_DE_WORDS}(?P<d>{{past}})\b"
        rf"|\bich\s+werde{_DE_WORDS}(?P<b>{{base}})\b"
        r"|\bich\s+(?:\w+\s+)?(?P<g>{first})\b"
        r"|\b(?P<e>{noun})\s+(?:ist\s+|wurde\s+)?(?:jetzt\s+|bereits\s+)?"
        r"(?:abgeschlossen|erfolgt|erfolgreich|bestätigt|durchgeführt|erledigt|veranlasst)\b"
        r"|^\s*(?P<f>erledigt|fertig|geschafft)\b"
    ),
    offer=(
        r"\b\d+(?:[.,]\d+)?\s?(?:%|prozent)\s*(?:Rabatt|Nachlass|Preisnachlass|Ermäßigung|"
        r"günstiger|billiger|Skonto)"
        r"|\b(?:Rabatt\w*|Gutschein\w*|Aktionscodes?|Promo-?Codes?|Preisnachlass|Ermäßigung(?:en)?|"
        r"zum\s+halben\s+Preis|kostenfrei|gratis|umsonst|geschenkt|erlassen)\b"
        r"|\bkostenlose[nmrs]?\s+(?:Test\w*|Probe\w*|Monat\w*|Jahr\w*|Woche\w*|Upgrade\w*|"
        r"Zugang|Sitzplätze|Plätze|Zeitraum)"
        r"|\b(?:\d+|einen|ein|eine|zwei|drei|sechs|zwölf)\s+(?:Monate?|Jahre?|Wochen?|Tage?)\s+"
        r"(?:kostenlos|gratis|umsonst|geschenkt)\b"
    ),
)

SPANISH = _language(
    "es",
    {
        "refund": Words(("reembolsado", "devuelto", "abonado", "acreditado"),
                        ("reembolsar", "devolver", "abonar", "acreditar"),
                        ("reembolsaré", "devolveré", "abonaré", "acreditaré"),
                        ("reembolso", "devolución")),
        "send": Words(("enviado", "mandado", "reenviado"), ("enviar", "mandar", "reenviar"),
                      ("enviaré", "mandaré", "reenviaré"), ("envío",)),
        "change": Words(("cambiado", "modificado", "actualizado", "añadido", "agregado",
                         "quitado", "aplicado", "activado", "desactivado", "aumentado",
                         "reducido", "creado", "transferido", "procesado", "restablecido"),
                        ("cambiar", "modificar", "actualizar", "añadir", "agregar", "aplicar",
                         "activar", "desactivar", "procesar", "restablecer"),
                        ("cambiaré", "modificaré", "actualizaré", "añadiré", "agregaré",
                         "aplicaré", "activaré", "procesaré"), ("cambio",)),
        "book": Words(("reservado", "programado", "agendado"), ("reservar", "programar", "agendar"),
                      ("reservaré", "programaré", "agendaré"), ("reserva",)),
        "cancel": Words(("cancelado", "anulado", "cerrado", "dado de baja"),
                        ("cancelar", "anular", "cerrar"), ("cancelaré", "anularé", "cerraré"),
                        ("cancelación", "baja")),
        "delete": Words(("eliminado", "borrado", "suprimido"), ("eliminar", "borrar"),
                        ("eliminaré", "borraré"), ("eliminación",)),
    },
    romance=True,
    action=(
        r"\b(?:he|hemos)\s+(?:ya\s+)?(?P<a>{past})\b"
        r"|\b(?:ha|han)\s+(?:ya\s+)?sido\s+(?:ya\s+)?(?P<c>{past})\b"
        r"|\b(?:fue|fueron)\s+(?P<c2>{past})\b"
        r"|\b(?:su|sus|el\s+pedido|pedido\s+(?:n[.º°]?\s*)?#?\d+|ya)(?:\s+[\w-]+){{0,6}}?\s+"
        r"(?:está|están|quedó|quedaron|queda|quedan)\s+(?:ya\s+)?(?P<d>{past})\b"
        r"|\bvoy\s+a\s+(?:(?:le|les|lo|la|se)\s+)*(?P<b>{base})(?:le|les|lo|la|selo|sela)?\b"
        r"|\b(?P<g>{first})(?:le|les|lo|la|selo|sela)?\b"
        r"|\b(?P<e>{noun})\s+(?:ya\s+)?(?:está\s+|ha\s+sido\s+|fue\s+)?"
        r"(?:completad|realizad|confirmad|procesad|hech|efectuad)[oa]s?\b"
        r"|^\s*¡?(?P<f>listo|hecho|completado)\b"
    ),
    offer=(
        r"\b\d+(?:[.,]\d+)?\s?(?:%|por\s?ciento)\s+(?:de\s+)?(?:descuento|rebaja|reducción)\b"
        r"|\b(?:descuentos?|rebajas?|cupón|cupones|códigos?\s+promocional(?:es)?|"
        r"códigos?\s+de\s+descuento|vales?\s+de\s+descuento|a\s+mitad\s+de\s+precio|"
        r"sin\s+(?:coste|costo|cargo)|bonificad[oa]s?|de\s+regalo|cortesía\s+de\s+la\s+casa)\b"
        r"|\b(?:pruebas?|mes(?:es)?|años?|semanas?|días?|periodos?|períodos?|acceso|"
        r"actualización|actualizaciones|licencias?|asientos?)\s+(?:\w+\s+)?(?:gratis|gratuit[oa]s?)\b"
        r"|\b(?:\d+|un|una|dos|tres|seis|doce)\s+(?:mes(?:es)?|años?|semanas?|días?)\s+"
        r"(?:gratis|gratuit[oa]s?|de\s+regalo)\b"
    ),
)
# fmt: on

#: The languages besides English whose claims and offers the gate reads, by code.
LANGUAGES: dict[str, Language] = {lang.code: lang for lang in (FRENCH, GERMAN, SPANISH)}
