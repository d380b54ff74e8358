//! Typed parameters: a method's positional parameters are a tuple, each element read by serde
//! from its place in the array, so a bad one is refused (-32602) naming its position.
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, DeserializeOwned, Deserializer, Unexpected, Visitor};
use serde::Deserialize;
use serde_json::Value;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::error::RpcError;

/// A method's positional parameters.
pub trait Params: Sized {
    fn from_positional(values: Vec<Value>) -> Result<Self, RpcError>;
}

impl Params for () {
    fn from_positional(values: Vec<Value>) -> Result<Self, RpcError> {
        match values.len() {
            0 => Ok(()),
            n => Err(RpcError::InvalidParams(format!(
                "expected no parameters, got {n}"
            ))),
        }
    }
}

macro_rules! tuple_params {
    ($count:literal: $($name:ident $index:literal),+) => {
        impl<$($name: DeserializeOwned),+> Params for ($($name,)+) {
            fn from_positional(values: Vec<Value>) -> Result<Self, RpcError> {
                if values.len() > $count {
                    return Err(RpcError::InvalidParams(format!(
                        "expected at most {} parameters, got {}", $count, values.len()
                    )));
                }
                let mut values = values.into_iter();
                Ok(($(param::<$name>($index, values.next())?,)+))
            }
        }
    };
}

tuple_params!(1: A 0);
tuple_params!(2: A 0, B 1);
tuple_params!(3: A 0, B 1, C 2);

/// Parameter `index`; an absent one reads as null, so trailing optional ones may be left out.
fn param<T: DeserializeOwned>(index: usize, value: Option<Value>) -> Result<T, RpcError> {
    let value = value.unwrap_or(Value::Null);
    let missing = value.is_null();
    serde_json::from_value(value).map_err(|e| {
        RpcError::InvalidParams(if missing {
            format!("params[{index}] is missing ({e})")
        } else {
            format!("params[{index}]: {e}")
        })
    })
}

/// A value written in base58 on the wire.
pub struct Base58<T>(pub T);

/// What a base58 value is called in errors.
pub trait Base58Named: FromStr {
    const EXPECTED: &'static str;
}

impl Base58Named for Pubkey {
    const EXPECTED: &'static str = "a base58 public key";
}

impl Base58Named for Signature {
    const EXPECTED: &'static str = "a base58 signature";
}

impl Base58Named for Hash {
    const EXPECTED: &'static str = "a base58 blockhash";
}

impl<'de, T: Base58Named> Deserialize<'de> for Base58<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Expect<T>(PhantomData<T>);
        impl<T: Base58Named> Visitor<'_> for Expect<T> {
            type Value = Base58<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(T::EXPECTED)
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                T::from_str(text)
                    .map(Base58)
                    .map_err(|_| E::invalid_value(Unexpected::Str(text), &self))
            }
        }
        deserializer.deserialize_str(Expect(PhantomData))
    }
}

/// Unwraps a list of base58 values, refusing more than `max` (Agave's limits).
pub fn base58_list<T>(list: Vec<Base58<T>>, max: usize) -> Result<Vec<T>, RpcError> {
    if list.len() > max {
        return Err(RpcError::InvalidParams(format!(
            "Too many inputs provided; max {max}"
        )));
    }
    Ok(list.into_iter().map(|Base58(value)| value).collect())
}
