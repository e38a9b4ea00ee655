//! OAuth 2.1 sign-in for remote MCP servers, as the 2025-11-25 and 2026-07-28 revisions
//! specify: protected resource metadata (RFC 9728) from the 401 challenge or the well-known
//! paths, authorization server metadata (RFC 8414, then OpenID discovery) checked against its
//! issuer, a client from the config, a Client ID Metadata Document, or dynamic registration
//! (RFC 7591), PKCE S256, the `resource` indicator (RFC 8707) sent exactly as the metadata
//! gives it, scopes from the challenge, `iss` checked (RFC 9207), refresh, step-up on 403
//! `insufficient_scope`, and client credentials for machines.
//!
//! Tokens live in `~/.config/ferry/auth/` (0700), one file per server URL (0600), refreshed
//! before they expire, one refresh at a time across processes (a lock beside the file). They
//! are never printed: not in logs, errors or `--json` output.

use super::jwt::{DpopKey, SigningKey};
use crate::{Error, Result};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    fn from_name(name: &str) -> AuthMethod {
        match name {
            "client_secret_basic" => AuthMethod::ClientSecretBasic,
            "client_secret_post" => AuthMethod::ClientSecretPost,
            "private_key_jwt" => AuthMethod::PrivateKeyJwt,
            _ => AuthMethod::None,
        }
    }
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
    pub fn from_value(value: &Value) -> std::result::Result<OAuthConfig, String> {
        let Some(map) = value.as_object() else {
            return Err("\"oauth\" must be an object".into());
        };
        let text = |key: &str| -> std::result::Result<Option<String>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("\"oauth\".{key} must be text")),
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
            Some(_) => return Err("\"oauth\".scopes must be text or a list".into()),
        };
        let callback_port = match map.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|p| (1..=65535).contains(p))
                    .ok_or("\"oauth\".callbackPort must be a port number")? as u16,
            ),
        };
        let grant = match text("grant")?.as_deref() {
            None | Some("authorization_code") => Grant::AuthorizationCode,
            Some("client_credentials") => Grant::ClientCredentials,
            Some(other) => {
                return Err(format!(
                "\"oauth\".grant must be authorization_code or client_credentials, not {other:?}"
            ))
            }
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

/// What is stored for one server (its token file): the issuer its credentials are bound to,
/// the client, and the tokens.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Stored {
    pub issuer: String,
    pub resource: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub auth_method: AuthMethod,
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Seconds since the epoch; 0 for unknown.
    pub expires_at: u64,
    pub scope: Option<String>,
    /// Scopes a 403 asked for since, to add at the next sign-in (step-up).
    pub wanted_scope: Option<String>,
    /// The key a DPoP-bound token is tied to (PKCS#8, base64); `None` for a bearer token.
    pub dpop_key: Option<String>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Stored {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A token file's content; `None` when it is not one (no issuer: nothing to trust).
    fn from_json(value: &Value) -> Option<Stored> {
        let stored: Stored = serde_json::from_value(value.clone()).ok()?;
        (!stored.issuer.is_empty()).then_some(stored)
    }

    /// What a request carries: the token, and its DPoP key when it is bound to one.
    pub fn credential(&self) -> Credential {
        Credential {
            token: self.access_token.clone(),
            dpop: self
                .dpop_key
                .as_deref()
                .and_then(DpopKey::from_text)
                .map(Arc::new),
        }
    }

    /// Whether the access token is past, or within a minute of, its expiry.
    pub fn expiring(&self) -> bool {
        self.expires_at != 0 && now() + 60 >= self.expires_at
    }
}

/// An access token as requests present it: `Bearer`, or `DPoP` with a fresh proof each time.
#[derive(Clone)]
pub struct Credential {
    pub token: String,
    pub dpop: Option<Arc<DpopKey>>,
}

impl Credential {
    /// The headers for one request (`method` to `url`), with the server's DPoP `nonce` if it
    /// gave one.
    pub fn headers(&self, method: &str, url: &str, nonce: Option<&str>) -> Vec<(String, String)> {
        match &self.dpop {
            None => vec![("Authorization".into(), format!("Bearer {}", self.token))],
            Some(key) => {
                let mut headers = vec![("Authorization".into(), format!("DPoP {}", self.token))];
                if let Ok(proof) = key.proof(method, url, nonce, Some(&self.token), now()) {
                    headers.push(("DPoP".into(), proof));
                }
                headers
            }
        }
    }
}

/// Where tokens live.
pub fn auth_dir() -> PathBuf {
    crate::paths::config_dir().join("auth")
}

/// The token file of the server at `url`.
pub fn token_file(url: &str) -> PathBuf {
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    let hash: String = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "server".into());
    auth_dir().join(format!("{}-{hash}.json", crate::paths::file_stem(&host)))
}

