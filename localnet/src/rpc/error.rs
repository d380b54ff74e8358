//! Every way a call can fail, each with its JSON-RPC code and the shape Agave gives it.
use serde_json::{json, Value};
use solana_transaction_error::TransactionError;

pub enum RpcError {
    /// The body is not JSON.
    Parse(serde_json::Error),
    /// JSON, but not a JSON-RPC 2.0 request.
    InvalidRequest(&'static str),
    MethodNotFound(String),
    /// A parameter is missing, of the wrong type or out of range; the text names it.
    InvalidParams(String),
    /// The chain itself failed; not the caller's fault.
    Internal(String),
    /// `sendTransaction`'s preflight simulation failed with `err`; the simulation, as Agave
    /// shapes it, is the error's data.
    PreflightFailure {
        err: Option<TransactionError>,
        simulation: Value,
    },
    SignatureVerification,
    /// No block at this slot: before the chain's first or not reached yet.
    BlockNotAvailable(u64),
    /// The transaction's version is above the `maxSupportedTransactionVersion` the client gave
    /// (none given: legacy only).
    UnsupportedTransactionVersion(u8),
}

pub type RpcResult = Result<Value, RpcError>;

impl RpcError {
    pub fn code(&self) -> i64 {
        match self {
            Self::Parse(_) => -32700,
            Self::InvalidRequest(_) => -32600,
            Self::MethodNotFound(_) => -32601,
            Self::InvalidParams(_) => -32602,
            Self::Internal(_) => -32603,
            Self::PreflightFailure { .. } => -32002,
            Self::SignatureVerification => -32003,
            Self::BlockNotAvailable(_) => -32004,
            Self::UnsupportedTransactionVersion(_) => -32015,
        }
    }

    fn message(&self) -> String {
        match self {
            Self::Parse(e) => format!("Parse error: {e}"),
            Self::InvalidRequest(why) => format!("Invalid request: {why}"),
            Self::MethodNotFound(method) => format!("Method not found: {method}"),
            Self::InvalidParams(why) => format!("Invalid params: {why}"),
            Self::Internal(why) => format!("Internal error: {why}"),
            Self::PreflightFailure { err, .. } => format!(
                "Transaction simulation failed: {}",
                err.as_ref().map(ToString::to_string).unwrap_or_default()
            ),
            Self::SignatureVerification => "Transaction signature verification failure".to_string(),
            Self::BlockNotAvailable(slot) => format!("Block not available for slot {slot}"),
            Self::UnsupportedTransactionVersion(version) => format!(
                "Transaction version ({version}) is not supported by the requesting client. \
                 Please try the request again with the following configuration parameter: \
                 \"maxSupportedTransactionVersion\": {version}"
            ),
        }
    }

    fn data(&self) -> Option<Value> {
        match self {
            Self::PreflightFailure { simulation, .. } => Some(simulation.clone()),
            _ => None,
        }
    }

    /// The `error` member of the response.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code(), "message": self.message()});
        if let Some(data) = self.data() {
            error["data"] = data;
        }
        error
    }
}
