//! The JWTs ferry signs for OAuth:
//! - `private_key_jwt` client authentication (RFC 7523, as SEP-1046 uses it for MCP machine
//!   clients): a short-lived JWT the client signs with its own key, sent instead of a secret.
//!   Keys are PKCS#8 PEM (EC P-256 for ES256, RSA for RS256), or PKCS#1 `RSA PRIVATE KEY`.
//! - DPoP proofs (RFC 9449, SEP-1932): a fresh JWT per HTTP request, signed with a key made
//!   at sign-in, that binds the access token to this client.

use crate::{Error, Result};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use serde_json::json;

/// How long an assertion is valid: the token request follows at once.
const LIFETIME_SECS: u64 = 300;

/// A key that signs client assertions.
pub enum SigningKey {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    // Never shows the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SigningKey::Es256(_) => "SigningKey(ES256)",
            SigningKey::Rs256(_) => "SigningKey(RS256)",
        })
    }
}

impl SigningKey {
    /// Reads `"oauth".privateKey`: the PEM text itself (usually from `${VAR}`), or the path of
    /// a PEM file (`~/` allowed).
    pub fn from_config(value: &str) -> Result<SigningKey> {
        let hint = "give \"oauth\".privateKey as PKCS#8 PEM text or the absolute path of such a file (convert with: openssl pkcs8 -topk8 -nocrypt -in KEY)";
        // CI secrets often carry a PEM with its line breaks written as `\n`.
        let pem = if value.contains("-----BEGIN") {
            value.replace("\\n", "\n")
        } else {
            read_key_file(value, hint)?
        };
        let (label, der) = pem_block(&pem)
            .ok_or_else(|| Error::usage("\"oauth\".privateKey is not a PEM key").with_hint(hint))?;
        match label.as_str() {
            "ENCRYPTED PRIVATE KEY" => {
                return Err(Error::usage(
                    "\"oauth\".privateKey is encrypted, which ferry cannot use",
                )
                .with_hint("decrypt it: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pem"))
            }
            "EC PRIVATE KEY" => {
                return Err(Error::usage(
                    "\"oauth\".privateKey is an EC key in SEC1 form; ferry reads PKCS#8",
                )
                .with_hint("convert it: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pem"))
            }
            _ => {}
        }
        let rng = SystemRandom::new();
        let key = match label.as_str() {
            "PRIVATE KEY" => {
                EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
                    .map(SigningKey::Es256)
                    .or_else(|_| RsaKeyPair::from_pkcs8(&der).map(SigningKey::Rs256))
                    .ok()
            }
            "RSA PRIVATE KEY" => RsaKeyPair::from_der(&der).map(SigningKey::Rs256).ok(),
            _ => None,
        };
        key.ok_or_else(|| {
            Error::usage(format!(
                "\"oauth\".privateKey ({label}) is neither an EC P-256 nor an RSA key ferry can use"
            ))
            .with_hint(hint)
        })
    }

    fn algorithm(&self) -> &'static str {
        match self {
            SigningKey::Es256(_) => "ES256",
            SigningKey::Rs256(_) => "RS256",
        }
    }

    /// A signed assertion that `client_id` is calling the authorization server `audience`
    /// (its issuer identifier).
    pub fn assertion(&self, client_id: &str, audience: &str, now: u64) -> Result<String> {
        let header = json!({"alg": self.algorithm(), "typ": "JWT"});
        let claims = json!({
            "iss": client_id, "sub": client_id, "aud": audience,
            "iat": now, "exp": now + LIFETIME_SECS,
            "jti": super::random_text(16)?,
        });
        compact_jws(&header, &claims, |input| {
            let rng = SystemRandom::new();
            match self {
                SigningKey::Es256(key) => key.sign(&rng, input).ok().map(|s| s.as_ref().to_vec()),
                SigningKey::Rs256(key) => {
                    let mut out = vec![0u8; key.public().modulus_len()];
                    key.sign(&signature::RSA_PKCS1_SHA256, &rng, input, &mut out)
                        .ok()
                        .map(|_| out)
                }
            }
        })
        .ok_or_else(|| Error::auth("the client assertion could not be signed"))
    }
}

/// The P-256 key a DPoP-bound token is tied to, made at sign-in and kept with the token.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(ES256)")
    }
}

