"""A DEMO orders API, served by gatebot's own web server under ``/demo-api``.

It exists so the sample pack shows an order lookup, a refund with its read-back and seat changes
end to end with no real backend. Everything is in memory and reset at every start. It answers only
with the Bearer token the catalog names (``ACME_ORDERS_TOKEN``, demo default ``acme-demo-token``).

Ownership, as a customer would understand it: every order and subscription carries its owner's
email and verified identities, and a lookup answers only for the identity the bot sends (a
signed-in customer) or, with none, when the email given is that one (a wrong email looks exactly
like a missing order). The catalog declares the lookups with ``owns:``, so a successful lookup
makes the conversation the owner of that order, and only owned orders can be refunded.
"""

from __future__ import annotations

import hmac
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from typing import Any, TypeVar

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from bot import safejson

PREFIX = "/demo-api"
REFUND_WINDOW_DAYS = 30
REFUND_METHODS = ("card", "store credit", "bank transfer")
MAX_SEATS = 500
#: What a subscription's plan is built from: seats (at least one) and add-ons (none or more).
ITEMS = {"seats": (1, MAX_SEATS), "storage_packs": (0, 50), "priority_support": (0, 1)}


@dataclass
class Order:
    order_id: str
    email: str
    amount: str  # "42.00", in ``currency``
    currency: str
    placed: str
    #: How a refund is paid unless the customer asks otherwise.
    default_refund_method: str = "store credit"
    status: str = "paid"
    refunded_to: str | None = None
    #: The verified identities (``web:ID``, ``slack:ID``, ``discord:ID``) of the order's owner.
    customers: tuple[str, ...] = ()


@dataclass
class Subscription:
    subscription_id: str
    email: str
    plan: str
    seats: int
    storage_packs: int = 0
    priority_support: int = 0
    #: The verified identities of the subscription's owner, as on an order.
    customers: tuple[str, ...] = ()

    def items(self) -> dict[str, int]:
        return {item: getattr(self, item) for item in ITEMS}


Owned = TypeVar("Owned", Order, Subscription)

#: The demo customers' verified identities: a signed-in web visitor, and their Slack user.
SAM = ("web:sam", "slack:USAM")
ALEX = ("web:alex", "slack:UALEX")


def seed(today: date | None = None) -> tuple[dict[str, Order], dict[str, Subscription]]:
    """The demo's records: 1042 can be refunded, 1043 is past the refund window, 1044 belongs to
    someone else; one subscription with 5 seats and one storage pack."""
    today = today or date.today()
    days = lambda n: (today - timedelta(days=n)).isoformat()  # noqa: E731
    orders = [
        Order("1042", "sam@example.com", "42.00", "USD", days(5), customers=SAM),
        Order("1043", "sam@example.com", "129.00", "USD", days(45), "card", customers=SAM),
        Order("1044", "alex@example.com", "18.00", "USD", days(2), customers=ALEX),
    ]
    subs = [Subscription("sub_acme1", "sam@example.com", "team", 5, storage_packs=1, customers=SAM)]
    return {o.order_id: o for o in orders}, {s.subscription_id: s for s in subs}


def _public(order: Order) -> dict[str, Any]:
    """An order as a lookup answers it: its owner's identities stay with the API."""
    return {k: v for k, v in asdict(order).items() if k != "customers"}


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response(
        {"demo": True, "error": {"code": code, "message": message}}, status=status
    )


