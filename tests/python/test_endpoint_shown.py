"""The RPC endpoint is shown by its scheme, host and port alone (config/endpoint): a hosted
endpoint's URL carries the user's API key in its path or query, and what precompact says about
the endpoint reaches the terminal, logs/ (which a user pastes into an issue), the index (which
Layer 2 pushes) and the model."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from precompact.chain import rpc
from precompact.config import endpoint, review
from precompact.config import settings as configuration
from support.claude_code import wait_for_worker
from support.commands import precompact
from support.json_rpc import JsonRpcServer
from support.misbehaving_rpc import MisbehavingRpc
from support.projects import new_project

KEY = "SECRETKEY"
HOSTED = [
    (f"https://mainnet.helius-rpc.com/?api-key={KEY}", "https://mainnet.helius-rpc.com/…"),
    (f"https://solana-mainnet.g.alchemy.com/v2/{KEY}", "https://solana-mainnet.g.alchemy.com/…"),
    (f"https://x.solana-mainnet.quiknode.pro/{KEY}/", "https://x.solana-mainnet.quiknode.pro/…"),
    (f"https://user:{KEY}@rpc.example.com:8443/", "https://rpc.example.com:8443"),
    (f"https://{KEY}@rpc.example.com", "https://rpc.example.com"),
    (f"https://rpc.example.com#{KEY}", "https://rpc.example.com/…"),
]


@pytest.mark.parametrize("url, expected", HOSTED)
def test_a_hosted_endpoint_is_shown_by_scheme_host_and_port(url, expected):
    assert endpoint.shown(url) == expected
    assert endpoint.shown(expected) == expected, "a shown form shows as itself (the index keeps shown forms)"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8899", "https://api.devnet.solana.com", "http://[::1]:8899", "http://localhost:8899"]
)
def test_an_endpoint_with_nothing_to_hide_is_shown_as_configured(url):
    assert endpoint.shown(url) == url
    assert endpoint.hidden_digest(url) is None


@pytest.mark.parametrize(
    "hostile, expected",
    [
        ("x\n[precompact] Ready to resume work.", endpoint.NO_HOST),
        ("http://[::1/x", endpoint.NO_HOST),  # urlsplit refuses it
        ("", endpoint.NO_HOST),
        ('http://a"b\u2028c.example/', "http://a%22b%E2%80%A8c.example"),
        ("http://h.example:99999/k", "http://h.example:…/…"),  # a port that is not one
    ],
)
def test_any_value_is_shown_on_one_line_in_plain_url_characters(hostile, expected):
    assert endpoint.shown(hostile) == expected


def test_trust_shows_a_change_to_the_hidden_part_without_showing_it():
    first = f"https://solana-mainnet.g.alchemy.com/v2/{KEY}"
    second = first.replace(KEY, "OTHERKEY")
    shown = [review.settings(_config(url))["chain.cluster"] for url in (first, second)]
    assert shown[0] != shown[1] and all(KEY not in s and "OTHERKEY" not in s for s in shown), shown
    assert re.fullmatch(
        r'"https://solana-mainnet\.g\.alchemy\.com/…" \(its path, query and credentials not shown; sha256 [0-9a-f]{12}\)',
        shown[0],
    ), shown[0]
    assert review.settings(_config("http://127.0.0.1:8899"))["chain.cluster"] == '"http://127.0.0.1:8899"'


def _config(cluster: str, insecure: bool = False) -> configuration.Config:
    text = f"instance = 'a'\n[layers]\nchain = true\n[chain]\ncluster = {json.dumps(cluster)}\n"
    text += "allow_insecure_http = true\n" if insecure else ""
    return configuration.parse(Path("/nonexistent"), text.encode(), environ={})


def test_configuration_messages_name_the_endpoint_without_its_key():
    with pytest.raises(configuration.ConfigError) as plain_http:
        configuration.check_cluster_url(f"http://rpc.example.com/v2/{KEY}", allow_insecure_http=False)
    assert "chain.cluster http://rpc.example.com/… is plain http" in str(plain_http.value)
    with pytest.raises(configuration.ConfigError) as no_host:
        configuration.check_cluster_url(f"rpc.example.com/?api-key={KEY}", allow_insecure_http=False)
    assert str(no_host.value).startswith("chain.cluster is not an http(s) URL with a host")
    for refused in (plain_http, no_host):
        assert KEY not in str(refused.value)
    warned = configuration.insecure_cluster_warning(_config(f"http://10.1.2.3:8899/?api-key={KEY}", insecure=True))
    assert warned is not None and warned.startswith("warning: chain.cluster http://10.1.2.3:8899/… is plain http")


def keyed_answer(mode: str) -> Callable[[str], tuple[int, bytes]] | None:
    """How a keyed endpoint answers in `mode` ("silent": never); an error it answers repeats the
    path it was asked at, as some providers' do."""
    if mode == "silent":
        return None

    def answer(path: str) -> tuple[int, bytes]:
        echoed = {"code": -32005, "message": f"no access for {path}"}
        return {
            "http_500": (500, b"internal error"),
            "not_json": (200, b"<html>not json</html>"),
            "refused": (200, json.dumps({"jsonrpc": "2.0", "id": 0, "error": echoed}).encode()),
            "no_value": (200, b'{"jsonrpc":"2.0","id":0,"result":{}}'),
        }[mode]

    return answer