impl DpopKey {
    /// A new key.
    pub fn generate() -> Result<DpopKey> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| Error::auth("could not make a DPoP key"))?;
        DpopKey::from_pkcs8(pkcs8.as_ref())
    }

    /// The key as stored (PKCS#8, base64).
    pub fn to_text(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.pkcs8)
    }

    pub fn from_text(text: &str) -> Option<DpopKey> {
        let der = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        DpopKey::from_pkcs8(&der).ok()
    }

    fn from_pkcs8(der: &[u8]) -> Result<DpopKey> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            der,
            &SystemRandom::new(),
        )
        .map_err(|_| Error::auth("the stored DPoP key is unreadable; sign in again"))?;
        Ok(DpopKey {
            pair,
            pkcs8: der.to_vec(),
        })
    }

    /// A proof for one request: `method` to `url` (its query and fragment left out), with the
    /// server's `nonce` if it asked for one, and the hash of the `access_token` it carries.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
        now: u64,
    ) -> Result<String> {
        use ring::signature::KeyPair;
        let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        // An uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = self.pair.public_key().as_ref();
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": encode(&point[1..33]), "y": encode(&point[33..65])});
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": super::random_text(16)?, "htm": method, "htu": htu, "iat": now,
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        if let Some(token) = access_token {
            let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
            claims["ath"] = json!(encode(digest.as_ref()));
        }
        compact_jws(&header, &claims, |input| {
            let signature = self.pair.sign(&SystemRandom::new(), input).ok()?;
            Some(signature.as_ref().to_vec())
        })
        .ok_or_else(|| Error::auth("the DPoP proof could not be signed"))
    }
}

/// A JWT in compact form: header and claims base64url-encoded, joined by a dot, and the
/// signature `sign` makes of that; `None` when it cannot sign.
fn compact_jws(
    header: &serde_json::Value,
    claims: &serde_json::Value,
    sign: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
) -> Option<String> {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let input = format!(
        "{}.{}",
        encode(header.to_string().as_bytes()),
        encode(claims.to_string().as_bytes())
    );
    let signature = sign(input.as_bytes())?;
    Some(format!("{input}.{}", encode(&signature)))
}

/// Reads a key file named by the config: an absolute or `~/` path to a regular file of at most
/// 64 KiB. The value itself is never shown unless it looks like a path (it may be a key pasted
/// without its PEM lines).
fn read_key_file(value: &str, hint: &str) -> Result<String> {
    use std::io::Read;
    const LIMIT: u64 = 64 * 1024;
    let looks_like_path = value.len() < 1024
        && (value.starts_with('/') || value.starts_with("~/") || value.starts_with('.'))
        && !value.contains(char::is_whitespace);
    let shown = if looks_like_path {
        value.to_string()
    } else {
        "(the value of \"oauth\".privateKey, not shown: it is neither PEM text nor a path)".into()
    };
    let path = match value.strip_prefix("~/") {
        Some(rest) => crate::paths::home_dir().join(rest),
        None => std::path::PathBuf::from(value),
    };
    if !path.is_absolute() {
        // The daemon and the caller run in different directories: a relative path would mean
        // two different files.
        return Err(Error::usage(format!(
            "the private key file {shown} is not an absolute path"
        ))
        .with_hint(hint));
    }
    let cannot = |why: String| {
        Error::usage(format!("cannot read the private key {shown}: {why}")).with_hint(hint)
    };
    // A device or a FIFO would never end (or never open): only regular files are read.
    let meta = std::fs::metadata(&path).map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() {
        return Err(cannot("not a regular file".into()));
    }
    if meta.len() > LIMIT {
        return Err(cannot("too large to be a private key".into()));
    }
    let mut text = String::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(LIMIT + 1).read_to_string(&mut text))
        .map_err(|e| cannot(e.to_string()))?;
    Ok(text)
}