class DemoApi:
    def __init__(self, token: str | None, today: date | None = None) -> None:
        self.token = token
        self.today = today or date.today()
        self.orders, self.subscriptions = seed(self.today)

    def routes(self) -> list[tuple[str, str, Any]]:
        return [
            ("GET", PREFIX, self.index),
            ("GET", PREFIX + "/orders/{order_id}", self.get_order),
            ("POST", PREFIX + "/orders/{order_id}/refund", self.refund),
            ("GET", PREFIX + "/subscriptions/{subscription_id}/seats", self.get_seats),
            ("POST", PREFIX + "/subscriptions/{subscription_id}/seats", self.change_seats),
            ("POST", PREFIX + "/subscriptions/{subscription_id}/items", self.change_item),
        ]

    def _denied(self, request: web.Request) -> web.Response | None:
        if self.token is None:
            return None
        given = request.headers.get("Authorization", "")
        # surrogateescape: header bytes that were not UTF-8 compare as the bytes they were.
        sent = given.encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(sent, f"Bearer {self.token}".encode()):
            return _error(401, "unauthorized", "a valid Bearer token is required")
        return None

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any] | None:
        try:
            body = safejson.loads(await request.read())
        except (safejson.BadJson, RequestPayloadError):
            return None
        return body if isinstance(body, dict) else None

    def _refundable(self, order: Order) -> tuple[bool, str]:
        if order.status == "refunded":
            return False, f"order {order.order_id} was already refunded"
        age = (self.today - date.fromisoformat(order.placed)).days
        if age > REFUND_WINDOW_DAYS:
            return False, (
                f"order {order.order_id} was placed {age} days ago, past the "
                f"{REFUND_WINDOW_DAYS}-day refund window"
            )
        return True, "within the refund window"

    def _owned_order(self, request: web.Request) -> Order | None:
        return self._owned(self.orders.get(request.match_info["order_id"]), request)

    @staticmethod
    def _owned(record: Owned | None, request: web.Request) -> Owned | None:
        """The order or subscription when the caller shows it is the owner's: by the verified
        identity the bot sends (``customer``) when there is one, else by the record's email."""
        if record is None:
            return None
        if "customer" in request.query:
            return record if request.query["customer"] in record.customers else None
        email = request.query.get("email", "").strip().lower()
        return record if email and record.email == email else None

    async def index(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"demo": True, "note": "gatebot's demo orders API: in memory, reset at every start"}
        )

    async def get_order(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        order = self._owned_order(request)
        if order is None:  # a wrong email reads exactly like a missing order
            return _error(404, "not_found", "no such order for that email")
        refundable, why = self._refundable(order)
        return web.json_response(
            {"demo": True, **_public(order), "refundable": refundable, "refund_note": why}
        )

    async def refund(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        order = self.orders.get(request.match_info["order_id"])
        if order is None:
            return _error(404, "not_found", "no such order")
        body = await self._body(request)
        method = body.get("method") if body else None
        if not isinstance(method, str) or method not in REFUND_METHODS:
            return _error(400, "bad_request", f"method must be one of {', '.join(REFUND_METHODS)}")
        amount = body.get("amount") if body else None
        # Refund exactly what was read back to the customer, or nothing.
        if amount is not None and amount != order.amount:
            return _error(409, "amount_mismatch", f"order {order.order_id} is {order.amount}")
        refundable, why = self._refundable(order)
        if not refundable:
            return _error(409, "not_refundable", why)
        order.status, order.refunded_to = "refunded", method
        return web.json_response(
            {
                "demo": True,
                "order_id": order.order_id,
                "status": "refunded",
                "amount": order.amount,
                "currency": order.currency,
                "method": method,
            }
        )

    async def get_seats(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        sub = self._owned(self.subscriptions.get(request.match_info["subscription_id"]), request)
        if sub is None:  # a wrong email or identity reads exactly like a missing subscription
            return _error(404, "not_found", "no such subscription for that email")
        public = {k: v for k, v in asdict(sub).items() if k != "customers"}
        return web.json_response({"demo": True, **public, "items": sub.items()})

    async def change_seats(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        sub = self.subscriptions.get(request.match_info["subscription_id"])
        if sub is None:
            return _error(404, "not_found", "no such subscription")
        body = await self._body(request)
        delta = body.get("delta") if body else None
        if not isinstance(delta, int) or isinstance(delta, bool) or delta == 0:
            return _error(400, "bad_request", "delta must be a non-zero whole number")
        seats = sub.seats + delta
        if not 1 <= seats <= MAX_SEATS:
            return _error(409, "seat_limit", f"a subscription has 1 to {MAX_SEATS} seats")
        sub.seats = seats
        return web.json_response(
            {"demo": True, "subscription_id": sub.subscription_id, "delta": delta, "seats": seats}
        )

    async def change_item(self, request: web.Request) -> web.Response:
        """Seats or an add-on, up or down by ``delta``; the answer carries every item's count."""
        if (denied := self._denied(request)) is not None:
            return denied
        sub = self.subscriptions.get(request.match_info["subscription_id"])
        if sub is None:
            return _error(404, "not_found", "no such subscription")
        body = await self._body(request) or {}
        item, delta = body.get("item"), body.get("delta")
        if not isinstance(item, str) or item not in ITEMS:  # a dict is no item (nor hashable)
            return _error(400, "bad_request", f"item must be one of {', '.join(ITEMS)}")
        if not isinstance(delta, int) or isinstance(delta, bool) or delta == 0:
            return _error(400, "bad_request", "delta must be a non-zero whole number")
        low, high = ITEMS[item]
        count = getattr(sub, item) + delta
        if not low <= count <= high:
            return _error(409, "item_limit", f"a subscription has {low} to {high} {item}")
        setattr(sub, item, count)
        return web.json_response(
            {
                "demo": True,
                "subscription_id": sub.subscription_id,
                "item": item,
                "delta": delta,
                "items": sub.items(),
            }
        )
