//! The middleware in front of every route: identifies the caller (API key, session cookie, or
//! the WebSocket's `token=`), counts the request against the rate limit, then checks the
//! route's role, `X-Admin-Key` and tier ([`super::policy`]). The caller reaches handlers as an
//! `Extension<Principal>`; an answer that needed credentials leaves `Cache-Control: private`.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::Principal;
use super::keys::constant_time_eq;
use super::policy::{Access, Requirement, requirement};
use super::rate_limit::Decision;
use super::token::{COOKIE, cookie_value};
use crate::auth::config::Environment;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// `METHOD /template`, named in refusals (formatted only when one is written).
struct Route<'a> {
    method: &'a axum::http::Method,
    template: &'a str,
}

impl std::fmt::Display for Route<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.template)
    }
}

/// Who the credentials of a request name.
enum Caller {
    /// No credentials.
    Anonymous,
    Known(Principal),
    /// Credentials that match nothing (an unknown key, a forged or expired cookie).
    Refused(&'static str),
}

/// The key presented in `X-API-Key`, `Authorization: Bearer`, or (WebSocket only) `token=`.
fn presented_key<'a>(
    headers: &'a HeaderMap,
    query: Option<&'a str>,
    websocket: bool,
) -> Option<String> {
    if let Some(key) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(key.to_owned());
    }
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
    {
        return Some(bearer.trim().to_owned());
    }
    if websocket {
        return crate::query_string::query_pairs(query?)
            .into_iter()
            .find(|(name, _)| name == "token")
            .map(|(_, value)| value);
    }
    None
}

fn identify(state: &AppState, request: &Request) -> Caller {
    let auth = state.auth();
    // An open API reads no credentials: a stray key or an old cookie changes nothing.
    if !auth.is_closed() {
        return Caller::Anonymous;
    }
    let websocket = request.uri().path() == "/ws/events";
    if let Some(key) = presented_key(request.headers(), request.uri().query(), websocket) {
        return match auth.keys.find(key.as_bytes()) {
            Some(found) => Caller::Known(Principal {
                id: found.id.clone(),
                name: found.name.clone(),
                role: found.role,
                method: "api_key".into(),
                expires_at: None,
            }),
            None => Caller::Refused("the API key is not valid"),
        };
    }
    let cookie = request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| cookie_value(v, COOKIE));
    let Some(token) = cookie else {
        return Caller::Anonymous;
    };
    let Some(claims) = auth.signer.verify(token, crate::timestamp::unix_seconds()) else {
        return Caller::Refused("the session cookie is expired or not valid: log in again");
    };
    // A session from a key follows the key: removed key, ended session; changed role, new role.
    let role = if claims.method == "api_key" {
        match auth.keys.by_id(&claims.sub) {
            Some(key) => key.role,
            None => return Caller::Refused("the API key of this session is no longer accepted"),
        }
    } else {
        claims.role
    };
    Caller::Known(Principal {
        id: claims.sub,
        name: claims.name,
        role,
        method: "session".into(),
        expires_at: Some(crate::timestamp::from_unix_seconds(claims.exp)),
    })
}

