//! OpenID Connect single sign-on (authorization code flow with PKCE S256, state and nonce):
//! the provider is discovered on first use (so the server starts while it is down), each login
//! keeps its secrets server-side until its callback (single use, ten minutes), and a verified
//! ID token becomes a user with a role.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType,
    CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
    CoreProviderMetadata, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AccessTokenHash, AdditionalClaims, AuthorizationCode, Client, ClientId, ClientSecret,
    CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet, EndpointSet, IdTokenFields,
    IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    RequestTokenError, Scope, StandardErrorResponse, StandardTokenResponse, TokenResponse,
};
use serde::{Deserialize, Serialize};

use super::Role;
use super::config::AuthConfig;

/// How long a started login waits for its callback.
const PENDING_TTL: Duration = Duration::from_secs(600);
/// Started logins kept at most (older ones are dropped first when expired).
const MAX_PENDING: usize = 10_000;

/// Claims beyond the standard ones: a `roles` claim may name a geomill role.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExtraClaims {
    /// A string or a list; anything else is ignored.
    #[serde(default)]
    pub roles: serde_json::Value,
}
impl AdditionalClaims for ExtraClaims {}

type IdFields = IdTokenFields<
    ExtraClaims,
    EmptyExtraTokenFields,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

/// `CoreClient` with [`ExtraClaims`], in the state discovery plus a redirect URI leaves it.
type SsoClient = Client<
    ExtraClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    StandardTokenResponse<IdFields, CoreTokenType>,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why a login failed; [`LoginError::provider_fault`] tells the provider's faults (502) from
/// the login's (401).
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("the OIDC provider cannot be used: {0}")]
    Provider(String),
    #[error("the login was refused: {0}")]
    Refused(String),
    #[error("unknown, used or expired login: start again at /auth/oidc/login")]
    UnknownLogin,
}

impl LoginError {
    pub fn provider_fault(&self) -> bool {
        matches!(self, Self::Provider(_))
    }
}

/// The secrets of a started login, kept until its callback.
struct Pending {
    nonce: String,
    pkce_verifier: String,
    started: Instant,
}

