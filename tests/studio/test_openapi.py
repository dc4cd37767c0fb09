"""``schemas/studio-openapi.json`` and ``systemd/studio.example.toml`` cannot drift from the
gateway: every route the server serves is in the document, every refusal code the code gives
is in its enum, and the example config loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from controller.studio.config import DEFAULT_MAX_BATCH, load_studio_config
from controller.studio.server import MAX_WAIT_SECONDS
from controller.studio.wire import BYTES_PER_WAGER, MAX_KEY_CHARS, max_body_bytes

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "schemas" / "studio-openapi.json").read_text())
STUDIO = ROOT / "controller" / "studio"


def test_every_route_is_documented() -> None:
    """The routes ``server.py`` matches are exactly the document's paths, every one under the
    version's prefix (``/v1``)."""
    source = (STUDIO / "server.py").read_text()
    served = set(re.findall(r'url\.path == "(/v1/[a-z/]+)"', source)) | {
        f"/v1/rounds/{{round}}/{what}"
        for what in re.search(r"\(wagers\|close\|events\)", source).group(0)[1:-1].split("|")}
    assert {"/v1/status", "/v1/table", "/v1/rounds"} <= served
    assert served == set(DOC["paths"])
    assert all(path.startswith("/v1/") for path in DOC["paths"])


def test_every_refusal_code_is_in_the_enum() -> None:
    """Each code the gateway can answer is one a generated client knows."""
    codes = set()
    for path in STUDIO.glob("*.py"):
        codes |= set(re.findall(r'StudioRefusal\(\d+, "([a-z_]+)"', path.read_text()))
        codes |= set(re.findall(r'_refuse\(client, \d+, "([a-z_]+)"', path.read_text()))
    codes |= {"refused", "unavailable", "internal"}
    codes |= set(re.findall(r'\d+: "([a-z_]+)"', (STUDIO / "server.py").read_text()))
    assert codes <= set(DOC["components"]["schemas"]["Refusal"]["properties"]["code"]["enum"])
    assert "key_reused" in codes and "batch_too_large" in codes


def _statuses() -> set[int]:
    """Every HTTP status the gateway can answer: its refusals, the HTTP layer's own, a
    refused verb (409), a fault (500), the table unreachable or no slot (503)."""
    statuses = {200, 409, 500, 503}
    for path in STUDIO.glob("*.py"):
        text = path.read_text()
        statuses |= {int(n) for n in re.findall(r'StudioRefusal\((\d+), "', text)}
        statuses |= {int(n) for n in re.findall(r'_refuse\(client, (\d+), "', text)}
    statuses |= {int(n) for n in re.findall(r'(\d+): "[a-z_]+"',
                                              (STUDIO / "server.py").read_text())}
    return statuses


def test_every_code_has_a_retry_rule_in_the_document_and_the_page() -> None:
    """Issue 33: a documented retry rule for every status the API can give, 500 included.
    Each refusal code has its rule (``x-retry``) in the OpenAPI document, and the page's
    retry table gives each the same rule; every status the code can answer is in that table,
    and every operation documents the statuses any request can get."""
    code = DOC["components"]["schemas"]["Refusal"]["properties"]["code"]
    rules = code["x-retry"]
    assert set(rules) == set(code["enum"])
    assert set(rules.values()) <= {"never", "same-key", "reread", "new-key"}
    assert rules["internal"] == rules["unavailable"] == "same-key"
    page = (ROOT / "docs" / "studio.md").read_text()
    table = page[page.index("## Retry rule"):]
    rows = re.findall(r"^\| (\d{3}) \| `([a-z_]+)`[^|]*\| \*\*([a-z-]+)\*\*", table, re.M)
    assert {(c, r) for _, c, r in rows} == set(rules.items()), "the page and the document agree"
    assert {int(s) for s, _, _ in rows} | {200} == _statuses()
    for item in DOC["paths"].values():
        for method in set(item) & {"get", "post"}:
            assert {"400", "403", "408", "414", "431", "500", "503"} <= set(
                item[method]["responses"]), method


def test_limits_in_the_document_are_the_enforced_ones() -> None:
    """The document's bounds are the code's: the batch's maxItems is the default
    ``studio.max_batch``, the body bound is ``max_batch x 512`` (one figure, stated in the
    document), the long poll's ``wait`` and the keys' pattern."""
    batch = DOC["components"]["schemas"]["Batch"]["properties"]
    assert batch["wagers"]["maxItems"] == DEFAULT_MAX_BATCH
    assert max_body_bytes(DEFAULT_MAX_BATCH) == DEFAULT_MAX_BATCH * BYTES_PER_WAGER == 256_000
    assert "256,000" in DOC["info"]["description"]
    assert "256,000" in DOC["components"]["responses"]["TooLarge"]["description"]
    assert batch["key"]["pattern"] == f"^[A-Za-z0-9._:-]{{1,{MAX_KEY_CHARS}}}$"
    wait = next(p for p in DOC["paths"]["/v1/rounds/{round}/events"]["parameters"]
                if p.get("name") == "wait")
    assert wait["schema"]["maximum"] == MAX_WAIT_SECONDS


def test_example_config_loads() -> None:
    config = load_studio_config(ROOT / "systemd" / "studio.example.toml")
    assert config.clients == frozenset({"gs-studio-1"}) and config.max_batch == 500
