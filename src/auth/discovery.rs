//! Finding who signs a server's users in: the protected resource metadata (RFC 9728) and the
//! authorization server's metadata (RFC 8414, then OpenID discovery), over https only.

use super::documents;
use super::*;

/// An HTTP client that never follows redirects (the authorization response is read from
/// one) and sends no Referer.
pub(super) fn http() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(concat!("ferry/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| Error::server(format!("could not set up HTTP: {e}")))
}

pub(super) async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
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
pub(super) const MAX_ANSWER: usize = 1024 * 1024;

/// A JSON answer of at most `MAX_ANSWER` bytes; `Null` when it is larger, or not JSON.
pub(super) async fn read_json(response: reqwest::Response) -> Value {
    crate::net::read_body(response, MAX_ANSWER)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

pub(super) fn origin_and_path(url: &str) -> Option<(String, String)> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let origin = parsed.origin().ascii_serialization();
    Some((origin, parsed.path().to_string()))
}

/// Protected resource metadata: the challenge's URL, then the path-based and root well-known
/// URLs; the first 200 wins.
pub(super) async fn protected_resource(
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
pub(super) fn resource_covers(resource: &str, server_url: &str) -> bool {
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
pub(super) async fn authorization_server(client: &reqwest::Client, issuer: &str) -> Result<Value> {
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
        let meta: documents::ServerMetadata = documents::read(&doc);
        if meta.issuer.as_deref() != Some(issuer) {
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

/// The refusal of a sign-in URL that is not https (nor http to this machine).
pub(super) fn not_https(what: &str, url: &str) -> Error {
    Error::auth(format!("{what} {url} is not an https URL; refused")).with_hint(
        "sign-in is read over https only (plain http only on this machine); tell the server's operator",
    )
}

/// An https URL, or http to this machine (a local authorization server).
pub(super) fn web_url(url: &str) -> bool {
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