/// The stored sign-in for `url`, if any.
pub fn load(url: &str) -> Option<Stored> {
    let text = std::fs::read_to_string(token_file(url)).ok()?;
    Stored::from_json(&serde_json::from_str(&text).ok()?)
}

/// Saves a sign-in: 0600 in a 0700 directory, written beside and renamed.
pub fn save(url: &str, stored: &Stored) -> Result<()> {
    let path = token_file(url);
    crate::paths::write_private(&path, stored.to_json().to_string().as_bytes()).map_err(|e| {
        Error::server(format!(
            "cannot save the sign-in in {}: {e}",
            path.display()
        ))
    })
}

/// Forgets a sign-in; false when there was none.
pub fn forget(url: &str) -> bool {
    let _ = std::fs::remove_file(challenge_file(url));
    std::fs::remove_file(token_file(url)).is_ok()
}

/// An HTTP client that never follows redirects (the authorization response is read from
/// one) and sends no Referer.
fn http() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(concat!("ferry/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| Error::server(format!("could not set up HTTP: {e}")))
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = client
        .get(url)
        .header("Accept", "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    Some(read_json(response).await).filter(|doc| !doc.is_null())
}

/// The largest metadata, token or registration answer read: they are a few kilobytes.
const MAX_ANSWER: usize = 1024 * 1024;

/// A JSON answer of at most `MAX_ANSWER` bytes; `Null` when it is larger, or not JSON.
async fn read_json(response: reqwest::Response) -> Value {
    super::http::read_body(response, MAX_ANSWER)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

fn origin_and_path(url: &str) -> Option<(String, String)> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let origin = parsed.origin().ascii_serialization();
    Some((origin, parsed.path().to_string()))
}

/// Protected resource metadata: the challenge's URL, then the path-based and root well-known
/// URLs; the first 200 wins.
async fn protected_resource(
    client: &reqwest::Client,
    server_url: &str,
    challenge: &Challenge,
) -> Result<Value> {
    let (origin, path) = origin_and_path(server_url)
        .ok_or_else(|| Error::usage(format!("invalid server URL {server_url:?}")))?;
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push(url.clone());
    }
    if !path.is_empty() && path != "/" {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for url in candidates {
        // The metadata names the authorization server: read over plain http, anyone on the
        // path could name theirs.
        if !web_url(&url) {
            return Err(not_https("the protected resource metadata", &url));
        }
        if let Some(doc) = get_json(client, &url).await {
            return Ok(doc);
        }
    }
    Err(Error::auth(format!(
        "{server_url} asks for sign-in but publishes no protected resource metadata"
    ))
    .with_hint("set an Authorization header in the server's \"headers\" instead"))
}

/// Whether the metadata's `resource` names this server: same origin, and the server's path
/// inside the resource's on a segment boundary.
fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some((r_origin, r_path)), Some((s_origin, s_path))) =
        (origin_and_path(resource), origin_and_path(server_url))
    else {
        return false;
    };
    let r = format!("{}/", r_path.trim_end_matches('/'));
    let s = format!("{}/", s_path.trim_end_matches('/'));
    r_origin == s_origin && s.starts_with(&r)
}

/// Authorization server metadata for `issuer`, by RFC 8414 then OpenID discovery, in the
/// order the spec gives; a document whose `issuer` differs is never used.
async fn authorization_server(client: &reqwest::Client, issuer: &str) -> Result<Value> {
    // Its metadata chooses the endpoints that get the code, the secret and the tokens.
    if !web_url(issuer) {
        return Err(not_https("the authorization server", issuer));
    }
    let (origin, path) = origin_and_path(issuer)
        .ok_or_else(|| Error::auth(format!("the authorization server {issuer:?} is not a URL")))?;
    let path = path.trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for url in candidates {
        let Some(doc) = get_json(client, &url).await else {
            continue;
        };
        if doc.get("issuer").and_then(Value::as_str) != Some(issuer) {
            return Err(Error::auth(format!(
                "the authorization server's metadata names another issuer than {issuer}; refused"
            ))
            .with_hint(
                "the server's sign-in is misconfigured or tampered with; tell its operator",
            ));
        }
        return Ok(doc);
    }
    Err(Error::auth(format!(
        "no metadata found for the authorization server {issuer}"
    )))
}