/// A user who logged in through the provider.
#[derive(Debug, Clone, Serialize)]
pub struct OidcUser {
    /// `oidc:<subject>`.
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// The single sign-on of one server.
pub struct Oidc {
    issuer: String,
    client_id: String,
    client_secret: String,
    redirect_uri: String,
    default_role: Role,
    http: reqwest::Client,
    client: tokio::sync::OnceCell<SsoClient>,
    pending: Mutex<HashMap<String, Pending>>,
    users: Mutex<BTreeMap<String, OidcUser>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The highest geomill role named by a `roles` claim (a string or a list of strings).
fn role_from_claim(claim: &serde_json::Value) -> Option<Role> {
    let names: Vec<&str> = match claim {
        serde_json::Value::String(one) => vec![one.as_str()],
        serde_json::Value::Array(many) => many.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    names.into_iter().filter_map(Role::parse).max()
}

impl Oidc {
    /// The sign-on configured in `config`, if any; `port` makes the default redirect URI.
    pub fn from_config(config: &AuthConfig, port: u16) -> Option<Result<Self, String>> {
        let (issuer, client_id, client_secret) = (
            config.oidc_issuer.clone()?,
            config.oidc_client_id.clone()?,
            config.oidc_client_secret.clone()?,
        );
        let base = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://localhost:{port}"));
        let built = reqwest::Client::builder()
            // No redirects: the provider's endpoints are fetched as discovered, nothing else.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())
            .map(|http| Self {
                issuer: issuer.trim_end_matches('/').to_owned(),
                client_id,
                client_secret,
                redirect_uri: format!("{}/auth/oidc/callback", base.trim_end_matches('/')),
                default_role: Role::parse(&config.oidc_role).unwrap_or(Role::Viewer),
                http,
                client: tokio::sync::OnceCell::new(),
                pending: Mutex::new(HashMap::new()),
                users: Mutex::new(BTreeMap::new()),
            });
        Some(built)
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The discovered client; discovery is retried on the next login when it fails.
    async fn client(&self) -> Result<&SsoClient, LoginError> {
        self.client
            .get_or_try_init(|| async {
                let issuer = IssuerUrl::new(self.issuer.clone())
                    .map_err(|e| LoginError::Provider(format!("issuer URL: {e}")))?;
                let redirect = RedirectUrl::new(self.redirect_uri.clone())
                    .map_err(|e| LoginError::Provider(format!("redirect URL: {e}")))?;
                let metadata = CoreProviderMetadata::discover_async(issuer, &self.http)
                    .await
                    .map_err(|e| LoginError::Provider(format!("discovery failed: {e}")))?;
                Ok(SsoClient::from_provider_metadata(
                    metadata,
                    ClientId::new(self.client_id.clone()),
                    Some(ClientSecret::new(self.client_secret.clone())),
                )
                .set_redirect_uri(redirect))
            })
            .await
    }

    /// Starts a login: the provider URL to send the browser to, and the login's state (which
    /// the browser keeps in a cookie to prove the callback is its own).
    pub async fn start(&self) -> Result<(String, String), LoginError> {
        let client = self.client().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        let mut pending = lock(&self.pending);
        pending.retain(|_, p| p.started.elapsed() < PENDING_TTL);
        if pending.len() >= MAX_PENDING {
            return Err(LoginError::Provider(
                "too many logins in progress; try again in a few minutes".into(),
            ));
        }
        pending.insert(
            state.secret().clone(),
            Pending {
                nonce: nonce.secret().clone(),
                pkce_verifier: verifier.secret().clone(),
                started: Instant::now(),
            },
        );
        Ok((url.to_string(), state.secret().clone()))
    }

    /// Finishes the login `state` with the provider's `code`: exchanges it (with the PKCE
    /// verifier), verifies the ID token (signature, issuer, audience, expiry, nonce, at_hash).
    pub async fn finish(&self, state: &str, code: &str) -> Result<OidcUser, LoginError> {
        let pending = lock(&self.pending)
            .remove(state)
            .filter(|p| p.started.elapsed() < PENDING_TTL)
            .ok_or(LoginError::UnknownLogin)?;
        let client = self.client().await?;
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| LoginError::Provider(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                RequestTokenError::ServerResponse(answer) => {
                    LoginError::Refused(answer.to_string())
                }
                other => LoginError::Provider(format!("token request failed: {other}")),
            })?;
        let id_token = token
            .id_token()
            .ok_or_else(|| LoginError::Provider("the token answer has no ID token".into()))?;
        let verifier = client.id_token_verifier();
        let claims = id_token
            .claims(&verifier, &Nonce::new(pending.nonce))
            .map_err(|e| LoginError::Refused(format!("ID token: {e}")))?;
        if let Some(expected) = claims.access_token_hash() {
            let algorithm = id_token
                .signing_alg()
                .map_err(|e| LoginError::Refused(e.to_string()))?;
            let key = id_token
                .signing_key(&verifier)
                .map_err(|e| LoginError::Refused(e.to_string()))?;
            let actual = AccessTokenHash::from_token(token.access_token(), algorithm, key)
                .map_err(|e| LoginError::Refused(e.to_string()))?;
            if actual != *expected {
                return Err(LoginError::Refused(
                    "the ID token's at_hash does not match its access token".into(),
                ));
            }
        }
        let subject = claims.subject().to_string();
        let name = claims
            .preferred_username()
            .map(|u| u.to_string())
            .or_else(|| claims.email().map(|e| e.to_string()))
            .unwrap_or_else(|| subject.clone());
        let user = OidcUser {
            id: format!("oidc:{subject}"),
            name,
            role: role_from_claim(&claims.additional_claims().roles).unwrap_or(self.default_role),
        };
        lock(&self.users).insert(user.id.clone(), user.clone());
        Ok(user)
    }

    /// The users who logged in since the server started.
    pub fn users(&self) -> Vec<OidcUser> {
        lock(&self.users).values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_claims_name_the_highest_role() {
        assert_eq!(
            role_from_claim(&serde_json::json!("editor")),
            Some(Role::Editor)
        );
        assert_eq!(
            role_from_claim(&serde_json::json!(["staff", "viewer", "admin"])),
            Some(Role::Admin)
        );
        assert_eq!(role_from_claim(&serde_json::json!(["staff"])), None);
        assert_eq!(role_from_claim(&serde_json::Value::Null), None);
    }
}
