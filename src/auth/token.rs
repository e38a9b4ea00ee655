//! The token endpoint: which scopes to ask for, how the client proves itself, PKCE, and the
//! requests (with DPoP proofs where the server offers them).

use super::documents;
use super::*;

pub(super) fn pkce_challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The header a DPoP-bound server sends its nonce in (RFC 9449).
const DPOP_NONCE: &str = "dpop-nonce";

/// The scopes to ask for: the challenge's, else the resource's `scopes_supported`, else none;
/// on a step-up, with those already granted; `offline_access` when the server offers it.
pub(super) fn choose_scope(
    challenge: &Challenge,
    resource: &Value,
    server: &Value,
    configured: Option<&str>,
    previous: Option<&str>,
) -> Option<String> {
    let mut scopes: Vec<String> = Vec::new();
    pub(super) fn add_to(scopes: &mut Vec<String>, text: &str) {
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
        let resource: documents::ResourceMetadata = documents::read(resource);
        for s in documents::strings(&resource.scopes_supported)
            .into_iter()
            .flatten()
        {
            add(s);
        }
    }
    let server: documents::ServerMetadata = documents::read(server);
    let offers_offline = documents::lists(&server.scopes_supported, "offline_access");
    if offers_offline && !scopes.is_empty() {
        add_to(&mut scopes, "offline_access");
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// How the client authenticates at the token endpoint. A configured key means
/// `private_key_jwt`, unless the server lists methods without it and a secret is configured.
pub(super) fn token_auth_method(
    registered: Option<AuthMethod>,
    secret: bool,
    key: bool,
    server: &Value,
) -> AuthMethod {
    if let Some(method) = registered {
        return method;
    }
    let server: documents::ServerMetadata = documents::read(server);
    let listed: Option<Vec<&str>> =
        documents::strings(&server.token_endpoint_auth_methods_supported);
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
pub(super) struct TokenClient<'a> {
    pub(super) http: &'a reqwest::Client,
    pub(super) issuer: &'a str,
    pub(super) resource: &'a str,
    pub(super) endpoint: &'a str,
    pub(super) client_id: &'a str,
    pub(super) secret: Option<&'a str>,
    /// Whether the secret is kept with the tokens: only a secret a registration gave; a
    /// configured one (often `${VAR}`) is read from the config again when needed, never
    /// written to disk expanded.
    pub(super) keeps_secret: bool,
    /// For `private_key_jwt`: the key its assertions are signed with (addressed to `issuer`).
    pub(super) key: Option<&'a SigningKey>,
    pub(super) method: AuthMethod,
    /// The key the tokens are to be bound to (DPoP), if any.
    pub(super) dpop: Option<&'a DpopKey>,
}

impl TokenClient<'_> {
    /// Posts `form` and keeps what the answer grants (scope `requested` unless it names one).
    pub(super) async fn exchange(
        &self,
        form: Vec<(String, String)>,
        requested: Option<String>,
    ) -> Result<Stored> {
        let doc = token_request(self, form).await?;
        Ok(self.stored_from(&doc, requested))
    }

    pub(super) fn stored_from(&self, doc: &Value, requested: Option<String>) -> Stored {
        // RFC 9449 says DPoP; a server that leaves token_type out got the proof and is taken
        // to have bound the token to it. A server that issued a bearer token anyway gets
        // bearer requests.
        let answer: documents::TokenResponse = documents::read(doc);
        let bound = answer
            .token_type
            .as_deref()
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
            access_token: answer.access_token.unwrap_or_default(),
            refresh_token: answer.refresh_token,
            expires_at: answer.expires_in.map_or(0, |s| now() + s),
            scope: answer.scope.or(requested),
            wanted_scope: None,
            dpop_key: self.dpop.filter(|_| bound).map(DpopKey::to_text),
        }
    }
}

/// Posts a form to the token endpoint with the client's authentication, once more when the
/// server asks for a DPoP nonce; the token response.
pub(super) async fn token_request(
    auth: &TokenClient<'_>,
    form: Vec<(String, String)>,
) -> Result<Value> {
    let (endpoint, dpop) = (auth.endpoint, auth.dpop);
    let mut nonce: Option<String> = None;
    // At most one retry: when the server asks for a DPoP nonce (RFC 9449 section 8).
    for _ in 0..2 {
        let proof = match dpop {
            Some(key) => Some(key.proof("POST", endpoint, nonce.as_deref(), None, now())?),
            None => None,
        };
        let (status, doc, server_nonce) = token_post(auth, form.clone(), proof).await?;
        let answer: documents::TokenResponse = documents::read(&doc);
        let asks_nonce = status == reqwest::StatusCode::BAD_REQUEST
            && answer.error.as_deref() == Some("use_dpop_nonce");
        if let (true, Some(given), true) = (asks_nonce, server_nonce, nonce.is_none()) {
            if dpop.is_some() {
                nonce = Some(given);
                continue;
            }
        }
        if !status.is_success() || answer.access_token.is_none() {
            let why = answer.error.as_deref().unwrap_or("no access token");
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
pub(super) async fn token_post(
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
        .get(DPOP_NONCE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let doc = read_json(response).await;
    Ok((status, doc, server_nonce))
}

/// Encodes a client id or secret for HTTP Basic, as RFC 6749 section 2.3.1 says
/// (`application/x-www-form-urlencoded`).
pub(super) fn url_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
