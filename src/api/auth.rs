//! `/auth/*` and `/admin/*`: logging in with an API key (a signed session cookie), the current
//! session and user, the single sign-on providers, the users behind the keys, the licence.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::{Deserialize, Serialize};

use super::extract::ApiJson;
use crate::auth::config::Environment;
use crate::auth::license::License;
use crate::auth::token::{COOKIE, Claims, set_cookie};
use crate::auth::{Principal, Role};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/auth/login", post(login))
        .route("/auth/logout", post(logout))
        .route("/auth/session", get(session))
        .route("/auth/providers", get(providers))
        .route("/auth/me", get(me))
        .route("/admin/users", get(users))
        .route("/admin/license", post(license))
}

/// How to log in: with an API key (the answer sets a session cookie).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    /// One of the server's API keys.
    pub api_key: String,
}

/// The logged-in user and when the session ends.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct LoginAnswer {
    pub user: Principal,
    pub expires_at: String,
}

/// Whether cookies must be Secure: in production, or behind an https public URL.
pub(crate) fn secure_cookies(state: &AppState) -> bool {
    let auth = &state.config().auth;
    auth.environment == Environment::Production
        || auth
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
}

/// A session cookie for `principal`, valid for the configured lifetime.
pub fn session_cookie(state: &AppState, principal: &Principal, method: &str) -> (String, String) {
    let ttl = state.config().auth.session_ttl_s;
    let now = crate::timestamp::unix_seconds();
    let claims = Claims {
        sub: principal.id.clone(),
        name: principal.name.clone(),
        role: principal.role,
        method: method.into(),
        iat: now,
        exp: now + ttl,
    };
    let token = state.auth().signer.sign(&claims);
    (
        set_cookie(COOKIE, &token, "/", ttl, secure_cookies(state)),
        crate::timestamp::from_unix_seconds(claims.exp),
    )
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// Log in with an API key: the answer sets an HttpOnly session cookie (signed, SameSite=Lax).
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = LoginBody,
    responses((status = 200, body = LoginAnswer), (status = 400, description = "The server has no API keys", body = crate::api::error::ErrorBody),
        (status = 403, description = "The key is not valid", body = crate::api::error::ErrorBody), (status = 415, body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn login(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<LoginBody>,
) -> Result<Response, AppError> {
    let keys = &state.auth().keys;
    if !keys.is_enabled() {
        return Err(AppError::bad_request(
            "this server has no API keys (GEOMILL_API_KEYS): the API is open, no login is needed",
        ));
    }
    let key = keys.find(body.api_key.as_bytes()).ok_or_else(|| {
        AppError::new(
            ErrorKind::Forbidden,
            "forbidden",
            "the API key is not valid",
        )
    })?;
    let principal = Principal {
        id: key.id.clone(),
        name: key.name.clone(),
        role: key.role,
        method: "session".into(),
        expires_at: None,
    };
    let (cookie, expires_at) = session_cookie(&state, &principal, "api_key");
    let user = Principal {
        expires_at: Some(expires_at.clone()),
        ..principal
    };
    Ok(with_cookie(
        Json(LoginAnswer { user, expires_at }).into_response(),
        &cookie,
    ))
}

/// Log out: the session cookie is cleared.
#[utoipa::path(post, path = "/auth/logout", tag = "auth", responses((status = 204, description = "Cookie cleared")))]
pub async fn logout(State(state): State<AppState>) -> Response {
    let cookie = set_cookie(COOKIE, "", "/", 0, secure_cookies(&state));
    with_cookie(StatusCode::NO_CONTENT.into_response(), &cookie)
}

/// The state of the caller's session.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionState {
    /// Whether the request carried valid credentials (always true on an open API).
    pub authenticated: bool,
    /// `open` (no keys configured) or `keys`.
    pub mode: &'static str,
    pub user: Option<Principal>,
}

/// Check the current session (never 401: an anonymous caller learns that they are anonymous).
#[utoipa::path(get, path = "/auth/session", tag = "auth", responses((status = 200, body = SessionState)))]
pub async fn session(
    State(state): State<AppState>,
    principal: Option<Extension<Principal>>,
) -> Json<SessionState> {
    let closed = state.auth().is_closed();
    let user = principal.map(|Extension(p)| p);
    Json(SessionState {
        authenticated: user.is_some(),
        mode: if closed { "keys" } else { "open" },
        user,
    })
}

/// A single sign-on provider.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Provider {
    pub id: &'static str,
    pub kind: &'static str,
    pub issuer: String,
    /// Where a browser starts the login.
    pub login_url: &'static str,
}

/// The ways to log in on this server.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Providers {
    pub providers: Vec<Provider>,
    /// Whether API keys are accepted.
    pub api_keys: bool,
}

