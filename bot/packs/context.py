"""Site context: ``context.yaml`` maps the pages a visitor may be on to hypotheses.

A page's URL path matches a glob (``/monitor/*``) and gives a likely product or intent. A hypothesis
is only ever a hint: it orders the first question (the greeting names the product, a clarify
question offers the intent first) and is recorded as a hypothesis. It never fills a value and never
passes a gate; nothing in the turn reads it but the wording of that first question.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bot.errors import PackError

if TYPE_CHECKING:
    from bot.packs.model import Pack

FILE = "context.yaml"
GREETING = "greeting"
GREETING_WITH_PRODUCT = "greeting_context"
MAX_URL = 2000
MAX_TITLE = 300

_page = {
    "type": "object",
    "properties": {
        # A glob over the URL's path (``*`` any run of characters, ``?`` one), first match wins.
        "match": {"type": "string", "pattern": "^/", "maxLength": 300},
        "product": {"type": "string", "minLength": 1},
        "intent": {"type": "string", "minLength": 1},
        "note": {"type": "string"},
    },
    "required": ["match"],
    "anyOf": [{"required": ["product"]}, {"required": ["intent"]}],
    "additionalProperties": False,
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"pages": {"type": "array", "items": _page, "minItems": 1}},
    "required": ["pages"],
    "additionalProperties": False,
}


@dataclass
class PageHint:
    match: str
    product: str | None = None
    intent: str | None = None
    note: str = ""


def page_hints(data: dict[str, Any]) -> list[PageHint]:
    return [PageHint(**page) for page in data.get("pages", [])]


def check(pack: Pack, error: Any) -> list[PackError]:
    """Each page names a declared product and intent. ``error(path, message)`` makes the
    :class:`PackError` pointing into ``context.yaml``."""
    products = {p.key for p in pack.products}
    intents = {i.name for i in pack.intents}
    out = []
    for i, hint in enumerate(pack.context):
        if hint.product is not None and hint.product not in products:
            out.append(error(("pages", i, "product"), f"unknown product {hint.product!r}"))
        if hint.intent is not None and hint.intent not in intents:
            out.append(error(("pages", i, "intent"), f"unknown intent {hint.intent!r}"))
    return out


def hypothesis_for(pack: Pack, url: str | None) -> dict[str, Any] | None:
    """The first page hint whose glob matches ``url``'s path: ``{"match", "product", "intent"}``
    with the product's name, or None. Only a hint (see the module's doc)."""
    if not url:
        return None
    path = urlsplit(url).path or "/"
    for hint in pack.context:
        if fnmatchcase(path, hint.match):
            product = next((p for p in pack.products if p.key == hint.product), None)
            return {
                "match": hint.match,
                "product": hint.product,
                "product_name": product.name if product else None,
                "intent": hint.intent,
            }
    return None


def page_fields(body: dict[str, Any]) -> dict[str, str]:
    """The page a client sent (``url``, ``title``, ``referrer``), checked: an http(s) URL, bounded
    text. Raises ValueError naming the field."""
    url = body.get("url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        raise ValueError("url must be the page's http(s) address")
    page = {"url": url, "title": body.get("title") or "", "referrer": body.get("referrer") or ""}
    for name, limit in (("url", MAX_URL), ("title", MAX_TITLE), ("referrer", MAX_URL)):
        if not isinstance(page[name], str):
            raise ValueError(f"{name} must be text")
        if len(page[name]) > limit:
            raise ValueError(f"{name} is over {limit} characters")
    if page["referrer"] and urlsplit(page["referrer"]).scheme not in ("http", "https"):
        raise ValueError("referrer must be an http(s) address")
    return page


#: Who collected the consent: the widget asked the visitor, or the host site did.
SOURCES = ("visitor", "site")


def consented(
    pack: Pack, source: str, page: dict[str, str] | None, now: datetime | None = None
) -> dict[str, Any]:
    """The conversation's site context: consent given by ``source`` with ``page``, or refused
    (``page`` None: nothing about the page is kept)."""
    at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    return {
        "consent": {"given": page is not None, "source": source, "at": at},
        "page": page,
        "hypothesis": hypothesis_for(pack, page["url"]) if page else None,
    }


def greeting(pack: Pack, site: dict[str, Any], language: str | None = None) -> str:
    """The opening line, naming the likely product when the page suggests one."""
    product = (site.get("hypothesis") or {}).get("product_name")
    lang = language if language in pack.templates else pack.language
    if product and GREETING_WITH_PRODUCT in pack.templates[lang]:
        return pack.template(GREETING_WITH_PRODUCT, lang, product=product)
    return pack.template(GREETING, lang)
