//! PubSub over WebSocket: subscribing answers with an id, the chain's commits and slots arrive
//! as notifications in Agave's shapes, unsubscribing ends them, and bad calls are refused.
mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;
use tungstenite::{Message, WebSocket};

const SOL: u64 = 1_000_000_000;
const SYSTEM: &str = "11111111111111111111111111111111";
const ZERO_SIGNATURE: &str = "1111111111111111111111111111111111111111111111111111111111111111";

struct Client {
    socket: WebSocket<TcpStream>,
    next_id: u64,
    /// Messages read while looking for another one, oldest first.
    unread: Vec<Value>,
}

impl Client {
    fn connect(net: &Localnet) -> Self {
        let address = net.ws_url.trim_start_matches("ws://");
        let stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let (socket, _) = tungstenite::client::client(net.ws_url.as_str(), stream).unwrap();
        Self {
            socket,
            next_id: 0,
            unread: Vec::new(),
        }
    }

    fn send(&mut self, message: Value) {
        self.socket
            .send(Message::text(message.to_string()))
            .unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next(|message| message["id"] == id)
    }

    /// The subscription id a `…Subscribe` call is answered with.
    fn subscribe(&mut self, method: &str, params: Value) -> u64 {
        let reply = self.call(method, params);
        reply["result"]
            .as_u64()
            .unwrap_or_else(|| panic!("{method}: {reply}"))
    }

    /// The oldest message `wanted` accepts, keeping the others for later calls (the order of
    /// notifications of different subscriptions is not specified); panics after 30 s (a
    /// finalized notification takes about 13).
    fn next(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.unread.iter().position(&wanted) {
            return self.unread.remove(at);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    let message: Value = serde_json::from_str(text.as_str()).unwrap();
                    if wanted(&message) {
                        return message;
                    }
                    self.unread.push(message);
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("websocket: {e}"),
            }
        }
        panic!("no matching message within 30 s")
    }

    /// The next notification of subscription `id`, its `result`.
    fn notified(&mut self, id: u64) -> Value {
        let message = self.next(|message| message["params"]["subscription"] == id);
        message["params"]["result"].clone()
    }
}

#[test]
fn commits_arrive_as_account_logs_signature_and_program_notifications() {
    let net = Localnet::start();
    let mut client = Client::connect(&net);
    let recipient = Keypair::new();

    // A batch is answered as one array, in order.
    client.send(json!([
        {"jsonrpc": "2.0", "id": 1, "method": "accountSubscribe",
         "params": [recipient.pubkey().to_string(), {"encoding": "base64", "commitment": "processed"}]},
        {"jsonrpc": "2.0", "id": 2, "method": "logsSubscribe",
         "params": [{"mentions": [SYSTEM]}, {"commitment": "processed"}]},
    ]));
    let replies = client.next(Value::is_array);
    let (account_id, logs_id) = (
        replies[0]["result"].as_u64().unwrap(),
        replies[1]["result"].as_u64().unwrap(),
    );
    assert_eq!(replies[1]["id"], 2);

    let signature = net.ok(
        "requestAirdrop",
        json!([recipient.pubkey().to_string(), SOL]),
    );
    let account = client.notified(account_id);
    assert_eq!(account["value"]["lamports"], SOL);
    assert_eq!(account["value"]["data"], json!(["", "base64"]));
    assert!(account["context"]["slot"].is_u64());
    let logs = client.notified(logs_id);
    assert_eq!(logs["value"]["signature"], signature);
    assert_eq!(logs["value"]["err"], Value::Null);
    assert_eq!(
        logs["value"]["logs"][0],
        format!("Program {SYSTEM} invoke [1]")
    );

    // A signature already committed is notified at once, and the subscription ends with it.
    let signature_id = client.subscribe(
        "signatureSubscribe",
        json!([signature, {"commitment": "processed"}]),
    );
    let status = client.notified(signature_id);
    assert_eq!(status["value"], json!({"err": null}));
    let ended = client.call("signatureUnsubscribe", json!([signature_id]));
    assert_eq!(ended["error"]["code"], -32602);

    let program = Pubkey::new_unique();
    let program_id = client.subscribe(
        "programSubscribe",
        json!([program.to_string(), {"encoding": "base64", "commitment": "processed"}]),
    );
    let assign = Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::assign(
            &recipient.pubkey(),
            &program,
        )],
        Some(&recipient.pubkey()),
        &[&recipient],
        net.blockhash(),
    );
    assert!(net.send(&assign, json!({}))["result"].is_string());
    let owned = client.notified(program_id);
    assert_eq!(owned["value"]["pubkey"], recipient.pubkey().to_string());
    assert_eq!(owned["value"]["account"]["owner"], program.to_string());

    assert_eq!(
        client.call("accountUnsubscribe", json!([account_id]))["result"],
        true
    );
    assert_eq!(
        client.call("accountUnsubscribe", json!([account_id]))["error"]["code"],
        -32602
    );
    assert_eq!(
        client.call("accountUnsubscribe", json!([logs_id]))["error"]["code"],
        -32602,
        "an id of another kind"
    );
}