pub(crate) fn random_text(bytes: usize) -> String {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    let _ = ring::rand::SystemRandom::new().fill(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

fn pkce_challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The scopes to ask for: the challenge's, else the resource's `scopes_supported`, else none;
/// on a step-up, with those already granted; `offline_access` when the server offers it.
fn choose_scope(
    challenge: &Challenge,
    resource: &Value,
    server: &Value,
    configured: Option<&str>,
    previous: Option<&str>,
) -> Option<String> {
    let mut scopes: Vec<String> = Vec::new();
    fn add_to(scopes: &mut Vec<String>, text: &str) {
        for s in text.split_whitespace() {
            if !scopes.iter().any(|x| x == s) {
                scopes.push(s.to_string());
            }
        }
    }
    let mut add = |text: &str| add_to(&mut scopes, text);
    if let Some(previous) = previous {
        add(previous);
    }
    if let Some(configured) = configured {
        add(configured);
    }
    if let Some(scope) = &challenge.scope {
        add(scope);
    } else if previous.is_none() && configured.is_none() {
        if let Some(supported) = resource.get("scopes_supported").and_then(Value::as_array) {
            for s in supported.iter().filter_map(Value::as_str) {
                add(s);
            }
        }
    }
    let offers_offline = server
        .get("scopes_supported")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|s| s == "offline_access"));
    if offers_offline && !scopes.is_empty() {
        add_to(&mut scopes, "offline_access");
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// How the client authenticates at the token endpoint. A configured key means
/// `private_key_jwt`, unless the server lists methods without it and a secret is configured.
fn token_auth_method(
    registered: Option<AuthMethod>,
    secret: bool,
    key: bool,
    server: &Value,
) -> AuthMethod {
    if let Some(method) = registered {
        return method;
    }
    let listed: Option<Vec<&str>> = server
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    if key
        && (!secret
            || listed
                .as_ref()
                .is_none_or(|l| l.contains(&"private_key_jwt")))
    {
        return AuthMethod::PrivateKeyJwt;
    }
    let supported = listed.unwrap_or_else(|| vec!["client_secret_basic"]);
    if !secret {
        AuthMethod::None
    } else if supported.contains(&"client_secret_basic") {
        AuthMethod::ClientSecretBasic
    } else if supported.contains(&"client_secret_post") {
        AuthMethod::ClientSecretPost
    } else {
        AuthMethod::None
    }
}

/// A client at one token endpoint: who it is, how it proves it, and what its tokens are for.
struct TokenClient<'a> {
    http: &'a reqwest::Client,
    issuer: &'a str,
    resource: &'a str,
    endpoint: &'a str,
    client_id: &'a str,
    secret: Option<&'a str>,
    /// Whether the secret is kept with the tokens: only a secret a registration gave; a
    /// configured one (often `${VAR}`) is read from the config again when needed, never
    /// written to disk expanded.
    keeps_secret: bool,
    /// For `private_key_jwt`: the key its assertions are signed with (addressed to `issuer`).
    key: Option<&'a SigningKey>,
    method: AuthMethod,
    /// The key the tokens are to be bound to (DPoP), if any.
    dpop: Option<&'a DpopKey>,
}

impl TokenClient<'_> {
    /// Posts `form` and keeps what the answer grants (scope `requested` unless it names one).
    async fn exchange(
        &self,
        form: Vec<(String, String)>,
        requested: Option<String>,
    ) -> Result<Stored> {
        let doc = token_request(self, form).await?;
        Ok(self.stored_from(&doc, requested))
    }

    fn stored_from(&self, doc: &Value, requested: Option<String>) -> Stored {
        // RFC 9449 says DPoP; a server that leaves token_type out got the proof and is taken
        // to have bound the token to it. A server that issued a bearer token anyway gets
        // bearer requests.
        let bound = doc
            .get("token_type")
            .and_then(Value::as_str)
            .is_none_or(|t| t.eq_ignore_ascii_case("dpop"));
        Stored {
            issuer: self.issuer.to_string(),
            resource: self.resource.to_string(),
            token_endpoint: self.endpoint.to_string(),
            client_id: self.client_id.to_string(),
            client_secret: self
                .secret
                .filter(|_| self.keeps_secret)
                .map(str::to_string),
            auth_method: self.method,
            access_token: doc["access_token"].as_str().unwrap_or_default().to_string(),
            refresh_token: doc
                .get("refresh_token")
                .and_then(Value::as_str)
                .map(str::to_string),
            expires_at: doc
                .get("expires_in")
                .and_then(Value::as_u64)
                .map_or(0, |s| now() + s),
            scope: doc
                .get("scope")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or(requested),
            wanted_scope: None,
            dpop_key: self.dpop.filter(|_| bound).map(DpopKey::to_text),
        }
    }
}

