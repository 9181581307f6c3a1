"""The catalog builds every URL itself and refuses any value that could change where it goes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gatebot_catalog.spec import Api, Endpoint, load_catalog
from gatebot_catalog.urls import Refused, prepare

from bot.errors import PackErrors

CATALOG = """\
apis:
  - name: shop
    base_url: https://api.shop.example:8443/v1
    auth: {type: header, header: X-Api-Key, env: SHOP_KEY}
    endpoints:
      - id: get_order
        method: GET
        path: /orders/{order_id}
        description: one order
        params:
          order_id: {in: path, schema: {type: string}}
          expand: {in: query, schema: {type: string}}
      - id: refund
        method: POST
        path: /orders/{order_id}/refund
        description: refund
        params:
          order_id: {in: path, schema: {type: string}}
          method: {in: body, required: true, schema: {type: string}}
        ownership: order_id
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "apis.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture
def shop(tmp_path: Path) -> Api:
    catalog = load_catalog(write(tmp_path, CATALOG))
    assert catalog is not None
    return catalog.apis["shop"]


def endpoint(api: Api, name: str) -> Endpoint:
    return api.endpoints[name]


def test_a_legitimate_call_is_built_from_the_catalog(shop: Api) -> None:
    req = prepare(shop, endpoint(shop, "get_order"), {"order_id": "10 42", "expand": "a&b=c"})
    assert req.method == "GET" and req.json is None
    assert req.url == "https://api.shop.example:8443/v1/orders/10%2042?expand=a%26b%3Dc"
    post = prepare(shop, endpoint(shop, "refund"), {"order_id": "1042", "method": "card"})
    assert post.url == "https://api.shop.example:8443/v1/orders/1042/refund"
    assert post.json == {"method": "card"}
    assert "X-Api-Key" not in post.headers  # the credential is added only when sending


@pytest.mark.parametrize(
    "value",
    [
        "../admin",
        "..",
        "1042/../../admin",
        "1042/refund",
        "1042%2frefund",
        "1042%2Frefund",
        "1042%252f",
        "1042\\admin",
        "1042%5cadmin",
        "https://evil.example/x",
        "//evil.example",
        "user@evil.example",
        "1042\r\nX-Injected: yes",
        "1042\nHost: evil.example",
        "1042%0d%0aX-Injected: yes",
        "1042?admin=1",
        "1042#top",
        "1042;jsessionid=1",
        "",
        ".",
        "1042\x00",
    ],
)
def test_a_path_value_that_could_change_the_target_is_refused(shop: Api, value: str) -> None:
    with pytest.raises(Refused):
        prepare(shop, endpoint(shop, "get_order"), {"order_id": value})


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"order_id": "1", "debug": "1"}, "declares no parameter 'debug'"),
        ({"order_id": "1", "Authorization": "Bearer x"}, "declares no parameter"),
        ({}, "needs 'order_id'"),
        ({"order_id": ["1", "2"]}, "string or a number"),
        ({"order_id": True}, "string or a number"),
        ({"order_id": "1", "expand": "x\r\nSet-Cookie: a=b"}, "control character"),
    ],
)
def test_undeclared_or_malformed_arguments_are_refused(
    shop: Api, arguments: dict[str, Any], reason: str
) -> None:
    with pytest.raises(Refused, match=reason):
        prepare(shop, endpoint(shop, "get_order"), arguments)


def test_a_body_carries_declared_fields_only(shop: Api) -> None:
    with pytest.raises(Refused, match="declares no parameter 'amount'"):
        prepare(shop, endpoint(shop, "refund"), {"order_id": "1", "method": "x", "amount": 1e6})


def test_a_bad_base_url_override_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = load_catalog(
        write(tmp_path, CATALOG.replace("    auth:", "    base_url_env: SHOP_URL\n    auth:"))
    )
    assert catalog is not None
    api = catalog.apis["shop"]
    monkeypatch.setenv("SHOP_URL", "file:///etc/passwd")
    with pytest.raises(Refused, match="SHOP_URL"):
        prepare(api, endpoint(api, "get_order"), {"order_id": "1"})
    monkeypatch.setenv("SHOP_URL", "http://127.0.0.1:9999/base/")
    req = prepare(api, endpoint(api, "get_order"), {"order_id": "1"})
    assert req.url == "http://127.0.0.1:9999/base/orders/1"


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "message"),
    [
        (
            "        ownership: order_id\n",
            "        ownership: order_id\n        repeat: true\n        changes: true\n",
            21,
            "apis[0].endpoints[1].repeat",
            "cannot also be changes",
        ),
        (
            "/orders/{order_id}/refund",
            "/orders/{id}/refund",
            15,
            "apis[0].endpoints[1].path",
            "{id} has no params entry",
        ),
        (
            "env: SHOP_KEY}",
            "env: SHOP_KEY, demo_default: abc}",
            4,
            "apis[0].auth.demo_default",
            "only the demo API",
        ),
        ("method: POST", "method: TRACE", 14, "apis[0].endpoints[1].method", "is not one of"),
        (
            "description: refund\n",
            "description: refund\n        descripton: typo\n",
            17,
            "apis[0].endpoints[1].descripton",
            "was unexpected",
        ),
        (
            "https://api.shop.example:8443/v1",
            "https://user@api.shop.example/v1",
            3,
            "apis[0].base_url",
            "scheme://host",
        ),
    ],
)
def test_catalog_errors_name_file_line_and_field(
    tmp_path: Path, old: str, new: str, line: int, field: str, message: str
) -> None:
    text = CATALOG.replace(old, new)
    assert text != CATALOG
    with pytest.raises(PackErrors) as caught:
        load_catalog(write(tmp_path, text))
    errors = caught.value.errors
    hits = [e for e in errors if e.field == field and message in e.message]
    assert hits, [str(e) for e in errors]
    assert hits[0].file.endswith("/apis.yaml") and hits[0].line == line


def test_no_catalog_file_means_no_catalog(tmp_path: Path) -> None:
    assert load_catalog(tmp_path) is None