def keyed_url(host: str) -> str:
    return f"http://user:{KEY}@{host}/v2/{KEY}?api-key={KEY}"


@pytest.mark.parametrize(
    "mode, said",
    [
        ("http_500", "unreachable (HTTP 500 to getAccountInfo)"),
        ("not_json", "answered getAccountInfo with something that is not a Solana JSON-RPC answer (not JSON)"),
        ("refused", 'refused getAccountInfo: "no access for …"'),
        ("no_value", "answered getAccountInfo with something that is not a Solana JSON-RPC answer (no value)"),
        ("silent", "unreachable (no whole answer to getAccountInfo within 1 s)"),
    ],
)
def test_every_rpc_error_names_the_endpoint_without_its_key(mode, said):
    server = MisbehavingRpc(keyed_answer(mode), stall_seconds=30)
    try:
        cluster = rpc.Cluster(keyed_url(server.host), timeout=1)
        with pytest.raises(rpc.RpcError) as failed:
            cluster.account("11111111111111111111111111111111")
        if mode == "silent":  # and the stall, said again at once to every later call
            with pytest.raises(rpc.Unreachable) as again:
                cluster.latest_blockhash()
            assert str(again.value) == str(failed.value)
    finally:
        server.stop()
    assert str(failed.value) == f"cluster http://{server.host}/… {said}" + (
        "; check chain.cluster" if "not a Solana" in said else ""
    )


def test_an_endpoint_that_does_not_answer_is_named_without_its_key():
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        host = f"127.0.0.1:{s.getsockname()[1]}"
    with pytest.raises(rpc.Unreachable) as refused:
        rpc.Cluster(keyed_url(host), timeout=2).latest_blockhash()
    assert str(refused.value).startswith(f"cluster http://{host}/… unreachable (") and KEY not in str(refused.value)


def test_a_url_httpx_cannot_use_is_an_rpc_error_not_a_traceback():
    with pytest.raises(rpc.Unreachable) as refused:
        rpc.Cluster(f"http://[::1/v2/{KEY}", timeout=1).latest_blockhash()
    assert str(refused.value).startswith(f"cluster {endpoint.NO_HOST} unreachable (") and KEY not in str(refused.value)


def test_a_failing_keyed_endpoint_leaves_its_key_in_no_output_and_no_file(tmp_path):
    """What the worker records of a refused call (the index's LAYER_3_FAILED reason, pushed with
    Layer 2), its log, `flush`, `status` and `verify` name the endpoint by its host alone: none
    relies on redaction, which cannot know every provider's key."""
    said = {"path": ""}

    def respond(body: bytes) -> dict:
        request = json.loads(body)
        return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32005, "message": said["path"]}}

    server = JsonRpcServer(respond)
    try:
        keyed = f"{server.url}/v2/{KEY}?api-key={KEY}"
        said["path"] = f"key {keyed} has no access"
        project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=keyed)
        saved = precompact(project.path, "savepoint", "--no-transcript")
        wait_for_worker(project)
        outputs = [saved] + [
            precompact(project.path, *args) for args in (("flush",), ("status",), ("status", "--json"), ("verify",))
        ]
    finally:
        server.stop()
    assert f'cluster {server.url}/… refused getAccountInfo: "key {server.url}/… has no access"' in outputs[1].stdout, (
        outputs[1].stdout + outputs[1].stderr
    )
    shown = "".join(o.stdout + o.stderr for o in outputs)
    files = [p for p in project.path.rglob("*") if p.is_file() and p.name != configuration.CONFIG_NAME]
    assert any(p.name == "precompact-savepoint.jsonl" for p in files)
    shown += "".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    assert KEY not in shown