/// Posts a form to the token endpoint with the client's authentication, once more when the
/// server asks for a DPoP nonce; the token response.
async fn token_request(auth: &TokenClient<'_>, form: Vec<(String, String)>) -> Result<Value> {
    let (endpoint, dpop) = (auth.endpoint, auth.dpop);
    let mut nonce: Option<String> = None;
    // At most one retry: when the server asks for a DPoP nonce (RFC 9449 section 8).
    for _ in 0..2 {
        let proof = match dpop {
            Some(key) => Some(key.proof("POST", endpoint, nonce.as_deref(), None, now())?),
            None => None,
        };
        let (status, doc, server_nonce) = token_post(auth, form.clone(), proof).await?;
        let asks_nonce = status == reqwest::StatusCode::BAD_REQUEST
            && doc.get("error").and_then(Value::as_str) == Some("use_dpop_nonce");
        if let (true, Some(given), true) = (asks_nonce, server_nonce, nonce.is_none()) {
            if dpop.is_some() {
                nonce = Some(given);
                continue;
            }
        }
        if !status.is_success() || doc.get("access_token").and_then(Value::as_str).is_none() {
            let why = doc
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("no access token");
            return Err(Error::auth(format!(
                "the authorization server refused to issue a token (HTTP {}: {why})",
                status.as_u16()
            )));
        }
        return Ok(doc);
    }
    Err(Error::auth(
        "the authorization server kept asking for a new DPoP nonce",
    ))
}

/// One POST to the token endpoint: its status, JSON body and `DPoP-Nonce`.
async fn token_post(
    auth: &TokenClient<'_>,
    mut form: Vec<(String, String)>,
    proof: Option<String>,
) -> Result<(reqwest::StatusCode, Value, Option<String>)> {
    let (client_id, secret, method) = (auth.client_id, auth.secret, auth.method);
    let mut request = auth
        .http
        .post(auth.endpoint)
        .header("Accept", "application/json");
    if let Some(proof) = proof {
        request = request.header("DPoP", proof);
    }
    if method == AuthMethod::PrivateKeyJwt {
        let key = auth.key.ok_or_else(|| {
            Error::auth("this sign-in uses private_key_jwt: \"oauth\".privateKey is needed")
        })?;
        form.push((
            "client_assertion_type".into(),
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
        ));
        form.push((
            "client_assertion".into(),
            key.assertion(client_id, auth.issuer, now())?,
        ));
    }
    match (method, secret) {
        (AuthMethod::PrivateKeyJwt, _) => {}
        (AuthMethod::ClientSecretBasic, Some(secret)) => {
            let encode = |s: &str| url_encode(s);
            let credentials = format!("{}:{}", encode(client_id), encode(secret));
            request = request.header(
                "Authorization",
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(credentials)
                ),
            );
        }
        (AuthMethod::ClientSecretPost, Some(secret)) => {
            form.push(("client_id".into(), client_id.into()));
            form.push(("client_secret".into(), secret.into()));
        }
        _ => form.push(("client_id".into(), client_id.into())),
    }
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter())
        .finish();
    let response = request
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| Error::auth(format!("the token endpoint could not be reached: {e}")))?;
    let status = response.status();
    let server_nonce = response
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let doc = read_json(response).await;
    Ok((status, doc, server_nonce))
}

/// Encodes a client id or secret for HTTP Basic, as RFC 6749 section 2.3.1 says
/// (`application/x-www-form-urlencoded`).
fn url_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Reads the authorization response (`code`, `state`, `iss`) from a redirect URL.
fn callback_params(url: &str) -> Map<String, Value> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    let mut params = Map::new();
    if let Ok(parsed) = reqwest::Url::parse(&format!("http://x/?{query}")) {
        for (k, v) in parsed.query_pairs() {
            params.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    params
}

/// How the person signing in gets to the authorization page, and how its answer comes back.
pub enum Browser {
    /// Open the URL (with `$BROWSER`, else the platform's opener) and catch the redirect on a
    /// loopback listener; the URL is always printed too.
    Open { port: Option<u16> },
    /// Print the URL and read the address the browser was sent back to from stdin.
    Paste,
}

/// Listens on loopback for the browser's return; the redirect URI and a receiver of the
/// request's target.
async fn listen(port: Option<u16>) -> Result<(String, tokio::sync::oneshot::Receiver<String>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
        .await
        .map_err(|e| Error::usage(format!("cannot listen for the sign-in's return: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (sender, receiver) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut sender = Some(sender);
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = vec![0u8; 16 * 1024];
            let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
                .await
                .ok()
                .and_then(|r| r.ok())
                .unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = head
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or("")
                .to_string();
            if !target.starts_with("/callback") {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let page = "ferry: signed in. You can close this tab.\n";
            let _ = stream
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                        page.len()
                    )
                    .as_bytes(),
                )
                .await;
            if let Some(sender) = sender.take() {
                let _ = sender.send(target);
            }
            break;
        }
    });
    Ok((format!("http://127.0.0.1:{port}/callback"), receiver))
}

