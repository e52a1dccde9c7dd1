//! The authentication, tier and rate-limit settings (`GEOMILL_API_KEYS`, `GEOMILL_TIER`,
//! `GEOMILL_RATE_LIMIT`, ...), checked at start like the rest of the configuration.

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::keys::{KeyRing, KeysError};
use super::rate_limit::Storage;

/// Where the server runs: production closes what development leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Environment {
    #[default]
    Development,
    Production,
}

/// The licensed tier: which endpoint groups are served.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    ValueEnum,
    Serialize,
    Default,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The free tier.
    #[default]
    Community,
    /// Triggers, sessions, projects, schedules, billing.
    Pro,
    /// Pro plus OIDC single sign-on.
    Enterprise,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Community => "community",
            Self::Pro => "pro",
            Self::Enterprise => "enterprise",
        }
    }
}

/// Authentication, tier and rate-limit settings. Every field has a flag and a `GEOMILL_*`
/// variable, like the rest of the configuration.
#[derive(Debug, Clone, Args, Default)]
pub struct AuthConfig {
    /// Accepted API keys, comma-separated. An entry is `KEY` (role admin) or `NAME:ROLE:KEY`
    /// with ROLE one of viewer, editor, admin. Unset (with GEOMILL_API_KEY unset): open API.
    #[arg(long, env = "GEOMILL_API_KEYS", hide_env_values = true)]
    pub api_keys: Option<String>,
    /// One accepted API key (older form of GEOMILL_API_KEYS; both may be set).
    #[arg(long, env = "GEOMILL_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// `production` closes the SQL and admin routes when GEOMILL_ADMIN_KEY is unset, and marks
    /// session cookies Secure.
    #[arg(long = "environment", env = "GEOMILL_ENV", value_enum, default_value_t = Environment::Development)]
    pub environment: Environment,
    /// The licensed tier (a licence sent to POST /admin/license may raise it).
    #[arg(long, env = "GEOMILL_TIER", value_enum, default_value_t = Tier::Community)]
    pub tier: Tier,
    /// Ed25519 public key (base64, 32 bytes) that licences must be signed with.
    #[arg(long, env = "GEOMILL_LICENSE_PUBLIC_KEY")]
    pub license_public_key: Option<String>,
    /// Requests per minute per API key (per address when anonymous); 0 turns the limit off.
    #[arg(long, env = "GEOMILL_RATE_LIMIT", default_value_t = 300)]
    pub rate_limit: u32,
    /// Requests per minute per API key (per address when anonymous) to the published reads:
    /// OGC API Features, vector tiles and map pages (GETs under /ogc, example tiles), counted
    /// apart from the rest; 0 turns this limit off.
    #[arg(long, env = "GEOMILL_RATE_LIMIT_READS", default_value_t = 6_000)]
    pub rate_limit_reads: u32,
    /// Where rate-limit counters live: `memory://` (this process) or a `redis://host:port` URL
    /// (shared by every server using it).
    #[arg(long, env = "GEOMILL_RATE_LIMIT_STORAGE", default_value = "memory://")]
    pub rate_limit_storage: String,
    /// Secret that signs session cookies (unset: a random one, so sessions end at restart).
    #[arg(long, env = "GEOMILL_SESSION_SECRET", hide_env_values = true)]
    pub session_secret: Option<String>,
    /// Lifetime of a login session, in seconds.
    #[arg(long, env = "GEOMILL_SESSION_TTL_S", default_value_t = 28_800)]
    pub session_ttl_s: u64,
    /// OIDC issuer URL (enables single sign-on, Enterprise tier).
    #[arg(long, env = "GEOMILL_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// OIDC client id registered with the issuer.
    #[arg(long, env = "GEOMILL_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// OIDC client secret.
    #[arg(long, env = "GEOMILL_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,
    /// Role given to users who log in through OIDC.
    #[arg(long, env = "GEOMILL_OIDC_ROLE", default_value = "viewer")]
    pub oidc_role: String,
    /// The address clients reach this server at (for the OIDC redirect URI), e.g.
    /// `https://gis.example.org`; default `http://localhost:<port>`.
    #[arg(long, env = "GEOMILL_PUBLIC_URL")]
    pub public_url: Option<String>,
}

/// An authentication setting that cannot work, named with its variable.
#[derive(Debug, thiserror::Error)]
pub enum AuthConfigError {
    #[error(transparent)]
    Keys(#[from] KeysError),
    #[error("GEOMILL_RATE_LIMIT_STORAGE must be memory:// or redis://host[:port], got {0:?}")]
    BadStorage(String),
    #[error("GEOMILL_LICENSE_PUBLIC_KEY must be 32 bytes of base64: {0}")]
    BadLicenseKey(String),
    #[error("GEOMILL_SESSION_SECRET must have at least 32 characters")]
    ShortSessionSecret,
    #[error(
        "OIDC needs GEOMILL_OIDC_ISSUER, GEOMILL_OIDC_CLIENT_ID and GEOMILL_OIDC_CLIENT_SECRET together"
    )]
    PartialOidc,
    #[error("GEOMILL_OIDC_ROLE must be viewer, editor or admin, got {0:?}")]
    BadOidcRole(String),
}

impl AuthConfig {
    /// The default with no key, community tier and the default rate limit (the clap defaults).
    pub fn open() -> Self {
        Self {
            rate_limit: 300,
            rate_limit_reads: 6_000,
            rate_limit_storage: "memory://".into(),
            session_ttl_s: 28_800,
            oidc_role: "viewer".into(),
            ..Self::default()
        }
    }

    /// The accepted keys.
    pub fn key_ring(&self) -> Result<KeyRing, KeysError> {
        KeyRing::parse(self.api_keys.as_deref(), self.api_key.as_deref())
    }

    pub fn storage(&self) -> Result<Storage, AuthConfigError> {
        Storage::parse(&self.rate_limit_storage)
            .ok_or_else(|| AuthConfigError::BadStorage(self.rate_limit_storage.clone()))
    }

    /// Checks every setting; nothing is opened.
    pub fn validate(&self) -> Result<(), AuthConfigError> {
        self.key_ring()?;
        self.storage()?;
        if let Some(key) = &self.license_public_key {
            super::license::public_key(key).map_err(AuthConfigError::BadLicenseKey)?;
        }
        if self.session_secret.as_ref().is_some_and(|s| s.len() < 32) {
            return Err(AuthConfigError::ShortSessionSecret);
        }
        let oidc = [
            &self.oidc_issuer,
            &self.oidc_client_id,
            &self.oidc_client_secret,
        ];
        let set = oidc.iter().filter(|v| v.is_some()).count();
        if set != 0 && set != oidc.len() {
            return Err(AuthConfigError::PartialOidc);
        }
        if super::Role::parse(&self.oidc_role).is_none() {
            return Err(AuthConfigError::BadOidcRole(self.oidc_role.clone()));
        }
        Ok(())
    }
}