/// The label and bytes of the first PEM block in `text`.
fn pem_block(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let after = &text[start + "-----BEGIN ".len()..];
    let label_end = after.find("-----")?;
    let label = after[..label_end].to_string();
    let body_start = label_end + 5;
    let end = after.find(&format!("-----END {label}-----"))?;
    let body: String = after
        .get(body_start..end)?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .ok()?;
    Some((label, der))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 PKCS#8 key made with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgK/et0kiH7P3bouAv
DH5DpjOJOeINByFo/RuboiF4JYuhRANCAAQB78M5PhGxE3Z1E8VWFAdDdBtnXbWH
DXqW1rtB6DCa0ayMlPJ//GRD/AvlxEAyZFRiZPup3QNJwJFh1STfk6EN
-----END PRIVATE KEY-----
";

    #[test]
    fn an_es256_assertion_has_the_claims_and_a_64_byte_signature() {
        let key = SigningKey::from_config(EC_KEY).unwrap();
        let jwt = key
            .assertion("client-1", "https://auth.example", 1000)
            .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |p: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap()
        };
        let header: serde_json::Value = serde_json::from_slice(&decode(parts[0])).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value = serde_json::from_slice(&decode(parts[1])).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://auth.example");
        assert_eq!(claims["exp"], 1300);
        let signature = decode(parts[2]);
        assert_eq!(signature.len(), 64);
        // It verifies with the key's public half.
        let SigningKey::Es256(pair) = &key else {
            panic!("an EC key")
        };
        use ring::signature::KeyPair;
        let public = signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_FIXED,
            pair.public_key().as_ref(),
        );
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(public.verify(input.as_bytes(), &signature).is_ok());
    }

    #[test]
    fn a_dpop_proof_carries_its_key_binds_the_token_and_survives_storage() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_text(&key.to_text()).unwrap();
        let proof = again
            .proof(
                "POST",
                "https://mcp.example/mcp?x=1",
                Some("n1"),
                Some("tok"),
                7,
            )
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        let decode = |p: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap()
        };
        let header: serde_json::Value = serde_json::from_slice(&decode(parts[0])).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        let claims: serde_json::Value = serde_json::from_slice(&decode(parts[1])).unwrap();
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n1");
        let ath = ring::digest::digest(&ring::digest::SHA256, b"tok");
        assert_eq!(
            claims["ath"],
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(ath.as_ref())
        );
        // The signature verifies with the public key the header carries.
        let x = decode(header["jwk"]["x"].as_str().unwrap());
        let y = decode(header["jwk"]["y"].as_str().unwrap());
        let mut point = vec![4u8];
        point.extend(x);
        point.extend(y);
        let public = signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point);
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(public.verify(input.as_bytes(), &decode(parts[2])).is_ok());
        // Each proof is fresh.
        let other = again
            .proof("POST", "https://mcp.example/mcp", None, None, 7)
            .unwrap();
        assert_ne!(proof.split('.').nth(1), other.split('.').nth(1));
    }

    #[test]
    fn key_files_are_read_safely_and_pasted_keys_never_shown() {
        // A device or a FIFO would never end: refused before reading.
        let error = SigningKey::from_config("/dev/zero").unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        let fifo = std::env::temp_dir().join(format!("ferry-key-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let error = SigningKey::from_config(fifo.to_str().unwrap()).unwrap_err();
            assert!(error.to_string().contains("not a regular file"), "{error}");
            let _ = std::fs::remove_file(&fifo);
        }
        // A relative path would name different files for the daemon and its caller.
        let error = SigningKey::from_config("keys/ec.pem").unwrap_err();
        assert!(
            error.to_string().contains("not an absolute path"),
            "{error}"
        );
        // A key pasted without its PEM lines is not echoed back.
        let body: String = EC_KEY.lines().filter(|l| !l.starts_with("-----")).collect();
        let error = SigningKey::from_config(&body).unwrap_err().to_string();
        assert!(!error.contains(&body[..20]), "{error}");
        // Line breaks written as \n, as CI secrets often carry them, are read as breaks.
        assert!(SigningKey::from_config(&EC_KEY.replace('\n', "\\n")).is_ok());
        // SEC1 and encrypted keys say how to convert them.
        let sec1 = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n";
        let error = SigningKey::from_config(sec1).unwrap_err();
        assert!(error.to_string().contains("SEC1"), "{error}");
    }

    #[test]
    fn what_is_not_a_key_is_refused_with_a_hint() {
        for bad in [
            "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
            "-----BEGIN CERTIFICATE-----\nbm90IGEga2V5\n-----END CERTIFICATE-----\n",
            "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
            "/nonexistent/key.pem",
        ] {
            let error = SigningKey::from_config(bad).unwrap_err();
            assert!(
                error.to_string().contains("privateKey") || error.to_string().contains("key"),
                "{error}"
            );
        }
    }
}
