//! The `precompact-localnet` binary as a user runs it: the ready line, signals, the state file.
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

struct Running {
    child: Child,
    url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(extra: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_precompact-localnet"))
        .args(["--port", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("ready ")
        .unwrap_or_else(|| panic!("first line is `ready <url>`, got {line:?}"))
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "loopback by default: {url}"
    );
    Running { child, url }
}

fn call(url: &str, method: &str, params: Value) -> Value {
    ureq::post(url)
        .send_json(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .unwrap()
        .into_json::<Value>()
        .unwrap()["result"]
        .clone()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args(["-s", name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("localnet did not exit within 5 s of the signal");
}

/// Waits until `signature` has landed (its slot ended), as a client polls for it.
fn landed(url: &str, signature: &Value) {
    for _ in 0..100 {
        if !call(url, "getSignatureStatuses", json!([[signature]]))["value"][0].is_null() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{signature} did not land within 5 s");
}

fn balance(url: &str, who: &str) -> u64 {
    call(url, "getBalance", json!([who, {"commitment": "processed"}]))["value"]
        .as_u64()
        .unwrap()
}

#[test]
fn serves_after_ready_and_exits_cleanly_on_sigint_and_sigterm() {
    for sig in ["INT", "TERM"] {
        let mut net = start(&[]);
        assert_eq!(call(&net.url, "getHealth", json!([])), "ok");
        signal(&net.child, sig);
        assert!(wait_exit(&mut net.child).success(), "exit 0 on SIG{sig}");
    }
}

#[test]
fn state_file_carries_accounts_across_a_restart() {
    let dir = std::env::temp_dir().join(format!("precompact-localnet-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("chain.json");
    let state_arg = state.to_str().unwrap();
    let who = "GmaDrppBC7P5ARKV8g3djiwP89vz1jLK23V2GBjuAEGB";

    let mut first = start(&["--state", state_arg]);
    landed(
        &first.url,
        &call(&first.url, "requestAirdrop", json!([who, 42_000_000])),
    );
    signal(&first.child, "TERM");
    assert!(wait_exit(&mut first.child).success());
    assert!(
        !dir.read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")),
        "no temp file left behind"
    );

    let second = start(&["--state", state_arg]);
    assert_eq!(balance(&second.url, who), 42_000_000);
    drop(second);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn faucet_lamports_bound_airdrops() {
    let net = start(&["--faucet-lamports", "2000000000"]);
    let who = "GmaDrppBC7P5ARKV8g3djiwP89vz1jLK23V2GBjuAEGB";
    landed(
        &net.url,
        &call(&net.url, "requestAirdrop", json!([who, 1_000_000_000])),
    );
    assert_eq!(balance(&net.url, who), 1_000_000_000);
    // Not the same request again: within a slot that is the same transfer, answered with its
    // signature.
    assert_eq!(
        call(&net.url, "requestAirdrop", json!([who, 1_000_000_001])),
        Value::Null,
        "the faucet cannot cover it"
    );
    assert_eq!(balance(&net.url, who), 1_000_000_000);
}

fn run_to_exit(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_precompact-localnet"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn refuses_a_busy_port_and_a_corrupt_state_file_with_one_line() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let (ok, stderr) = run_to_exit(&["--port", &port]);
    assert!(!ok);
    assert!(stderr.lines().any(|l| l.starts_with("precompact-localnet: cannot listen on") && l.contains("--port")), "{stderr}");

    let corrupt = std::env::temp_dir().join(format!(
        "precompact-localnet-corrupt-{}.json",
        std::process::id()
    ));
    std::fs::write(&corrupt, b"{not json").unwrap();
    let (ok, stderr) = run_to_exit(&["--port", "0", "--state", corrupt.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        stderr.contains("is not valid") && stderr.contains("move it aside"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&corrupt).unwrap(),
        b"{not json",
        "a corrupt state file is never overwritten"
    );
    std::fs::remove_file(&corrupt).unwrap();
    assert!(!Path::new(&corrupt).exists());
}

/// A port whose successor is free too.
fn free_port_pair() -> u16 {
    loop {
        let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().unwrap().port();
        if port < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

#[test]
fn pubsub_listens_on_the_port_after_rpc_and_refuses_a_busy_one() {
    let port = free_port_pair();
    let mut child = Command::new(env!("CARGO_BIN_EXE_precompact-localnet"))
        .args(["--port", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines.next().unwrap().unwrap();
    let pubsub = lines.next().unwrap().unwrap();
    assert_eq!(ready, format!("ready http://127.0.0.1:{port}"));
    assert_eq!(pubsub, format!("pubsub ws://127.0.0.1:{}", port + 1));
    std::net::TcpStream::connect(("127.0.0.1", port + 1)).expect("PubSub accepts");
    child.kill().unwrap();
    child.wait().unwrap();

    let port = free_port_pair();
    let _busy = std::net::TcpListener::bind(("127.0.0.1", port + 1)).unwrap();
    let (ok, stderr) = run_to_exit(&["--port", &port.to_string()]);
    assert!(!ok);
    assert!(
        stderr.lines().any(
            |l| l.starts_with("precompact-localnet: cannot listen for PubSub")
                && l.contains("--port")
        ),
        "{stderr}"
    );
}

#[test]
fn the_programs_own_log_lines_on_stdout_never_stall_a_transaction() {
    use solana_keypair::Keypair;
    use solana_signer::Signer;

    let mut child = Command::new(env!("CARGO_BIN_EXE_precompact-localnet"))
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next().unwrap().unwrap().replace("ready ", "");
    // Keep reading: the program's `msg!` lines follow.
    let drained = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());

    let authority = Keypair::new();
    let airdrop = call(
        &url,
        "requestAirdrop",
        json!([authority.pubkey().to_string(), 1_000_000_000]),
    );
    assert!(airdrop.is_string());
    landed(&url, &airdrop);
    let blockhash = call(&url, "getLatestBlockhash", json!([]))["value"]["blockhash"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let id = precompact_harness::instance_id("binary");
    let init = solana_transaction::Transaction::new_signed_with_payer(
        &[precompact_harness::initialize_instruction(
            &authority.pubkey(),
            &authority.pubkey(),
            id,
        )],
        Some(&authority.pubkey()),
        &[&authority],
        blockhash,
    );
    let wire = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        bincode::serialize(&init).unwrap(),
    );
    let started = std::time::Instant::now();
    let sent = call(
        &url,
        "sendTransaction",
        json!([wire, {"encoding": "base64"}]),
    );
    assert!(sent.is_string(), "initialize lands");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let printed = drained.join().unwrap();
    assert!(
        printed
            .iter()
            .any(|l| l.contains("Instruction: Initialize")),
        "{printed:?}"
    );
}
