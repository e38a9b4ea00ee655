//! What the config says about signing in (the server's `"oauth"` block) and what a server's
//! refusal says (`WWW-Authenticate`).

use super::*;

/// How a client gets its tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grant {
    /// A person signs in in a browser (the default).
    #[default]
    AuthorizationCode,
    /// A machine signs in with its own credentials, with no person and no browser.
    ClientCredentials,
}

/// How a client proves itself at the token endpoint (`token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    /// A public client: its id only.
    #[default]
    None,
    ClientSecretBasic,
    ClientSecretPost,
    /// A signed assertion (RFC 7523).
    PrivateKeyJwt,
}

impl AuthMethod {
    /// The method a registration or metadata names; one ferry does not speak is a public
    /// client's (its id only).
    pub(super) fn from_name(name: &str) -> AuthMethod {
        match name {
            "client_secret_basic" => AuthMethod::ClientSecretBasic,
            "client_secret_post" => AuthMethod::ClientSecretPost,
            "private_key_jwt" => AuthMethod::PrivateKeyJwt,
            _ => AuthMethod::None,
        }
    }
}

/// What is wrong with a server's `"oauth"` block.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OAuthConfigError {
    #[error("\"oauth\" must be an object")]
    NotObject,
    #[error("\"oauth\".{0} must be text")]
    NotText(&'static str),
    #[error("\"oauth\".scopes must be text or a list")]
    Scopes,
    #[error("\"oauth\".callbackPort must be a port number")]
    CallbackPort,
    #[error("\"oauth\".grant must be authorization_code or client_credentials, not {0:?}")]
    Grant(String),
}

/// The server's `"oauth"` block in servers.json.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    /// Usually `${VAR}`; expanded when used.
    pub client_secret: Option<String>,
    /// `"authorization_code"` (the default) or `"client_credentials"`.
    pub grant: Grant,
    pub scopes: Option<String>,
    pub callback_port: Option<u16>,
    /// A Client ID Metadata Document URL ferry may use as its client id.
    pub client_metadata_url: Option<String>,
    /// A PEM private key (the text, usually `${VAR}`, or a file's path): the client then
    /// authenticates with a signed assertion (`private_key_jwt`) instead of a secret.
    pub private_key: Option<String>,
}

impl OAuthConfig {
    /// Reads the `"oauth"` block; `Err` says what is wrong with it.
    pub fn from_value(value: &Value) -> std::result::Result<OAuthConfig, OAuthConfigError> {
        let Some(map) = value.as_object() else {
            return Err(OAuthConfigError::NotObject);
        };
        let text = |key: &'static str| -> std::result::Result<Option<String>, OAuthConfigError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(OAuthConfigError::NotText(key)),
            }
        };
        let scopes = match map.get("scopes") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Some(_) => return Err(OAuthConfigError::Scopes),
        };
        let callback_port = match map.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|p| (1..=65535).contains(p))
                    .ok_or(OAuthConfigError::CallbackPort)? as u16,
            ),
        };
        let grant = match text("grant")?.as_deref() {
            None | Some("authorization_code") => Grant::AuthorizationCode,
            Some("client_credentials") => Grant::ClientCredentials,
            Some(other) => return Err(OAuthConfigError::Grant(other.to_string())),
        };
        Ok(OAuthConfig {
            client_id: text("clientId")?,
            client_secret: text("clientSecret")?,
            grant,
            scopes,
            callback_port,
            client_metadata_url: text("clientMetadataUrl")?,
            private_key: text("privateKey")?,
        })
    }

    /// Whether a machine signs in with client credentials (no person, no browser).
    pub fn machine(&self) -> bool {
        self.grant == Grant::ClientCredentials
    }
}

/// What a 401 or 403 said in `WWW-Authenticate`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Reads `Bearer k="v", k=v` parameters (quoted or bare).
    pub fn parse(header: &str) -> Challenge {
        let param = |key: &str| -> Option<String> {
            let lower = header.to_ascii_lowercase();
            let mut from = 0;
            while let Some(at) = lower[from..].find(key) {
                let start = from + at;
                let before_ok =
                    start == 0 || matches!(header.as_bytes()[start - 1], b' ' | b',' | b'\t');
                let rest = &header[start + key.len()..];
                let rest_trim = rest.trim_start();
                if before_ok && rest_trim.starts_with('=') {
                    let value = rest_trim[1..].trim_start();
                    return Some(if let Some(quoted) = value.strip_prefix('"') {
                        quoted.split('"').next().unwrap_or("").to_string()
                    } else {
                        value.split([',', ' ']).next().unwrap_or("").to_string()
                    });
                }
                from = start + key.len();
            }
            None
        };
        Challenge {
            resource_metadata: param("resource_metadata"),
            scope: param("scope"),
            error: param("error"),
        }
    }
}
