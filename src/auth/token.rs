//! Signed session tokens: a JWT (HS256) carried in an HttpOnly cookie after `POST /auth/login`
//! or an OIDC login. The server signs with `GEOMILL_SESSION_SECRET` (or a random secret drawn
//! at start) and checks the signature and the expiry on every request.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde::{Deserialize, Serialize};

use super::Role;

/// Name of the session cookie.
pub const COOKIE: &str = "geomill_session";

/// What a session token says about its holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The user's id (an API key's id, or `oidc:<subject>`).
    pub sub: String,
    pub name: String,
    pub role: Role,
    /// `api_key` or `oidc`.
    pub method: String,
    /// Issued at, Unix seconds.
    pub iat: u64,
    /// Expires at, Unix seconds.
    pub exp: u64,
}

/// Signs and checks tokens with one HMAC key.
pub struct Signer {
    key: hmac::Key,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer")
    }
}

const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

impl Signer {
    /// A signer with the configured secret, or 32 random bytes.
    pub fn new(secret: Option<&str>) -> Result<Self, ring::error::Unspecified> {
        let key = match secret {
            Some(secret) => hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()),
            None => hmac::Key::generate(hmac::HMAC_SHA256, &ring::rand::SystemRandom::new())?,
        };
        Ok(Self { key })
    }

    /// The compact JWT for `claims`.
    pub fn sign(&self, claims: &Claims) -> String {
        let payload = serde_json::to_vec(claims).unwrap_or_default();
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(HEADER),
            URL_SAFE_NO_PAD.encode(payload)
        );
        let tag = hmac::sign(&self.key, signed.as_bytes());
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    /// The claims of a token signed by this signer and not expired at `now` (Unix seconds).
    pub fn verify(&self, token: &str, now: u64) -> Option<Claims> {
        let (signed, tag) = token.rsplit_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        hmac::verify(&self.key, signed.as_bytes(), &tag).ok()?;
        let (header, payload) = signed.split_once('.')?;
        if URL_SAFE_NO_PAD.decode(header).ok()? != HEADER.as_bytes() {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (claims.exp > now).then_some(claims)
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A `Set-Cookie` value for `path`: HttpOnly, SameSite=Lax (sent on top-level navigation back
/// from an identity provider, never on cross-site POSTs), Secure when `secure`.
pub fn set_cookie(name: &str, value: &str, path: &str, max_age_s: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; Max-Age={max_age_s}; HttpOnly; SameSite=Lax{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: u64) -> Claims {
        Claims {
            sub: "key-1".into(),
            name: "ana".into(),
            role: Role::Editor,
            method: "api_key".into(),
            iat: 1,
            exp,
        }
    }

    #[test]
    fn tokens_verify_until_they_expire_and_not_when_touched() {
        let signer = Signer::new(Some("0123456789abcdef0123456789abcdef"))
            .unwrap_or_else(|_| unreachable!());
        let token = signer.sign(&claims(100));
        assert_eq!(signer.verify(&token, 99), Some(claims(100)));
        assert_eq!(signer.verify(&token, 100), None);
        let other = Signer::new(None).unwrap_or_else(|_| unreachable!());
        assert_eq!(other.verify(&token, 0), None);
        let mut parts: Vec<&str> = token.split('.').collect();
        let admin = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Claims {
                role: Role::Admin,
                ..claims(100)
            })
            .unwrap_or_default(),
        );
        parts[1] = &admin;
        assert_eq!(signer.verify(&parts.join("."), 0), None);
    }

    #[test]
    fn cookies_are_found_by_name() {
        assert_eq!(
            cookie_value("a=1; geomill_session=xyz; b=2", COOKIE),
            Some("xyz")
        );
        assert_eq!(cookie_value("geomill_sessionx=1", COOKIE), None);
        assert!(
            set_cookie(COOKIE, "v", "/", 60, true)
                .contains("Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure")
        );
    }
}
