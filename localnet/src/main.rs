use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use precompact_localnet::{serve, Chain, Options};
use tokio::signal::unix::{signal, SignalKind};

const LAMPORTS_PER_SOL: u64 = 1_000_000_000;

/// The Solana runtime with the precompact program, behind a JSON-RPC endpoint.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Port to serve JSON-RPC on.
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
        std::env::set_var("RUST_LOG", "warn");
    }
    let chain = match Chain::start(Options {
        faucet_lamports: args.faucet_lamports,
        state_file: args.state,
    })
    .await
    {
        Ok(chain) => Arc::new(chain),
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
    let url = format!(
        "http://{}",
        listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or(address.to_string())
    );
    println!("ready {url}");
    let shutdown = async {
        let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler installs");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = terminate.recv() => {},
        }
    };
    if let Err(e) = serve(chain, listener, shutdown).await {
        eprintln!("precompact-localnet: server failed: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
