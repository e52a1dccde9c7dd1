//! Licences: `<payload>.<signature>`, both base64url; the payload is JSON
//! `{"tier", "licensee", "expires"}` (Unix seconds) signed with Ed25519. A licence verified
//! against `GEOMILL_LICENSE_PUBLIC_KEY` and not expired raises the tier; it is kept in the data
//! directory so it survives a restart.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{ED25519, UnparsedPublicKey};
use serde::{Deserialize, Serialize};

use super::config::Tier;

/// What a licence grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct License {
    pub tier: Tier,
    pub licensee: String,
    /// Unix seconds after which the licence no longer counts.
    pub expires: u64,
}

#[derive(Deserialize)]
struct Payload {
    tier: String,
    licensee: String,
    expires: u64,
}

/// The 32-byte Ed25519 public key in `text` (standard base64).
pub fn public_key(text: &str) -> Result<Vec<u8>, String> {
    let bytes = STANDARD.decode(text.trim()).map_err(|e| e.to_string())?;
    if bytes.len() != 32 {
        return Err(format!("{} bytes", bytes.len()));
    }
    Ok(bytes)
}

/// The licence in `token`, if `public_key` signed it; expiry is the caller's to check.
pub fn verify(token: &str, public_key: &[u8]) -> Result<License, String> {
    let (payload, signature) = token
        .trim()
        .split_once('.')
        .ok_or("a licence is <payload>.<signature>")?;
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|e| format!("signature is not base64url: {e}"))?;
    UnparsedPublicKey::new(&ED25519, public_key)
        .verify(payload.as_bytes(), &signature)
        .map_err(|_| "the signature does not match GEOMILL_LICENSE_PUBLIC_KEY")?;
    let json = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|e| format!("payload is not base64url: {e}"))?;
    let payload: Payload =
        serde_json::from_slice(&json).map_err(|e| format!("payload is not a licence: {e}"))?;
    let tier = <Tier as clap::ValueEnum>::from_str(&payload.tier, true)
        .map_err(|_| format!("unknown tier {:?}", payload.tier))?;
    Ok(License {
        tier,
        licensee: payload.licensee,
        expires: payload.expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{Ed25519KeyPair, KeyPair};

    #[test]
    fn signed_licences_verify_and_others_do_not() {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap_or_else(|_| unreachable!());
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap_or_else(|_| unreachable!());
        let payload =
            URL_SAFE_NO_PAD.encode(br#"{"tier":"pro","licensee":"Acme","expires":4000000000}"#);
        let signature = URL_SAFE_NO_PAD.encode(pair.sign(payload.as_bytes()).as_ref());
        let token = format!("{payload}.{signature}");
        let key = pair.public_key().as_ref();
        let license = verify(&token, key).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(license.tier, Tier::Pro);
        let tampered = token.replacen('e', "f", 1);
        assert!(verify(&tampered, key).is_err());
        assert!(verify("nonsense", key).is_err());
        assert!(public_key(&STANDARD.encode(key)).is_ok());
        assert!(public_key("c2hvcnQ=").is_err());
    }
}
