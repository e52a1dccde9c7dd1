//! Logging in and what follows: session cookies (signed, HttpOnly, tied to their key), the open
//! mode, tiers and licences, the admin key in production, the WebSocket's `token=`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use geomill::auth::config::{Environment, Tier};
use geomill::config::Config;
use geomill::state::AppState;
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};
use tower::ServiceExt;

const KEYS: &str = "ana:admin:ana-key-00001,vera:viewer:vera-key-0001";
const SECRET: &str = "0123456789abcdef0123456789abcdef-test";

fn state_with(dir: &std::path::Path, change: impl FnOnce(&mut Config)) -> AppState {
    let mut config = Config::with_data_dir(dir);
    config.auth.api_keys = Some(KEYS.into());
    config.auth.session_secret = Some(SECRET.into());
    change(&mut config);
    AppState::open(config).unwrap()
}

/// Status, JSON body and the Set-Cookie header of one call.
async fn send(state: &AppState, request: Request<Body>) -> (StatusCode, Value, Option<String>) {
    let response = geomill::api::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        cookie,
    )
}

fn with_cookie(uri: &str, cookie: &str) -> Request<Body> {
    Request::get(uri)
        .header("cookie", cookie)
        .body(Body::empty())
        .unwrap()
}

async fn login(state: &AppState, key: &str) -> (StatusCode, Value, Option<String>) {
    let body = json!({ "api_key": key });
    let request = Request::post("/auth/login").header("content-type", "application/json");
    send(state, request.body(Body::from(body.to_string())).unwrap()).await
}

/// `name=value` of a Set-Cookie header.
fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_login_gives_a_session_cookie_with_the_keys_role() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with(dir.path(), |_| {});
    let (status, body, cookie) = login(&state, "vera-key-0001").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["user"]["name"], "vera");
    let set_cookie = cookie.unwrap();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );
    assert!(
        !set_cookie.contains("vera-key-0001"),
        "the key never travels back"
    );
    let cookie = cookie_pair(&set_cookie);

    let (status, me, _) = send(&state, with_cookie("/auth/me", &cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            me["name"].as_str(),
            me["role"].as_str(),
            me["method"].as_str()
        ),
        (Some("vera"), Some("viewer"), Some("session"))
    );
    let (_, session, _) = send(&state, with_cookie("/auth/session", &cookie)).await;
    assert_eq!(session["authenticated"], true);
    assert_eq!(session["mode"], "keys");

    // The viewer's cookie reads but does not write.
    let rule = Request::post("/rules")
        .header("cookie", &cookie)
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .unwrap();
    let (status, body, _) = send(&state, rule).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("editor"),
        "{body}"
    );

    // A cookie changed by the client is refused; no cookie is a 401.
    let forged = format!("{}x", cookie);
    assert_eq!(
        send(&state, with_cookie("/datasets", &forged)).await.0,
        StatusCode::FORBIDDEN
    );
    let (status, body, _) = send(
        &state,
        Request::get("/datasets").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("X-API-Key"),
        "{body}"
    );
    let (_, session, _) = send(
        &state,
        Request::get("/auth/session").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(session["authenticated"], false);

    let (status, _, _) = login(&state, "not-a-key-00").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let logout = Request::post("/auth/logout").body(Body::empty()).unwrap();
    let (status, _, cleared) = send(&state, logout).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(cleared.unwrap().contains("Max-Age=0"));
}

#[tokio::test]
async fn a_session_ends_with_its_key_and_follows_its_role() {
    let dir = tempfile::tempdir().unwrap();
    let before = state_with(&dir.path().join("a"), |_| {});
    let cookie = cookie_pair(&login(&before, "vera-key-0001").await.2.unwrap());
    // The same secret, vera's key now an editor's: the session follows the key.
    let promoted = state_with(&dir.path().join("b"), |c| {
        c.auth.api_keys = Some("vera:editor:vera-key-0001".into());
    });
    let (_, me, _) = send(&promoted, with_cookie("/auth/me", &cookie)).await;
    assert_eq!(me["role"], "editor");
    // Key removed: the session is over.
    let removed = state_with(&dir.path().join("c"), |c| {
        c.auth.api_keys = Some("ana:admin:ana-key-00001".into());
    });
    let (status, body, _) = send(&removed, with_cookie("/auth/me", &cookie)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

#[tokio::test]
async fn without_keys_the_api_is_open_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with(dir.path(), |c| c.auth.api_keys = None);
    let (status, me, _) = send(
        &state,
        Request::get("/auth/me").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (me["id"].as_str(), me["role"].as_str()),
        (Some("anonymous"), Some("admin"))
    );
    let (_, session, _) = send(
        &state,
        Request::get("/auth/session").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(session["mode"], "open");
    let (status, body, _) = login(&state, "whatever-key").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // A key sent to an open API is not held against the caller.
    let request = Request::get("/datasets")
        .header("x-api-key", "stray-key-123")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.0, StatusCode::OK);
    let request = Request::get("/datasets")
        .header("cookie", "geomill_session=stale.old.cookie")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.0, StatusCode::OK);
}