/// The refusal of a sign-in URL that is not https (nor http to this machine).
fn not_https(what: &str, url: &str) -> Error {
    Error::auth(format!("{what} {url} is not an https URL; refused")).with_hint(
        "sign-in is read over https only (plain http only on this machine); tell the server's operator",
    )
}

/// An https URL, or http to this machine (a local authorization server).
fn web_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = parsed.host_str().unwrap_or("");
    let loopback = host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    parsed.scheme() == "https" || (parsed.scheme() == "http" && loopback)
}

/// Starts the person's browser on `url` (`$BROWSER`, else the platform's opener).
fn open_browser(url: &str) {
    let command = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => shlex::split(&browser).unwrap_or_default(),
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ => vec!["xdg-open".into()],
    };
    if let Some((program, args)) = command.split_first() {
        let _ = std::process::Command::new(program)
            .args(args)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// Signs in to the server at `server_url` (`shown` names it in messages) after `challenge`,
/// and stores the result. `config`'s secret is already expanded. `say` prints a line for the
/// person (the URL to open).
pub async fn sign_in(
    server_url: &str,
    shown: &str,
    challenge: &Challenge,
    config: &OAuthConfig,
    browser: Browser,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Stored> {
    let client = http()?;
    let previous = load(server_url);
    let resource_doc = protected_resource(&client, server_url, challenge).await?;
    let resource = resource_doc
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or(server_url)
        .to_string();
    if !resource_covers(&resource, server_url) {
        return Err(Error::auth(format!(
            "{shown}'s metadata names another resource ({resource}); refused"
        ))
        .with_hint("the server's sign-in is misconfigured or tampered with; tell its operator"));
    }
    let issuer = resource_doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or_else(|| Error::auth(format!("{shown} names no authorization server")))?
        .to_string();
    // Credentials are bound to the issuer that gave them: another issuer starts afresh.
    let previous = previous.filter(|p| p.issuer == issuer);
    let server = authorization_server(&client, &issuer).await?;
    // Endpoints come from the server's metadata, and one of them is opened in a browser:
    // only https (http on loopback) is used, never file: or a custom scheme.
    let endpoint = |key: &str| -> Result<String> {
        let url = server
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| Error::auth(format!("the authorization server has no {key}")))?;
        if !web_url(url) {
            return Err(Error::auth(format!(
                "the authorization server's {key} is not an https URL; refused"
            )));
        }
        Ok(url.to_string())
    };
    let token_endpoint = endpoint("token_endpoint")?;
    let previous_scope = previous.as_ref().and_then(|p| {
        let granted = p.scope.clone().unwrap_or_default();
        let wanted = p.wanted_scope.clone().unwrap_or_default();
        let joined = format!("{granted} {wanted}");
        (!joined.trim().is_empty()).then(|| joined.trim().to_string())
    });
    let scope = choose_scope(
        challenge,
        &resource_doc,
        &server,
        config.scopes.as_deref(),
        previous_scope.as_deref(),
    );
    let secret = config.client_secret.clone();
    let key = config
        .private_key
        .as_deref()
        .map(SigningKey::from_config)
        .transpose()?;
    // A DPoP-bound token when the authorization server offers ES256 proofs (RFC 9449 section
    // 5.1): a stolen token is then useless without the key, which never leaves this machine.
    let offers_dpop = server
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|alg| alg == "ES256"));
    let dpop = if offers_dpop {
        Some(DpopKey::generate()?)
    } else {
        None
    };
    if config.machine() {
        let client_id = config.client_id.clone().ok_or_else(|| {
            Error::usage(format!(
                "{shown}: client_credentials needs \"oauth\".clientId"
            ))
        })?;
        let method = token_auth_method(None, secret.is_some(), key.is_some(), &server);
        let mut form = vec![
            ("grant_type".to_string(), "client_credentials".to_string()),
            ("resource".to_string(), resource.clone()),
        ];
        if let Some(scope) = &scope {
            form.push(("scope".into(), scope.clone()));
        }
        let stored = TokenClient {
            http: &client,
            issuer: &issuer,
            resource: &resource,
            endpoint: &token_endpoint,
            client_id: &client_id,
            secret: secret.as_deref(),
            keeps_secret: false,
            key: key.as_ref(),
            method,
            dpop: dpop.as_ref(),
        }
        .exchange(form, scope)
        .await?;
        save(server_url, &stored)?;
        return Ok(stored);
    }
    let supports_s256 = server
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|m| m == "S256"));
    if !supports_s256 {
        return Err(Error::auth(format!(
            "the authorization server of {shown} does not offer PKCE (S256); refused"
        )));
    }
    let authorization_endpoint = endpoint("authorization_endpoint")?;
    let (redirect_uri, callback) = match browser {
        Browser::Open { port } => {
            let (uri, receiver) = listen(port.or(config.callback_port)).await?;
            (uri, Some(receiver))
        }
        Browser::Paste => (
            format!(
                "http://127.0.0.1:{}/callback",
                config.callback_port.unwrap_or(8976)
            ),
            None,
        ),
    };
    // The client: configured, a metadata document, or a new registration (one per sign-in:
    // a registration kept from before may have been revoked, and a browser would then stop
    // on the server's error page instead of coming back).
    let (client_id, client_secret, registered_method) = if let Some(id) = &config.client_id {
        (id.clone(), secret.clone(), None)
    } else if let (Some(url), true) = (
        &config.client_metadata_url,
        server.get("client_id_metadata_document_supported") == Some(&Value::Bool(true)),
    ) {
        (url.clone(), None, Some(AuthMethod::None))
    } else {
        let registration = endpoint("registration_endpoint").map_err(|_| {
            Error::auth(format!(
                "{shown}'s authorization server lets no client register itself"
            ))
            .with_hint("set \"oauth\": {\"clientId\": \"...\"} for the server (ferry add NAME URL --client-id ID)")
        })?;
        let body = json!({
            "client_name": "ferry",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        });
        let response = client
            .post(&registration)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| Error::auth(format!("client registration failed: {e}")))?;
        let status = response.status();
        let doc = read_json(response).await;
        let Some(id) = doc.get("client_id").and_then(Value::as_str) else {
            return Err(Error::auth(format!(
                "the authorization server refused ferry's registration (HTTP {})",
                status.as_u16()
            ))
            .with_hint("set \"oauth\": {\"clientId\": \"...\"} for the server (ferry add NAME URL --client-id ID)"));
        };
        (
            id.to_string(),
            doc.get("client_secret")
                .and_then(Value::as_str)
                .map(str::to_string),
            doc.get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .map(AuthMethod::from_name),
        )
    };
    // A configured key belongs to a configured client id, not to one registered now.
    let key = key.filter(|_| config.client_id.is_some());
    let method = token_auth_method(
        registered_method,
        client_secret.is_some(),
        key.is_some(),
        &server,
    );
    let verifier = random_text(48);
    let state = random_text(16);
    let mut url = reqwest::Url::parse(&authorization_endpoint)
        .map_err(|_| Error::auth("the authorization endpoint is not a URL"))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("state", &state)
            .append_pair("code_challenge", &pkce_challenge(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &resource);
        if let Some(scope) = &scope {
            query.append_pair("scope", scope);
        }
    }
    say(&format!("sign in to {shown} at:\n  {url}"));
    let returned = match callback {
        Some(receiver) => {
            open_browser(url.as_str());
            match tokio::time::timeout(Duration::from_secs(300), receiver).await {
                Ok(Ok(target)) => target,
                _ => {
                    return Err(Error::auth("no sign-in came back within 5 minutes")
                        .with_hint("run ferry auth again; on a remote shell add --paste"))
                }
            }
        }
        None => {
            say("then paste here the address your browser was sent to:");
            let line = tokio::task::spawn_blocking(|| {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map(|_| line)
            })
            .await
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or_default();
            line.trim().to_string()
        }
    };
    let params = callback_params(&returned);
    let param = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(error) = param("error") {
        return Err(Error::auth(format!("sign-in refused: {error}")));
    }
    if param("state").as_deref() != Some(state.as_str()) {
        return Err(Error::auth(
            "the sign-in's answer does not match its request (state); refused",
        ));
    }
    // RFC 9207: the answer names the issuer it came from, exactly.
    let advertised =
        server.get("authorization_response_iss_parameter_supported") == Some(&Value::Bool(true));
    match param("iss") {
        Some(iss) if iss != issuer => {
            return Err(Error::auth(format!(
                "the sign-in's answer came from another issuer ({iss}); refused"
            )))
        }
        None if advertised => {
            return Err(Error::auth(
                "the sign-in's answer does not name its issuer; refused",
            ))
        }
        _ => {}
    }
    let code = param("code").ok_or_else(|| Error::auth("the sign-in's answer has no code"))?;
    let form = vec![
        ("grant_type".to_string(), "authorization_code".to_string()),
        ("code".to_string(), code),
        ("redirect_uri".to_string(), redirect_uri),
        ("code_verifier".to_string(), verifier),
        ("resource".to_string(), resource.clone()),
    ];
    let stored = TokenClient {
        http: &client,
        issuer: &issuer,
        resource: &resource,
        endpoint: &token_endpoint,
        client_id: &client_id,
        secret: client_secret.as_deref(),
        keeps_secret: config.client_id.is_none(),
        key: key.as_ref(),
        method,
        dpop: dpop.as_ref(),
    }
    .exchange(form, scope)
    .await?;
    save(server_url, &stored)?;
    Ok(stored)
}

