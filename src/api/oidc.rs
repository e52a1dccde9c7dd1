//! `/auth/oidc/login` and `/auth/oidc/callback`: the browser's side of single sign-on. The
//! login redirects to the provider and leaves the login's state in a cookie; the callback
//! checks that cookie (the login must be this browser's), finishes the login and sets the
//! session cookie.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::auth::Principal;
use crate::auth::oidc::{LoginError, Oidc};
use crate::auth::token::{cookie_value, set_cookie};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// The cookie holding a started login's state.
const STATE_COOKIE: &str = "geomill_oidc_state";
/// Where the browser lands after logging in.
const AFTER_LOGIN: &str = "/docs/";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/auth/oidc/login", get(login))
        .route("/auth/oidc/callback", get(callback))
}

fn oidc(state: &AppState) -> Result<&Oidc, AppError> {
    state.auth().oidc.as_ref().ok_or_else(|| {
        AppError::not_found(
            "no single sign-on here: set GEOMILL_OIDC_ISSUER, GEOMILL_OIDC_CLIENT_ID and GEOMILL_OIDC_CLIENT_SECRET",
        )
    })
}

fn login_error(error: &LoginError) -> AppError {
    if error.provider_fault() {
        AppError::new(ErrorKind::Upstream, "oidc_provider", error.to_string())
    } else {
        AppError::new(
            ErrorKind::Unauthenticated,
            "login_refused",
            error.to_string(),
        )
    }
}

fn state_cookie(state: &AppState, value: &str, max_age_s: u64) -> String {
    let secure = super::auth::secure_cookies(state);
    set_cookie(STATE_COOKIE, value, "/auth/oidc", max_age_s, secure)
}

/// Start a single sign-on login: 303 to the provider (PKCE S256, state, nonce).
#[utoipa::path(get, path = "/auth/oidc/login", tag = "auth",
    responses((status = 303, description = "To the provider's authorization page"),
        (status = 404, description = "No OIDC provider configured", body = crate::api::error::ErrorBody),
        (status = 502, description = "The provider cannot be reached or discovered", body = crate::api::error::ErrorBody)))]
pub async fn login(State(state): State<AppState>) -> Result<Response, AppError> {
    let (url, login_state) = oidc(&state)?.start().await.map_err(|e| login_error(&e))?;
    let mut response = Redirect::to(&url).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&state_cookie(&state, &login_state, 600)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// What the provider sends back.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

/// The provider's redirect back: on success the session cookie is set and the browser goes to
/// the API documentation.
#[utoipa::path(get, path = "/auth/oidc/callback", tag = "auth", params(Callback),
    responses((status = 303, description = "Logged in: session cookie set"),
        (status = 400, description = "Not this browser's login, or parameters missing", body = crate::api::error::ErrorBody),
        (status = 401, description = "The provider or the ID token refused the login", body = crate::api::error::ErrorBody),
        (status = 404, description = "No OIDC provider configured", body = crate::api::error::ErrorBody),
        (status = 502, description = "The provider cannot be reached", body = crate::api::error::ErrorBody)))]
pub async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(answer): Query<Callback>,
) -> Result<Response, AppError> {
    let oidc = oidc(&state)?;
    if let Some(error) = answer.error {
        return Err(AppError::new(
            ErrorKind::Unauthenticated,
            "login_refused",
            format!(
                "the provider refused the login: {error} {}",
                answer.error_description.unwrap_or_default()
            ),
        ));
    }
    let (Some(code), Some(login_state)) = (answer.code, answer.state) else {
        return Err(AppError::bad_request("the callback needs code and state"));
    };
    let ours = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| cookie_value(v, STATE_COOKIE));
    if ours != Some(login_state.as_str()) {
        return Err(AppError::bad_request(
            "this login was not started by this browser (state cookie missing or different)",
        ));
    }
    let user = oidc
        .finish(&login_state, &code)
        .await
        .map_err(|e| login_error(&e))?;
    let principal = Principal {
        id: user.id,
        name: user.name,
        role: user.role,
        method: "session".into(),
        expires_at: None,
    };
    let (session, _) = super::auth::session_cookie(&state, &principal, "oidc");
    let mut response = Redirect::to(AFTER_LOGIN).into_response();
    for cookie in [session, state_cookie(&state, "", 0)] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    Ok(response)
}
