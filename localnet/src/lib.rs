//! precompact-localnet: the real Solana runtime (a `solana-program-test` bank with the
//! precompact program registered natively) served as Solana JSON-RPC over HTTP.
pub mod chain;
pub mod commitment;
pub mod idl_accounts;
pub mod rpc;
mod state_file;

use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

pub use chain::{Chain, Options};
pub use rpc::pubsub::serve_pubsub;

/// Serves JSON-RPC for `chain` on `listener` until `shutdown` completes; requests in flight
/// finish first, so a transaction is never cut off between commit and persistence.
pub async fn serve(
    chain: Arc<Chain>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/", post(handle))
        .route("/health", get(|| async { "ok" }))
        .with_state(chain);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

async fn handle(State(chain): State<Arc<Chain>>, body: Bytes) -> Json<serde_json::Value> {
    Json(rpc::handle_body(&chain, &body).await)
}