/// The access token to send to `url`, refreshed first when it is about to expire (one
/// refresh at a time across processes: the others wait, then read the new one).
pub async fn bearer(url: &str, config: Option<&OAuthConfig>) -> Option<Credential> {
    let stored = load(url)?;
    if !stored.expiring() {
        return Some(stored.credential());
    }
    refresh(url, config).await.ok().map(|s| s.credential())
}

/// Exchanges the refresh token for new tokens, under the server's lock (`config` gives the
/// key of a client that signs its requests).
pub async fn refresh(url: &str, config: Option<&OAuthConfig>) -> Result<Stored> {
    let lock_path = token_file(url).with_extension("lock");
    let lock = tokio::task::spawn_blocking(move || lock_file(&lock_path))
        .await
        .map_err(|e| Error::auth(e.to_string()))??;
    // Another process may have refreshed while this one waited.
    let stored = load(url).ok_or_else(|| Error::auth("not signed in"))?;
    if !stored.expiring() {
        drop(lock);
        return Ok(stored);
    }
    let refresh_token = stored
        .refresh_token
        .clone()
        .ok_or_else(|| Error::auth("the sign-in expired and cannot be renewed"))?;
    let client = http()?;
    let form = vec![
        ("grant_type".to_string(), "refresh_token".to_string()),
        ("refresh_token".to_string(), refresh_token.clone()),
        ("resource".to_string(), stored.resource.clone()),
    ];
    let key = match config.and_then(|c| c.private_key.as_deref()) {
        Some(text) if stored.auth_method == AuthMethod::PrivateKeyJwt => {
            Some(SigningKey::from_config(text)?)
        }
        _ => None,
    };
    // A bound refresh token is presented with the same key (RFC 9449 section 5).
    let dpop = stored.dpop_key.as_deref().and_then(DpopKey::from_text);
    let mut renewed = TokenClient {
        http: &client,
        issuer: &stored.issuer,
        resource: &stored.resource,
        endpoint: &stored.token_endpoint,
        client_id: &stored.client_id,
        secret: stored
            .client_secret
            .as_deref()
            .or(config.and_then(|c| c.client_secret.as_deref())),
        keeps_secret: stored.client_secret.is_some(),
        key: key.as_ref(),
        method: stored.auth_method,
        dpop: dpop.as_ref(),
    }
    .exchange(form, stored.scope.clone())
    .await?;
    if renewed.refresh_token.is_none() {
        renewed.refresh_token = Some(refresh_token);
    }
    save(url, &renewed)?;
    drop(lock);
    Ok(renewed)
}

