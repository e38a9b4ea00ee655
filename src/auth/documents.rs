//! The OAuth documents sign-in reads, as serde types: protected resource metadata (RFC 9728),
//! authorization server metadata (RFC 8414), a dynamic registration's answer (RFC 7591) and a
//! token response (RFC 6749). Read leniently: a field of the wrong type reads as absent, as the
//! hand-written readers did, so a server's odd document fails no later than before.

use crate::protocol::lenient;
use serde::Deserialize;
use serde_json::Value;

/// Protected resource metadata.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct ResourceMetadata {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub resource: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub authorization_servers: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub scopes_supported: Option<Vec<Value>>,
}

/// Authorization server metadata: the parts other than endpoints.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct ServerMetadata {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub issuer: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub scopes_supported: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub token_endpoint_auth_methods_supported: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub dpop_signing_alg_values_supported: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub code_challenge_methods_supported: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub client_id_metadata_document_supported: Option<bool>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
}

/// A dynamic client registration's answer.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Registration {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub client_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub client_secret: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub token_endpoint_auth_method: Option<String>,
}

/// A token endpoint's answer, a token or an error.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct TokenResponse {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub access_token: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub token_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub refresh_token: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub expires_in: Option<u64>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub scope: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub error: Option<String>,
}

/// Reads a document of any of these kinds; whatever is not an object reads as empty.
pub(super) fn read<T: serde::de::DeserializeOwned + Default>(doc: &Value) -> T {
    lenient::view(doc)
}

/// Whether a list of the metadata holds `wanted` as a string.
pub(super) fn lists(list: &Option<Vec<Value>>, wanted: &str) -> bool {
    list.as_ref()
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(wanted)))
}

/// The strings of a list of the metadata.
pub(super) fn strings(list: &Option<Vec<Value>>) -> Option<Vec<&str>> {
    list.as_ref()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
}
