//! Who is calling and what they may do: API keys and session cookies identify the caller,
//! roles and tiers decide what they may call ([`policy`]), and a rate limiter counts requests.
//! One middleware ([`guard`]) applies all of it to every route.

pub mod cache_control;
pub mod config;
pub mod guard;
pub mod keys;
pub mod license;
pub mod oidc;
pub mod openapi;
pub mod policy;
pub mod rate_limit;
pub mod secrets;
pub mod token;

use std::sync::RwLock;

use serde::{Deserialize, Serialize};

use config::{AuthConfig, Tier};
use keys::KeyRing;
use license::License;
use rate_limit::RateLimiter;
use token::Signer;

/// What a caller may do; each role includes the ones before it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads: datasets, features, rules, jobs, OGC API; validations and previews.
    Viewer,
    /// Viewer, plus uploads, runs, jobs and every other write.
    Editor,
    /// Editor, plus the admin routes.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "viewer" => Some(Self::Viewer),
            "editor" => Some(Self::Editor),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

/// The caller of a request, as the guard identified it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Principal {
    /// Stable id: an API key's `key-…` id, `oidc:<subject>`, or `anonymous` on an open API.
    pub id: String,
    pub name: String,
    pub role: Role,
    /// `api_key`, `session` (a cookie from a login), or `none` on an open API.
    pub method: String,
    /// When the login session ends (sessions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

impl Principal {
    /// The caller on an API without keys: may do everything.
    pub fn anonymous() -> Self {
        Self {
            id: "anonymous".into(),
            name: "anonymous".into(),
            role: Role::Admin,
            method: "none".into(),
            expires_at: None,
        }
    }
}

/// Authentication state shared by every request.
#[derive(Debug)]
pub struct AuthState {
    pub keys: KeyRing,
    pub signer: Signer,
    pub limiter: RateLimiter,
    /// The budget of the published reads (see [`policy::Requirement::published_read`]).
    pub read_limiter: RateLimiter,
    license_key: Option<Vec<u8>>,
    license: RwLock<Option<License>>,
    license_path: std::path::PathBuf,
    /// Single sign-on, when GEOMILL_OIDC_* are set.
    pub oidc: Option<oidc::Oidc>,
}

/// Why authentication could not start.
#[derive(Debug, thiserror::Error)]
pub enum AuthStartError {
    #[error(transparent)]
    Config(#[from] config::AuthConfigError),
    #[error("cannot use GEOMILL_RATE_LIMIT_STORAGE: {0}")]
    Storage(#[from] redis::RedisError),
    #[error("cannot draw a random session secret")]
    Random,
    #[error("cannot set up OIDC: {0}")]
    Oidc(String),
}

impl AuthState {
    /// Opens what the configuration names; a licence saved earlier in `data_dir` is read back
    /// (and ignored with a warning when it no longer verifies).
    pub fn open(
        config: &AuthConfig,
        data_dir: &std::path::Path,
        port: u16,
    ) -> Result<Self, AuthStartError> {
        let keys = config.key_ring().map_err(config::AuthConfigError::from)?;
        let signer =
            Signer::new(config.session_secret.as_deref()).map_err(|_| AuthStartError::Random)?;
        let limiter = RateLimiter::new(config.rate_limit, &config.storage()?)?;
        let read_limiter = RateLimiter::new(config.rate_limit_reads, &config.storage()?)?;
        let license_key = config
            .license_public_key
            .as_deref()
            .map(license::public_key)
            .transpose()
            .map_err(config::AuthConfigError::BadLicenseKey)?;
        let license_path = data_dir.join("license.txt");
        let saved = std::fs::read_to_string(&license_path).ok();
        let license = match (saved, &license_key) {
            (Some(text), Some(key)) => match license::verify(&text, key) {
                Ok(license) => Some(license),
                Err(reason) => {
                    tracing::warn!(%reason, "the saved licence does not verify; ignored");
                    None
                }
            },
            _ => None,
        };
        let oidc = oidc::Oidc::from_config(config, port)
            .transpose()
            .map_err(AuthStartError::Oidc)?;
        if !keys.is_enabled() && oidc.is_none() {
            tracing::warn!(
                "no API keys configured (GEOMILL_API_KEYS): the API is open to anyone who can reach it"
            );
        }
        Ok(Self {
            oidc,
            keys,
            signer,
            limiter,
            read_limiter,
            license_key,
            license: RwLock::new(license),
            license_path,
        })
    }

    /// Whether callers must authenticate (keys or single sign-on configured); otherwise the
    /// API is open.
    pub fn is_closed(&self) -> bool {
        self.keys.is_enabled() || self.oidc.is_some()
    }

    /// The tier in force: the configured one, or a higher one from an unexpired licence.
    /// Asked on every request: reads the licence in place.
    pub fn tier(&self, configured: Tier) -> Tier {
        let now = crate::timestamp::unix_seconds();
        let license = self
            .license
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match license.as_ref() {
            Some(l) if l.expires > now => l.tier.max(configured),
            _ => configured,
        }
    }

    /// Verifies `token`, saves it for the next start, and makes it the licence in force.
    pub fn install_license(&self, token: &str) -> Result<License, String> {
        let key = self
            .license_key
            .as_deref()
            .ok_or("this server has no licence key to verify with (GEOMILL_LICENSE_PUBLIC_KEY)")?;
        let license = license::verify(token, key)?;
        if license.expires <= crate::timestamp::unix_seconds() {
            return Err(format!(
                "the licence expired at {}",
                crate::timestamp::from_unix_seconds(license.expires)
            ));
        }
        std::fs::write(&self.license_path, token.trim())
            .map_err(|e| format!("cannot save the licence: {e}"))?;
        *self
            .license
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(license.clone());
        Ok(license)
    }
}