#[test]
fn each_level_is_notified_in_turn_with_the_state_its_slot_left() {
    let net = Localnet::start();
    let mut client = Client::connect(&net);
    let recipient = Keypair::new();
    let address = recipient.pubkey().to_string();
    let account_ids: Vec<u64> = ["processed", "confirmed", "finalized"]
        .iter()
        .map(|level| {
            client.subscribe(
                "accountSubscribe",
                json!([address, {"encoding": "base64", "commitment": level}]),
            )
        })
        .collect();
    let [at_processed, at_confirmed, at_finalized] = account_ids[..] else {
        unreachable!()
    };
    let logs_id = client.subscribe(
        "logsSubscribe",
        json!([{"mentions": [address]}, {"commitment": "confirmed"}]),
    );

    let committed = Instant::now();
    let first = net.ok("requestAirdrop", json!([address, SOL]));
    let signature_ids: Vec<u64> = ["processed", "confirmed", "finalized"]
        .iter()
        .map(|level| client.subscribe("signatureSubscribe", json!([first, {"commitment": level}])))
        .collect();

    let processed = client.notified(at_processed);
    assert_eq!(processed["value"]["lamports"], SOL);
    let tx_slot = processed["context"]["slot"].as_u64().unwrap();
    assert_eq!(
        client.notified(signature_ids[0]),
        json!({"context": {"slot": tx_slot}, "value": {"err": null}})
    );

    let confirmed = client.notified(at_confirmed);
    assert_eq!(confirmed["context"]["slot"], tx_slot);
    assert_eq!(confirmed["value"]["lamports"], SOL);
    assert!(net.slot("confirmed") >= tx_slot);
    assert_eq!(client.notified(logs_id)["value"]["signature"], first);
    assert_eq!(
        client.notified(signature_ids[1])["value"],
        json!({"err": null})
    );

    // A second airdrop in a later slot: the finalized subscription still hears the first
    // balance first, as the slot that rooted left it, not the bank's newest.
    net.airdrop(&recipient, SOL);
    let finalized = client.notified(at_finalized);
    assert_eq!(finalized["context"]["slot"], tx_slot);
    assert_eq!(finalized["value"]["lamports"], SOL);
    assert!(
        committed.elapsed() >= Duration::from_secs(11),
        "31 slots of 400 ms: {:?}",
        committed.elapsed()
    );
    assert!(net.slot("finalized") >= tx_slot);
    assert_eq!(
        client.notified(signature_ids[2])["value"],
        json!({"err": null})
    );
    let second = client.notified(at_finalized);
    assert!(second["context"]["slot"].as_u64().unwrap() > tx_slot);
    assert_eq!(second["value"]["lamports"], 2 * SOL);
}

#[test]
fn slots_roots_blocks_and_slot_updates_follow_the_clock() {
    let net = Localnet::start();
    let mut client = Client::connect(&net);
    let slot_id = client.subscribe("slotSubscribe", json!([]));
    let root_id = client.subscribe("rootSubscribe", json!([]));
    let updates_id = client.subscribe("slotsUpdatesSubscribe", json!([]));
    let block_id = client.subscribe(
        "blockSubscribe",
        json!(["all", {"transactionDetails": "signatures", "showRewards": false}]),
    );

    let slot = client.notified(slot_id);
    let current = slot["slot"].as_u64().unwrap();
    assert_eq!(
        slot,
        json!({"parent": current - 1, "root": (current - 1).saturating_sub(31), "slot": current})
    );
    let update = client.notified(updates_id);
    assert_eq!(update["type"], "createdBank");
    assert!(update["timestamp"].is_u64());
    // The first slot rooted is the first the validator voted on, 31 votes after it.
    let root = client.notified(root_id).as_u64().unwrap();
    assert!(root >= 1);
    assert!(net.slot("confirmed") >= root + 31);
    // Finalized by default: the block arrives as it is rooted.
    let block = client.notified(block_id);
    let block_slot = block["value"]["slot"].as_u64().unwrap();
    assert_eq!(block["context"]["slot"], block_slot);
    assert!(block_slot <= net.slot("finalized"));
    assert_eq!(block["value"]["err"], Value::Null);
    assert_eq!(
        block["value"]["block"],
        net.ok(
            "getBlock",
            json!([block_slot, {"transactionDetails": "signatures", "rewards": false}])
        )
    );
    for (method, id) in [
        ("slotUnsubscribe", slot_id),
        ("rootUnsubscribe", root_id),
        ("slotsUpdatesUnsubscribe", updates_id),
        ("blockUnsubscribe", block_id),
    ] {
        assert_eq!(client.call(method, json!([id]))["result"], true, "{method}");
    }
}

#[test]
fn bad_subscriptions_are_refused_naming_the_problem() {
    let net = Localnet::start();
    let mut client = Client::connect(&net);
    let refused = [
        ("voteSubscribe", json!([]), -32601),
        ("getSlot", json!([]), -32601),
        ("accountSubscribe", json!(["not base58"]), -32602),
        ("accountSubscribe", json!([]), -32602),
        (
            "logsSubscribe",
            json!([{"mentions": [SYSTEM, SYSTEM]}]),
            -32602,
        ),
        ("logsSubscribe", json!(["everything"]), -32602),
        (
            "programSubscribe",
            json!([SYSTEM, {"filters": [{"memcmp": {"offset": 0, "bytes": "%%"}}]}]),
            -32602,
        ),
        ("slotUnsubscribe", json!([12345]), -32602),
        ("slotUnsubscribe", json!(["one"]), -32602),
        (
            "blockSubscribe",
            json!(["all", {"commitment": "processed"}]),
            -32602,
        ),
        (
            "signatureSubscribe",
            json!([ZERO_SIGNATURE, {"commitment": "max"}]),
            -32602,
        ),
    ];
    for (method, params, code) in refused {
        let reply = client.call(method, params.clone());
        assert_eq!(reply["error"]["code"], code, "{method} {params}: {reply}");
    }
    client.send(json!("{not json"));
    let reply = client.next(|message| message.get("error").is_some());
    assert_eq!(reply["error"]["code"], -32600);
}