fn challenge_file(url: &str) -> PathBuf {
    token_file(url).with_extension("challenge")
}

/// Keeps a server's last refusal, so `ferry auth` asks for what it asked for.
pub fn remember(url: &str, challenge: &Challenge) {
    let doc = json!({"resourceMetadata": challenge.resource_metadata, "scope": challenge.scope, "error": challenge.error});
    let _ = crate::paths::write_private(&challenge_file(url), doc.to_string().as_bytes());
}

/// The last refusal kept for `url`.
pub fn remembered(url: &str) -> Option<Challenge> {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(challenge_file(url)).ok()?).ok()?;
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    Some(Challenge {
        resource_metadata: text("resourceMetadata"),
        scope: text("scope"),
        error: text("error"),
    })
}

/// Marks a stored sign-in as spent (the server refused its token), so the next call refreshes
/// it, or as needing more scope (a 403 `insufficient_scope`) for the next sign-in.
pub fn note_refusal(url: &str, challenge: &Challenge) {
    let Some(mut stored) = load(url) else {
        return;
    };
    if challenge.error.as_deref() == Some("insufficient_scope") {
        stored.wanted_scope = challenge.scope.clone();
    } else {
        stored.expires_at = 1;
    }
    let _ = save(url, &stored);
}

fn lock_file(path: &std::path::Path) -> Result<std::fs::File> {
    crate::paths::locked_file(path)
        .map_err(|e| Error::auth(format!("cannot lock {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_round_trips_and_reads_as_earlier_ferries_wrote_it() {
        let stored = Stored {
            issuer: "https://auth.example".into(),
            resource: "https://mcp.example/mcp".into(),
            token_endpoint: "https://auth.example/token".into(),
            client_id: "ferry".into(),
            client_secret: Some("s".into()),
            auth_method: AuthMethod::ClientSecretPost,
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            expires_at: 42,
            scope: Some("read".into()),
            wanted_scope: None,
            dpop_key: None,
        };
        assert_eq!(Stored::from_json(&stored.to_json()), Some(stored.clone()));
        // The keys as written before the type was derived.
        let earlier = json!({"issuer": "https://auth.example", "resource": "https://mcp.example/mcp",
            "tokenEndpoint": "https://auth.example/token", "clientId": "ferry", "clientSecret": "s",
            "authMethod": "client_secret_post", "accessToken": "a", "refreshToken": "r",
            "expiresAt": 42, "scope": "read", "wantedScope": null, "dpopKey": null});
        assert_eq!(stored.to_json(), earlier);
        assert_eq!(Stored::from_json(&json!({"accessToken": "a"})), None);
        let bare = Stored::from_json(&json!({"issuer": "i"})).unwrap();
        assert_eq!(bare.auth_method, AuthMethod::None);
    }

    #[test]
    fn the_grant_is_one_of_two() {
        let config = OAuthConfig::from_value(&json!({"grant": "client_credentials"})).unwrap();
        assert!(config.machine());
        assert_eq!(
            OAuthConfig::from_value(&json!({})).unwrap().grant,
            Grant::AuthorizationCode
        );
        assert!(OAuthConfig::from_value(&json!({"grant": "implicit"}))
            .unwrap_err()
            .contains("implicit"));
    }

    #[test]
    fn challenges_are_read_quoted_or_bare() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("mcp:read mcp:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x/.well-known/oauth-protected-resource/mcp")
        );
        let bare = Challenge::parse("Bearer error=invalid_token, scope=a");
        assert_eq!(bare.error.as_deref(), Some("invalid_token"));
        assert_eq!(bare.scope.as_deref(), Some("a"));
    }

    #[test]
    fn a_resource_covers_its_server_by_whole_segments() {
        assert!(resource_covers("http://h:1", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
        assert!(!resource_covers(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
        assert!(!resource_covers("http://h:1/mc", "http://h:1/mcp"));
    }

    #[test]
    fn scopes_come_from_the_challenge_then_the_resource_and_step_up_keeps_the_old() {
        let none = Challenge::default();
        let resource = json!({"scopes_supported": ["a", "b"]});
        let server = json!({});
        assert_eq!(
            choose_scope(&none, &resource, &server, None, None).as_deref(),
            Some("a b")
        );
        let challenged = Challenge {
            scope: Some("w".into()),
            ..Challenge::default()
        };
        assert_eq!(
            choose_scope(&challenged, &resource, &server, None, None).as_deref(),
            Some("w")
        );
        assert_eq!(
            choose_scope(&challenged, &resource, &server, None, Some("r")).as_deref(),
            Some("r w")
        );
        assert_eq!(choose_scope(&none, &json!({}), &server, None, None), None);
        let offline = json!({"scopes_supported": ["a", "offline_access"]});
        assert_eq!(
            choose_scope(&challenged, &resource, &offline, None, None).as_deref(),
            Some("w offline_access")
        );
    }

    #[test]
    fn only_web_endpoints_are_used() {
        assert!(web_url("https://auth.example/authorize"));
        assert!(web_url("http://127.0.0.1:8080/token"));
        assert!(web_url("http://[::1]:8080/token"));
        assert!(web_url("http://localhost/token"));
        assert!(!web_url("http://auth.example/token"));
        // Reaches this machine, yet is no loopback address: refused as any other host.
        assert!(!web_url("http://0.0.0.0:8080/token"));
        assert!(!web_url("file:///etc/passwd"));
        assert!(!web_url("javascript:alert(1)"));
        assert!(!web_url("ms-settings:privacy"));
    }

    #[test]
    fn pkce_is_s256_of_the_verifier() {
        // RFC 7636 appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