fn rate_headers(headers: &mut HeaderMap, decision: &Decision) {
    let pairs = [
        ("ratelimit-limit", decision.limit.to_string()),
        ("ratelimit-remaining", decision.remaining.to_string()),
        ("ratelimit-reset", decision.reset_s.to_string()),
        (
            "ratelimit-policy",
            format!(
                "{};w={}",
                decision.limit,
                super::rate_limit::WINDOW.as_secs()
            ),
        ),
    ];
    for (name, value) in pairs {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
}

fn too_many(decision: &Decision) -> Response {
    let mut response = AppError::new(
        ErrorKind::RateLimited,
        "rate_limited",
        format!(
            "more than {} requests in a minute: retry in {} s (GEOMILL_RATE_LIMIT, or \
             GEOMILL_RATE_LIMIT_READS for OGC API and tiles)",
            decision.limit, decision.reset_s
        ),
    )
    .with_detail(json!({ "limit": decision.limit, "retry_after_s": decision.reset_s }))
    .into_response();
    rate_headers(response.headers_mut(), decision);
    if let Ok(value) = HeaderValue::from_str(&decision.reset_s.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn unauthenticated(message: &str) -> AppError {
    AppError::new(ErrorKind::Unauthenticated, "unauthenticated", message)
}

fn forbidden(message: impl Into<String>) -> AppError {
    AppError::new(ErrorKind::Forbidden, "forbidden", message)
}

/// The caller allowed by the route's role, or the 401/403 that refuses them.
fn authorize(
    state: &AppState,
    caller: Caller,
    needed: &Requirement,
    what: &Route<'_>,
) -> Result<Option<Principal>, AppError> {
    let closed = state.auth().is_closed();
    let principal = match caller {
        Caller::Known(principal) => Some(principal),
        Caller::Refused(reason) if needed.access != Access::Open => {
            return Err(forbidden(reason));
        }
        Caller::Refused(_) | Caller::Anonymous if !closed => Some(Principal::anonymous()),
        Caller::Refused(_) | Caller::Anonymous => None,
    };
    let Access::Role(role) = needed.access else {
        return Ok(principal);
    };
    let Some(principal) = principal else {
        return Err(unauthenticated(
            "an API key is required: send it as X-API-Key or Authorization: Bearer, or log in (POST /auth/login)",
        ));
    };
    if principal.role < role {
        return Err(forbidden(format!(
            "{what} needs the {} role; {} has {}",
            role.as_str(),
            principal.name,
            principal.role.as_str()
        ))
        .with_detail(json!({ "required_role": role, "role": principal.role })));
    }
    Ok(Some(principal))
}

/// `X-Admin-Key` when the route takes it and the key is set; closed in production without it.
fn check_admin_key(
    state: &AppState,
    headers: &HeaderMap,
    what: &Route<'_>,
) -> Result<(), AppError> {
    let config = state.config();
    let Some(expected) = &config.admin_key else {
        if config.auth.environment == Environment::Production {
            return Err(forbidden(format!(
                "{what} is closed in production without an admin key (GEOMILL_ADMIN_KEY)"
            )));
        }
        return Ok(());
    };
    match headers.get("x-admin-key") {
        None => Err(unauthenticated("X-Admin-Key is required")),
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(forbidden("X-Admin-Key is not valid")),
    }
}

fn check_tier(state: &AppState, needed: &Requirement, what: &Route<'_>) -> Result<(), AppError> {
    let configured = state.config().auth.tier;
    let tier = state.auth().tier(configured);
    if tier >= needed.tier {
        return Ok(());
    }
    Err(AppError::new(
        ErrorKind::Forbidden,
        "tier_required",
        format!(
            "{what} needs the {} tier; this server runs {} (set GEOMILL_TIER or send a licence to POST /admin/license)",
            needed.tier.as_str(),
            tier.as_str()
        ),
    )
    .with_detail(json!({ "required_tier": needed.tier, "tier": tier })))
}

/// The rate-limit bucket: the caller's id, or the peer address when anonymous.
fn bucket(principal: Option<&Principal>, request: &Request) -> String {
    match principal {
        Some(p) if p.method != "none" => format!("id:{}", p.id),
        _ => {
            let address = request
                .extensions()
                .get::<ConnectInfo<SocketAddr>>()
                .map_or_else(|| "local".to_owned(), |c| c.0.ip().to_string());
            format!("addr:{address}")
        }
    }
}

/// The middleware: see the module documentation.
pub async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let template = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |m| m.as_str().to_owned(),
    );
    let needed = requirement(request.method(), &template);
    let method = request.method().clone();
    let what = Route {
        method: &method,
        template: &template,
    };
    let caller = identify(&state, &request);
    let known = match &caller {
        Caller::Known(principal) => Some(principal),
        _ => None,
    };
    let decision = match (needed.rate_limited, needed.published_read) {
        (false, _) => None,
        (true, false) => state.auth().limiter.hit(&bucket(known, &request)).await,
        (true, true) => {
            let bucket = format!("reads:{}", bucket(known, &request));
            state.auth().read_limiter.hit(&bucket).await
        }
    };
    if let Some(decision) = decision.filter(|d| !d.allowed) {
        return too_many(&decision);
    }
    let checked = authorize(&state, caller, &needed, &what).and_then(|principal| {
        if needed.admin_key {
            check_admin_key(&state, request.headers(), &what)?;
        }
        check_tier(&state, &needed, &what)?;
        Ok(principal)
    });
    let mut response = match checked {
        Ok(principal) => {
            if let Some(principal) = principal {
                request.extensions_mut().insert(principal);
            }
            next.run(request).await
        }
        Err(error) => error.into_response(),
    };
    if let Some(decision) = decision {
        rate_headers(response.headers_mut(), &decision);
    }
    if needed.access != Access::Open && state.auth().is_closed() {
        super::cache_control::make_private(response.headers_mut());
    }
    response
}