/// List the single sign-on providers.
#[utoipa::path(get, path = "/auth/providers", tag = "auth", responses((status = 200, body = Providers)))]
pub async fn providers(State(state): State<AppState>) -> Json<Providers> {
    let providers = state
        .auth()
        .oidc
        .iter()
        .map(|oidc| Provider {
            id: "oidc",
            kind: "oidc",
            issuer: oidc.issuer().to_owned(),
            login_url: "/auth/oidc/login",
        })
        .collect();
    Json(Providers {
        providers,
        api_keys: state.auth().keys.is_enabled(),
    })
}

/// The current user (on an open API: `anonymous`, with every right).
#[utoipa::path(get, path = "/auth/me", tag = "auth", responses((status = 200, body = Principal)))]
pub async fn me(principal: Option<Extension<Principal>>) -> Json<Principal> {
    Json(principal.map_or_else(Principal::anonymous, |Extension(p)| p))
}

/// A user of this server.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct User {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// How the user authenticates: `api_key`, or `oidc` (users who logged in since the start).
    pub method: &'static str,
}

/// The users behind the configured keys.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Users {
    pub users: Vec<User>,
    pub total: usize,
}

/// List the users (one per API key, and those who logged in through OIDC) and their roles.
#[utoipa::path(get, path = "/admin/users", tag = "admin", responses((status = 200, body = Users)))]
pub async fn users(State(state): State<AppState>) -> Json<Users> {
    let users: Vec<User> = state
        .auth()
        .keys
        .keys()
        .iter()
        .map(|k| User {
            id: k.id.clone(),
            name: k.name.clone(),
            role: k.role,
            method: "api_key",
        })
        .chain(
            state
                .auth()
                .oidc
                .iter()
                .flat_map(|o| o.users())
                .map(|u| User {
                    id: u.id,
                    name: u.name,
                    role: u.role,
                    method: "oidc",
                }),
        )
        .collect();
    Json(Users {
        total: users.len(),
        users,
    })
}

/// A licence to install.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseBody {
    /// `<payload>.<signature>` as issued.
    pub license: String,
}

/// The installed licence and the tier now in force.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct LicenseInfo {
    pub license: License,
    pub expires_at: String,
    pub tier: crate::auth::config::Tier,
}

/// Install a licence: verified against GEOMILL_LICENSE_PUBLIC_KEY, saved, and in force at once.
#[utoipa::path(post, path = "/admin/license", tag = "admin", request_body = LicenseBody,
    responses((status = 200, body = LicenseInfo), (status = 415, body = crate::api::error::ErrorBody),
        (status = 422, description = "Not a valid licence", body = crate::api::error::ErrorBody)))]
pub async fn license(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<LicenseBody>,
) -> Result<Json<LicenseInfo>, AppError> {
    let license = state
        .auth()
        .install_license(&body.license)
        .map_err(|reason| {
            AppError::new(
                ErrorKind::Invalid,
                "invalid_license",
                format!("licence refused: {reason}"),
            )
        })?;
    Ok(Json(LicenseInfo {
        expires_at: crate::timestamp::from_unix_seconds(license.expires),
        tier: state.auth().tier(state.config().auth.tier),
        license,
    }))
}
