//! Signing in to remote MCP servers: OAuth 2.1, as the 2025-11-25 and 2026-07-28 revisions
//! specify: protected resource metadata (RFC 9728) from the 401 challenge or the well-known
//! paths, authorization server metadata (RFC 8414, then OpenID discovery) checked against its
//! issuer, a client from the config, a Client ID Metadata Document, or dynamic registration
//! (RFC 7591), PKCE S256, the `resource` indicator (RFC 8707) sent exactly as the metadata
//! gives it, scopes from the challenge, `iss` checked (RFC 9207), refresh, step-up on 403
//! `insufficient_scope`, and client credentials for machines.
//!
//! A client may also prove itself with a signed assertion (`private_key_jwt`, `jwt`), and
//! tokens are bound to a key (DPoP, RFC 9449) when the authorization server offers it.
//!
//! Tokens live in `~/.config/ferry/auth/` (0700), one file per server URL (0600), refreshed
//! before they expire. Every rewrite of a token file (a sign-in, a refresh, a noted refusal)
//! holds the file's lock (`store::TokenLock`), so one refresh runs at a time across
//! processes and nothing puts back a refresh token the server has rotated. Tokens are never
//! printed: not in logs, errors or `--json` output.
//!
//! Files: `sign_in` (the flows, the bearer a request carries, refresh), `discovery` (the
//! metadata documents), `token` (the token endpoint), `store` (token files and their lock),
//! `config` (the `"oauth"` block and `WWW-Authenticate` challenges), `browser` (the loopback
//! redirect), `jwt` (signing keys and DPoP proofs).
//!
//! The HTTP transport calls this module through a small interface ([`bearer`], [`refresh`],
//! [`sign_in`] for client credentials, [`remember`], [`note_refusal`]); `ferry auth` signs in,
//! lists and forgets. Nothing here knows about MCP messages.

mod browser;
mod config;
mod discovery;
mod documents;
pub mod jwt;
mod sign_in;
mod store;
mod token;

pub use browser::Browser;
pub use config::{AuthMethod, Challenge, Grant, OAuthConfig, OAuthConfigError};
pub use sign_in::{bearer, refresh, sign_in};
pub use store::{
    auth_dir, forget, load, note_refusal, remember, remembered, save, token_file, Credential,
    Stored,
};

use browser::*;
use discovery::*;
use jwt::{DpopKey, SigningKey};
use store::*;
use token::*;

use crate::{Error, Result};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `bytes` random bytes as base64url text (a PKCE verifier, a `state`, a `jti`); an error
/// when the system's random source fails, never a predictable value.
pub(crate) fn random_text(bytes: usize) -> Result<String> {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| Error::auth("the system's random source failed; nothing was sent"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
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
        let written = serde_json::to_vec(&stored).unwrap();
        assert_eq!(Stored::parse(&written), Some(stored.clone()));
        // The keys as written before the type was derived.
        let earlier = json!({"issuer": "https://auth.example", "resource": "https://mcp.example/mcp",
            "tokenEndpoint": "https://auth.example/token", "clientId": "ferry", "clientSecret": "s",
            "authMethod": "client_secret_post", "accessToken": "a", "refreshToken": "r",
            "expiresAt": 42, "scope": "read", "wantedScope": null, "dpopKey": null});
        assert_eq!(serde_json::to_value(&stored).unwrap(), earlier);
        assert_eq!(Stored::parse(br#"{"accessToken": "a"}"#), None);
        let bare = Stored::parse(br#"{"issuer": "i"}"#).unwrap();
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
            .to_string()
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
