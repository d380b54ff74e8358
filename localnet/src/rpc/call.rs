//! The JSON-RPC 2.0 envelope, shared by HTTP and PubSub: reading a call, reading its
//! parameters into a method's tuple, and wrapping a result or an error in the response.
use serde_json::{json, Value};

use super::error::{RpcError, RpcResult};
use super::params::Params;

/// A call's id, method and positional parameters, or the response refusing it.
pub fn read_call(call: &Value) -> Result<(Value, &str, Vec<Value>), Value> {
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = call.get("method").and_then(Value::as_str) else {
        return Err(error_response(
            id,
            RpcError::InvalidRequest("missing \"method\""),
        ));
    };
    if call.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error_response(
            id,
            RpcError::InvalidRequest("\"jsonrpc\" must be \"2.0\""),
        ));
    }
    let params = match call.get("params") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(params)) => params.clone(),
        Some(_) => {
            return Err(error_response(
                id,
                RpcError::InvalidParams("params must be an array".to_string()),
            ))
        }
    };
    Ok((id, method, params))
}

pub fn respond(id: Value, outcome: RpcResult) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(error) => error_response(id, error),
    }
}

pub fn error_response(id: Value, error: RpcError) -> Value {
    json!({"jsonrpc": "2.0", "error": error.to_json(), "id": id})
}

/// Reads a method's parameters into the tuple its function takes.
pub fn typed<P: Params>(params: Vec<Value>) -> Result<P, RpcError> {
    P::from_positional(params)
}
