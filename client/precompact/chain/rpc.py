"""The few Solana JSON-RPC calls Layer 3 makes, over plain HTTP with every answer checked.

Not solana-py's client: on an answer it cannot parse (an error without the `data` its schema
expects, an HTML error page) solders raises a Rust panic that no `except Exception` catches, so a
misbehaving cluster or proxy would end in a traceback. Here every failure is an `RpcError` whose
message is one line naming the cluster (its shown form, `config/endpoint.shown`: a hosted
endpoint's URL holds the user's API key) and what it did.

Every call has a total deadline (the cluster's `timeout`): httpx's timeouts bound each read
alone, so an endpoint that sends one byte every few seconds would hold a call, and the worker,
`verify` and `flush` behind it, for ever. The exchange runs in a daemon thread that the call
stops waiting for at the deadline; the cluster is then taken as stalled, and every later call to
it fails at once with the same reason (its connection is left to that thread, never reused).
"""

from __future__ import annotations

import base64
import itertools
import threading

import httpx

from precompact.boundary import quoting
from precompact.config import endpoint
from precompact.errors import PrecompactError

COMMITMENT = "confirmed"
DEFAULT_TIMEOUT_SECONDS = 10
_ids = itertools.count(1)


class RpcError(PrecompactError):
    """The cluster refused a call or answered with something unusable."""


class Unreachable(RpcError):
    """The cluster did not answer (refused connection, timeout, HTTP error)."""


class Cluster:
    def __init__(self, url: str, timeout: float):
        # The whole URL is used only to connect; every message and verdict names `shown`.
        self._url = url
        self.shown = endpoint.shown(url)
        self.timeout = timeout
        # One connection for all the calls of a flush (a post is four calls).
        self._http = httpx.Client(timeout=timeout)
        # Why the cluster is taken as stalled: a call that got no whole answer in time.
        self._stalled: str | None = None

    def call(self, method: str, params: list):
        """The `result` of one JSON-RPC call, within `timeout` seconds in all."""
        request = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        if self._stalled is not None:
            raise Unreachable(self._stalled)
        outcome: list = []
        exchange = threading.Thread(target=self._post, args=(request, outcome), daemon=True)
        exchange.start()
        exchange.join(self.timeout)
        # httpx's own read timeout and this deadline are the same length, so either may end a
        # silent exchange first: both are the one stall, said the one way.
        if not outcome or isinstance(outcome[0], httpx.TimeoutException):
            self._stalled = f"cluster {self.shown} unreachable (no whole answer to {method} within {self.timeout:g} s)"
            raise Unreachable(self._stalled)
        [answered] = outcome
        try:
            if isinstance(answered, BaseException):
                raise answered
            response = answered
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            said = self._scrubbed(str(e))  # httpx's words: the host, the URL it was given
            raise Unreachable(
                f"cluster {self.shown} unreachable ({quoting.inline(said)})",
                unquoted=f"cluster {self.shown} unreachable ({said})",
            ) from None
        if response.status_code != 200:
            raise Unreachable(f"cluster {self.shown} unreachable (HTTP {response.status_code} to {method})")
        try:
            answer = response.json()
        except ValueError:
            raise self._malformed(method, "not JSON") from None
        if not isinstance(answer, dict):
            raise self._malformed(method, "not a JSON object")
        error = answer.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            said = self._scrubbed(str(message or error))  # the endpoint's words
            raise RpcError(
                f"cluster {self.shown} refused {_call_name(method)}: {quoting.inline(said)}",
                unquoted=f"cluster {self.shown} refused {_call_name(method)}: {said}",
            )
        if "result" not in answer:
            raise self._malformed(method, "neither result nor error")
        return answer["result"]

    def _post(self, request: dict, outcome: list) -> None:
        """The response to `request`, read whole, or what it raised, put in `outcome`."""
        try:
            outcome.append(self._http.post(self._url, json=request))
        except Exception as e:  # noqa: BLE001 -- handed to the caller's thread, which sorts it
            outcome.append(e)

    def account(self, address: str) -> tuple[str, bytes] | None:
        """(owner, data) of the account at `address`, None when it does not exist."""
        value = self._value("getAccountInfo", [address, {"encoding": "base64", "commitment": COMMITMENT}])
        if value is None:
            return None
        try:
            encoded, encoding = value["data"]
            if encoding != "base64":
                raise ValueError(f"data encoded as {encoding}")
            return str(value["owner"]), base64.b64decode(encoded, validate=True)
        except (KeyError, TypeError, ValueError) as e:
            raise self._malformed("getAccountInfo", "unusable account", reason=str(e)) from None

    def latest_blockhash(self) -> str:
        value = self._value("getLatestBlockhash", [{"commitment": COMMITMENT}])
        return self._string(value, "blockhash", "getLatestBlockhash")

    def send_transaction(self, transaction: bytes) -> str:
        """Sends a signed transaction; returns its signature."""
        result = self.call(
            "sendTransaction",
            [base64.b64encode(transaction).decode(), {"encoding": "base64", "preflightCommitment": COMMITMENT}],
        )
        if not isinstance(result, str):
            raise self._malformed("sendTransaction", "no signature")
        return result

    def request_airdrop(self, address: str, lamports: int) -> str:
        """Asks the cluster's faucet (local and test clusters have one) for lamports; returns the
        transaction's signature."""
        result = self.call("requestAirdrop", [address, lamports, {"commitment": COMMITMENT}])
        if not isinstance(result, str):
            raise self._malformed("requestAirdrop", "no signature")
        return result

    def balance(self, address: str) -> int:
        """The lamports the account at `address` holds (0 when it does not exist)."""
        value = self._value("getBalance", [address, {"commitment": COMMITMENT}])
        if type(value) is not int or value < 0:
            raise self._malformed("getBalance", "not a number of lamports")
        return value

    def signature_status(self, signature: str) -> dict | None:
        """The status of one signature ({slot, err, confirmationStatus}), None while unknown."""
        value = self._value("getSignatureStatuses", [[signature]])
        if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], (dict, type(None))):
            raise self._malformed("getSignatureStatuses", "not one status")
        return value[0]

    def _value(self, method: str, params: list):
        result = self.call(method, params)
        if not isinstance(result, dict) or "value" not in result:
            raise self._malformed(method, "no value")
        return result["value"]

    def _string(self, value, key: str, method: str) -> str:
        if not isinstance(value, dict) or not isinstance(value.get(key), str):
            raise self._malformed(method, f"no {key}")
        return value[key]

    def _scrubbed(self, said: str) -> str:
        """What the HTTP library or the endpoint said, without the URL's hidden parts: either may
        repeat the URL it was given."""
        return endpoint.scrubbed(said, self._url)

    def _malformed(self, method: str, what: str, reason: str | None = None) -> RpcError:
        """`what` was wrong with the answer, and `reason` what a library said of it: quoted in the
        message, as said in `unquoted` (an index line's reason, quoted whole by its printers)."""

        def said(detail: str) -> str:
            return f"cluster {self.shown} answered {method} with something that is not a Solana JSON-RPC answer ({detail}); check chain.cluster"

        if reason is None:
            return RpcError(said(what))
        return RpcError(said(f"{what} ({quoting.inline(reason)})"), unquoted=said(f"{what} ({reason})"))


def _call_name(method: str) -> str:
    return "the transaction" if method == "sendTransaction" else method
