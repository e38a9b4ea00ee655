//! Signing in, and keeping signed in: the whole authorization code and client credentials
//! flows, the bearer a request carries, and the refresh of an expiring token.

use super::documents;
use super::*;

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
    let resource_meta: documents::ResourceMetadata = documents::read(&resource_doc);
    let resource = resource_meta
        .resource
        .clone()
        .unwrap_or_else(|| server_url.to_string());
    if !resource_covers(&resource, server_url) {
        return Err(Error::auth(format!(
            "{shown}'s metadata names another resource ({resource}); refused"
        ))
        .with_hint("the server's sign-in is misconfigured or tampered with; tell its operator"));
    }
    let issuer = resource_meta
        .authorization_servers
        .as_ref()
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
    let server_meta: documents::ServerMetadata = documents::read(&server);
    let offers_dpop = documents::lists(&server_meta.dpop_signing_alg_values_supported, "ES256");
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
        save(server_url, &stored).await?;
        return Ok(stored);
    }
    let supports_s256 = documents::lists(&server_meta.code_challenge_methods_supported, "S256");
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
        server_meta.client_id_metadata_document_supported == Some(true),
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
        let registered: documents::Registration = documents::read(&doc);
        let Some(id) = registered.client_id else {
            return Err(Error::auth(format!(
                "the authorization server refused ferry's registration (HTTP {})",
                status.as_u16()
            ))
            .with_hint("set \"oauth\": {\"clientId\": \"...\"} for the server (ferry add NAME URL --client-id ID)"));
        };
        (
            id,
            registered.client_secret,
            registered
                .token_endpoint_auth_method
                .as_deref()
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
    let verifier = random_text(48)?;
    let state = random_text(16)?;
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
    let advertised = server_meta.authorization_response_iss_parameter_supported == Some(true);
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
    save(server_url, &stored).await?;
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
    let lock = TokenLock::wait(url).await?;
    // Another process may have refreshed while this one waited.
    let stored = lock.load().ok_or_else(|| Error::auth("not signed in"))?;
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
    lock.save(&renewed)?;
    drop(lock);
    Ok(renewed)
}
