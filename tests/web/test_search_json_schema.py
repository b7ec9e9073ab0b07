"""The JSON search API (?f=json) checked against a schema, field by field, for a normal query,
an empty index, bad parameters and a query with no results."""

from __future__ import annotations

from numbers import Real

import pytest

from tests.web.test_search_api import make_index, work  # noqa: F401 (fixture)

EXPLANATION_KEYS = {"doc_rank", "relevance", "proximity", "bonuses"}


def check(value, schema, where="$"):
    """A small JSON-schema subset: type, required properties, items, enum."""
    kind = schema["type"]
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
             "number": Real, "null": type(None)}
    if isinstance(kind, list):  # one of several types
        kind = next((k for k in kind if isinstance(value, types[k]) and
                     not (k in ("integer", "number") and isinstance(value, bool))), kind[0])
    assert isinstance(value, types[kind]), f"{where}: {value!r} is not {kind}"
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    if kind in ("integer", "number"):
        assert not isinstance(value, bool), f"{where}: boolean where a number belongs"
        if "minimum" in schema:
            assert value >= schema["minimum"], f"{where}: {value} < {schema['minimum']}"
    if kind == "object":
        for key in schema.get("required", ()):
            assert key in value, f"{where}: missing {key!r}"
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                check(value[key], sub, f"{where}.{key}")
    if kind == "array":
        for i, item in enumerate(value):
            check(item, schema["items"], f"{where}[{i}]")


RESULT = {
    "type": "object", "required": ["url", "title", "title_html", "snippet", "score"],
    "properties": {
        "url": {"type": "string"}, "title": {"type": "string"}, "title_html": {"type": "string"},
        "snippet": {"type": "string"}, "score": {"type": "number"},
        "explanation": {"type": "object"},
    },
}
RESPONSE = {
    "type": "object",
    "required": ["query", "rewritten", "results", "total", "time", "partial", "messages",
                 "offset", "num", "searched", "fallback"],
    "properties": {
        "query": {"type": "string"}, "rewritten": {"type": "string"},
        "results": {"type": "array", "items": RESULT},
        "total": {"type": "integer", "minimum": 0}, "time": {"type": "number", "minimum": 0},
        "partial": {"type": "boolean"},
        "messages": {"type": "array", "items": {"type": "string"}},
        "offset": {"type": "integer", "minimum": 0}, "num": {"type": "integer", "minimum": 1},
        # the query actually searched, and what a query with no result showed instead
        "searched": {"type": "string"},
        "fallback": {"type": ["null", "string"], "enum": [None, "partial", "corrected"]},
    },
}


def test_schema_of_a_normal_answer(client, work):  # noqa: F811
    make_index(work)
    data = client.get("/", {"q": "threading", "f": "json", "explain": "1"}).json()
    check(data, RESPONSE)
    assert data["results"]
    for result in data["results"]:
        explanation = result["explanation"]
        assert EXPLANATION_KEYS <= set(explanation), explanation.keys()


def test_schema_of_fallback_answers(client, work):  # noqa: F811
    make_index(work)
    partial = client.get("/", {"q": "threading zebra", "f": "json"}).json()
    check(partial, RESPONSE)
    assert partial["fallback"] == "partial" and partial["results"]
    corrected = client.get("/", {"q": "threadinng", "f": "json"}).json()
    check(corrected, RESPONSE)
    assert corrected["fallback"] == "corrected" and corrected["searched"] == "threading"


@pytest.mark.parametrize("params", [
    {"q": "nothingmatchesthis"}, {"q": ""}, {"q": "threading", "num": "abc"},
    {"q": "threading", "limit": "-5"}, {"q": '"unbalanced'}, {"q": "threading", "its": "1"},
])
def test_schema_holds_for_odd_requests(client, work, params):  # noqa: F811
    make_index(work)
    response = client.get("/", {**params, "f": "json"})
    assert response.status_code == 200
    check(response.json(), RESPONSE)