/// A licence for `tier` until `expires` (Unix seconds), signed by `pair`.
fn licence(pair: &Ed25519KeyPair, tier: &str, expires: u64) -> String {
    let payload = URL_SAFE_NO_PAD
        .encode(json!({"tier": tier, "licensee": "Acme", "expires": expires}).to_string());
    let signature = URL_SAFE_NO_PAD.encode(pair.sign(payload.as_bytes()).as_ref());
    format!("{payload}.{signature}")
}

#[tokio::test]
async fn pro_routes_need_the_pro_tier_and_a_licence_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let public = STANDARD.encode(pair.public_key().as_ref());
    let open = |public: &str| {
        let public = public.to_owned();
        state_with(dir.path(), move |c| {
            c.auth.api_keys = None;
            c.auth.tier = Tier::Community;
            c.auth.license_public_key = Some(public);
        })
    };
    let state = open(&public);
    let sessions = || Request::get("/sessions").body(Body::empty()).unwrap();
    let (status, body, _) = send(&state, sessions()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["error"]["code"], "tier_required");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pro tier"),
        "{body}"
    );
    // Community routes are untouched.
    assert_eq!(
        send(
            &state,
            Request::get("/datasets").body(Body::empty()).unwrap()
        )
        .await
        .0,
        StatusCode::OK
    );

    let install = |token: String| {
        let body = json!({ "license": token });
        Request::post("/admin/license")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let other = Ed25519KeyPair::from_pkcs8(
        Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new())
            .unwrap()
            .as_ref(),
    )
    .unwrap();
    for (token, reason) in [
        (licence(&other, "pro", 4_000_000_000), "signature"),
        (licence(&pair, "pro", 1_000), "expired"),
        (licence(&pair, "platinum", 4_000_000_000), "unknown tier"),
        ("garbage".to_owned(), "<payload>.<signature>"),
    ] {
        let (status, body, _) = send(&state, install(token)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(reason),
            "{reason}: {body}"
        );
    }
    assert_eq!(
        send(&state, sessions()).await.0,
        StatusCode::FORBIDDEN,
        "refused licences change nothing"
    );

    let (status, body, _) = send(&state, install(licence(&pair, "pro", 4_000_000_000))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["tier"], "pro");
    assert_eq!(send(&state, sessions()).await.0, StatusCode::OK);
    // Enterprise routes still need more.
    let (status, body, _) = send(
        &state,
        Request::get("/auth/oidc/login")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    drop(state);
    // The licence is kept across a restart.
    let restarted = open(&public);
    assert_eq!(send(&restarted, sessions()).await.0, StatusCode::OK);
}

#[tokio::test]
async fn production_closes_sql_and_admin_routes_without_an_admin_key() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with(dir.path(), |c| c.auth.environment = Environment::Production);
    let query = json!({"query": "SELECT 1"});
    let request = Request::post("/api/portal/sql/execute")
        .header("x-api-key", "ana-key-00001")
        .header("content-type", "application/json")
        .body(Body::from(query.to_string()))
        .unwrap();
    let (status, body, _) = send(&state, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("GEOMILL_ADMIN_KEY"),
        "{body}"
    );
    let users = Request::get("/admin/users")
        .header("x-api-key", "ana-key-00001")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, users).await.0, StatusCode::FORBIDDEN);
    // Cookies are Secure in production.
    let cookie = login(&state, "ana-key-00001").await.2.unwrap();
    assert!(cookie.contains("Secure"), "{cookie}");
}

#[tokio::test]
async fn admins_list_users_without_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with(dir.path(), |c| c.admin_key = Some("admin-header".into()));
    let request = |admin_header: Option<&str>| {
        let mut request = Request::get("/admin/users").header("x-api-key", "ana-key-00001");
        if let Some(value) = admin_header {
            request = request.header("x-admin-key", value);
        }
        request.body(Body::empty()).unwrap()
    };
    assert_eq!(
        send(&state, request(None)).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        send(&state, request(Some("wrong"))).await.0,
        StatusCode::FORBIDDEN
    );
    let (status, body, _) = send(&state, request(Some("admin-header"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["total"], 2);
    assert!(!body.to_string().contains("key-0001"), "{body}");
    let names: Vec<&str> = body["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ana", "vera"]);
}

#[tokio::test]
async fn the_websocket_takes_its_key_as_token() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with(dir.path(), |_| {});
    let status = |uri: &str| {
        let request = Request::get(uri).body(Body::empty()).unwrap();
        let state = state.clone();
        async move { send(&state, request).await.0 }
    };
    assert_eq!(status("/ws/events").await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        status("/ws/events?token=wrong-token-1").await,
        StatusCode::FORBIDDEN
    );
    let passed = status("/ws/events?topics=job_created&token=vera-key-0001").await;
    assert!(
        passed != StatusCode::UNAUTHORIZED && passed != StatusCode::FORBIDDEN,
        "{passed}"
    );
    // Elsewhere a key in the query string is not read (it would end up in logs).
    assert_eq!(
        status("/datasets?token=vera-key-0001").await,
        StatusCode::UNAUTHORIZED
    );
}
