//! `private_key_jwt` client authentication (RFC 7523, as SEP-1046 uses it for MCP machine
//! clients): a short-lived JWT the client signs with its own key, sent instead of a secret.
//! Keys are PKCS#8 PEM (EC P-256 for ES256, RSA for RS256), or PKCS#1 `RSA PRIVATE KEY`.

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
        let hint = "give \"oauth\".privateKey as PKCS#8 PEM text or the path of such a file (convert with: openssl pkcs8 -topk8 -nocrypt -in KEY)";
        let pem = if value.contains("-----BEGIN") {
            value.to_string()
        } else {
            let path = match value.strip_prefix("~/") {
                Some(rest) => crate::paths::home_dir().join(rest),
                None => std::path::PathBuf::from(value),
            };
            let meta = std::fs::metadata(&path).map_err(|e| {
                Error::usage(format!(
                    "cannot read the private key {}: {e}",
                    path.display()
                ))
                .with_hint(hint)
            })?;
            // A PEM key is a few kilobytes; anything far larger is not one.
            if meta.len() > 64 * 1024 {
                return Err(Error::usage(format!(
                    "{} is too large to be a private key",
                    path.display()
                ))
                .with_hint(hint));
            }
            std::fs::read_to_string(&path).map_err(|e| {
                Error::usage(format!(
                    "cannot read the private key {}: {e}",
                    path.display()
                ))
                .with_hint(hint)
            })?
        };
        let (label, der) = pem_block(&pem)
            .ok_or_else(|| Error::usage("\"oauth\".privateKey is not a PEM key").with_hint(hint))?;
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
        let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let header = json!({"alg": self.algorithm(), "typ": "JWT"});
        let claims = json!({
            "iss": client_id, "sub": client_id, "aud": audience,
            "iat": now, "exp": now + LIFETIME_SECS,
            "jti": super::oauth::random_text(16),
        });
        let input = format!(
            "{}.{}",
            encode(header.to_string().as_bytes()),
            encode(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let failed = |_| Error::auth("the client assertion could not be signed");
        let signature = match self {
            SigningKey::Es256(key) => key
                .sign(&rng, input.as_bytes())
                .map_err(failed)?
                .as_ref()
                .to_vec(),
            SigningKey::Rs256(key) => {
                let mut out = vec![0u8; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(failed)?;
                out
            }
        };
        Ok(format!("{input}.{}", encode(&signature)))
    }
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
