//! Lenient deserialisation for the typed MCP model: a field of the wrong JSON type reads as
//! absent (or empty) rather than failing the whole message, as ferry's hand-written readers
//! always did. A server's odd answer must not fail where it did not before.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A field that reads as `None` when it is missing or not a `T`.
pub fn opt<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).ok())
}

/// A field that reads as `T::default()` when it is missing or not a `T`.
pub fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    Ok(opt(deserializer)?.unwrap_or_default())
}

/// A field kept as JSON, `None` when missing or `null`.
pub fn present<'de, D>(deserializer: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    Ok((!value.is_null()).then_some(value))
}

/// A field kept as JSON whenever it is there, `null` too (`None` only when missing).
pub fn any<'de, D>(deserializer: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Value::deserialize(deserializer).map(Some)
}

/// Reads a typed view of `value` leniently: `T`'s fields are all lenient, so only a value that
/// is not an object fails, and then the view is `T::default()`.
pub fn view<T>(value: &Value) -> T
where
    T: serde::de::DeserializeOwned + Default,
{
    if value.is_object() {
        T::deserialize(value).unwrap_or_default()
    } else {
        T::default()
    }
}
