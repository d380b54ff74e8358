use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use precompact_localnet::{serve, serve_pubsub, Chain, Options};
use tokio::signal::unix::{signal, SignalKind};

const LAMPORTS_PER_SOL: u64 = 1_000_000_000;

/// The Solana runtime with the precompact program, behind a JSON-RPC endpoint.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Port to serve JSON-RPC on; PubSub (WebSocket) is served on the next one, as a
    /// validator does (with 0, the system picks both).
    #[arg(long, default_value_t = 8899)]
    port: u16,
    /// Address to bind; loopback unless you mean to expose it.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// Persist accounts to this file after every committed transaction and reload them on start.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Lamports the airdrop faucet starts with.
    #[arg(long, default_value_t = 1_000_000 * LAMPORTS_PER_SOL)]
    faucet_lamports: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    // solana-program-test logs every instruction at debug level unless RUST_LOG says otherwise;
    // a long-running server should stay quiet.
    if std::env::var_os("RUST_LOG").is_none() {
        // tarpc warns on every bank call that no tracing is installed.
        std::env::set_var("RUST_LOG", "warn,tarpc=error");
    }
    let chain = match Chain::start(Options {
        faucet_lamports: args.faucet_lamports,
        state_file: args.state,
    })
    .await
    {
        Ok(chain) => chain,
        Err(e) => {
            eprintln!("precompact-localnet: {e}");
            return ExitCode::FAILURE;
        }
    };
    let address = SocketAddr::new(args.bind, args.port);
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("precompact-localnet: cannot listen on {address}: {e}; pass --port to use another port");
            return ExitCode::FAILURE;
        }
    };
    let rpc_address = listener.local_addr().unwrap_or(address);
    let pubsub_port = match args.port {
        0 => Some(0),
        port => port.checked_add(1),
    };
    let Some(pubsub_port) = pubsub_port else {
        eprintln!(
            "precompact-localnet: PubSub takes the port after --port; pass --port below 65535"
        );
        return ExitCode::FAILURE;
    };
    let pubsub_address = SocketAddr::new(args.bind, pubsub_port);
    let pubsub = match tokio::net::TcpListener::bind(pubsub_address).await {
        Ok(pubsub) => pubsub,
        Err(e) => {
            eprintln!("precompact-localnet: cannot listen for PubSub on {pubsub_address}: {e}; pass --port to use another pair of ports");
            return ExitCode::FAILURE;
        }
    };
    let pubsub_address = pubsub.local_addr().unwrap_or(pubsub_address);
    tokio::spawn(serve_pubsub(chain.clone(), pubsub));
    // Both endpoints listen before the ready line, so whoever waits for it may use either;
    // one write, so a reader that stops after the first line cannot break the second.
    // The signals are taken before the ready line: whoever stops the process once it is ready
    // (a test's harness, at once) must find it handling them, never killed by their default.
    let mut interrupt = signal(SignalKind::interrupt()).expect("SIGINT handler installs");
    let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler installs");
    let announcement = format!("ready http://{rpc_address}\npubsub ws://{pubsub_address}\n");
    // A reader that has gone away is no reason to stop serving. The lock is released at once:
    // the program's own log lines go to stdout too.
    let mut stdout = std::io::stdout();
    stdout
        .write_all(announcement.as_bytes())
        .and_then(|()| stdout.flush())
        .ok();
    let shutdown = async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
    };
    if let Err(e) = serve(chain, listener, shutdown).await {
        eprintln!("precompact-localnet: server failed: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
