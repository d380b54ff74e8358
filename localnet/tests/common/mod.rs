//! A localnet served in-process on a free loopback port, and a tiny JSON-RPC client for it.
#![allow(dead_code)]
use std::path::PathBuf;

use base64::Engine;
use precompact_localnet::{serve, serve_pubsub, Chain, Options};
use serde_json::{json, Value};
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

pub struct Localnet {
    pub url: String,
    /// The PubSub endpoint.
    pub ws_url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Localnet {
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// Starts a chain (optionally persisted to `state`) and serves it until dropped.
    pub fn start_with(state: Option<PathBuf>) -> Self {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let chain = Chain::start(Options {
                    faucet_lamports: 1_000_000_000_000,
                    state_file: state,
                })
                .await
                .expect("chain starts");
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let pubsub = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx
                    .send((
                        format!("http://{}", listener.local_addr().unwrap()),
                        format!("ws://{}", pubsub.local_addr().unwrap()),
                    ))
                    .unwrap();
                tokio::spawn(serve_pubsub(chain.clone(), pubsub));
                serve(chain, listener, async {
                    stopped.await.ok();
                })
                .await
                .unwrap();
            });
        });
        let (url, ws_url) = ready_rx.recv().expect("localnet reports its addresses");
        Self {
            url,
            ws_url,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The full JSON-RPC response to `method(params)`.
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
        )
    }

    pub fn post(&self, body: &str) -> Value {
        ureq::post(&self.url)
            .set("Content-Type", "application/json")
            .send_string(body)
            .expect("HTTP request succeeds")
            .into_json()
            .expect("response is JSON")
    }

    /// The `result` of a call that must succeed.
    pub fn ok(&self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// The `error` of a call that must fail.
    pub fn err(&self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(
            response.get("result").is_none(),
            "{method} unexpectedly succeeded: {response}"
        );
        response["error"].clone()
    }

    pub fn blockhash(&self) -> Hash {
        self.ok("getLatestBlockhash", json!([]))["value"]["blockhash"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Airdrops `lamports` to `to`; returns once the airdrop is confirmed.
    pub fn airdrop(&self, to: &Keypair, lamports: u64) {
        self.ok("requestAirdrop", json!([to.pubkey().to_string(), lamports]));
        self.confirmed_through(self.slot("processed"));
    }

    /// Sends `tx`; returns once whatever it committed is confirmed (at once when refused).
    pub fn send(&self, tx: &Transaction, config: Value) -> Value {
        let response = self.call(
            "sendTransaction",
            json!([encode64(tx), merge(json!({"encoding": "base64"}), config)]),
        );
        if response.get("result").is_some() {
            self.confirmed_through(self.slot("processed"));
        }
        response
    }

    /// Waits until `signature` has landed (its slot ended) and returns its status, as a client
    /// polls for it.
    pub fn landed(&self, signature: &Value) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let status = self.ok("getSignatureStatuses", json!([[signature]]))["value"][0].clone();
            if !status.is_null() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{signature} did not land within 5 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The slot `commitment` reads now.
    pub fn slot(&self, commitment: &str) -> u64 {
        self.ok("getSlot", json!([{ "commitment": commitment }]))
            .as_u64()
            .unwrap()
    }

    /// Waits until `slot` is confirmed (its slot time at most), so what was committed in it or
    /// before reads at the confirmed level.
    pub fn confirmed_through(&self, slot: u64) {
        self.wait_for("confirmed", slot, std::time::Duration::from_secs(5));
    }

    /// Waits until `commitment`'s slot reaches `slot`, for at most `limit`.
    pub fn wait_for(&self, commitment: &str, slot: u64, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        while self.slot(commitment) < slot {
            assert!(
                std::time::Instant::now() < deadline,
                "slot {slot} not {commitment} within {limit:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for Localnet {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn encode64(tx: &Transaction) -> String {
    base64::engine::general_purpose::STANDARD.encode(bincode::serialize(tx).unwrap())
}

pub fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            base.insert(k.clone(), v.clone());
        }
    }
    base
}
