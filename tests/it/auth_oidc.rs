//! Single sign-on against a real OIDC provider (PyPI `oidc-provider-mock`, started by the test):
//! login redirect with PKCE S256, state and nonce; the provider's authorization done over plain
//! HTTP as a browser would post its form; the callback sets the session cookie; replays,
//! foreign callbacks and refusals are refused; a provider that is down is a 502.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Server, free_port};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::Value;

/// The provider, stopped when dropped.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    fn start() -> Self {
        let python = std::env::var("GEOMILL_PYTHON").expect("GEOMILL_PYTHON (make test sets it)");
        let program = std::path::Path::new(&python).with_file_name("oidc-provider-mock");
        let port = free_port();
        let alice = r#"{"sub":"alice","email":"alice@example.org","preferred_username":"alice","roles":["editor"]}"#;
        let child = Command::new(&program)
            .args(["--port", &port.to_string(), "--user-claims", alice])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (scripts/setup.sh test installs it)",
                    program.display()
                )
            });
        // Owned from here: dropped (killed and waited for) whatever happens next.
        let provider = Self {
            child,
            issuer: format!("http://127.0.0.1:{port}"),
        };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return provider;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the OIDC provider did not listen on {port}");
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server(issuer: &str) -> Server {
    let port = free_port().to_string();
    let public = format!("http://127.0.0.1:{port}");
    Server::start(&[
        ("GEOMILL_PORT", port.as_str()),
        ("GEOMILL_PUBLIC_URL", public.as_str()),
        ("GEOMILL_API_KEYS", "ops:admin:ops-key-00001"),
        ("GEOMILL_OIDC_ISSUER", issuer),
        ("GEOMILL_OIDC_CLIENT_ID", "geomill"),
        ("GEOMILL_OIDC_CLIENT_SECRET", "geomill-secret"),
    ])
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn location(response: &reqwest::Response) -> String {
    response.headers()[LOCATION].to_str().unwrap().to_owned()
}

/// `name=value` of the Set-Cookie header naming `name`.
fn cookie(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .find(|pair| pair.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} cookie in {:?}", response.headers()))
}

/// Starts a login; answers the provider URL and the state cookie.
async fn start_login(client: &reqwest::Client, server: &Server) -> (String, String) {
    let response = client
        .get(server.url("/auth/oidc/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    (location(&response), cookie(&response, "geomill_oidc_state"))
}

/// The provider's consent form, posted as a browser would: answers the callback URL.
async fn authorize(client: &reqwest::Client, provider_url: &str, form: &[(&str, &str)]) -> String {
    let response = client.post(provider_url).form(form).send().await.unwrap();
    assert_eq!(
        response.status(),
        StatusCode::FOUND,
        "{}",
        response.text().await.unwrap_or_default()
    );
    location(&response)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_logs_in_through_the_provider_and_gets_a_session() {
    let provider = Provider::start();
    let server = server(&provider.issuer);
    let client = browser();

    // The API is closed to anonymous callers.
    let response = client.get(server.url("/datasets")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let providers: Value = client
        .get(server.url("/auth/providers"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        providers["providers"][0]["issuer"],
        provider.issuer.as_str()
    );

    let (to_provider, state_cookie) = start_login(&client, &server).await;
    assert!(to_provider.starts_with(&provider.issuer), "{to_provider}");
    for part in [
        "code_challenge=",
        "code_challenge_method=S256",
        "nonce=",
        "state=",
        "scope=openid",
    ] {
        assert!(
            to_provider.contains(part),
            "{part} missing in {to_provider}"
        );
    }
    let callback = authorize(&client, &to_provider, &[("sub", "alice")]).await;
    assert!(
        callback.starts_with(&server.url("/auth/oidc/callback")),
        "{callback}"
    );

    // A callback without the browser's state cookie is refused (login CSRF).
    let response = client.get(&callback).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    let response = client
        .get(&callback)
        .header(COOKIE, &state_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "{}",
        response.text().await.unwrap_or_default()
    );
    let session = cookie(&response, "geomill_session");
    let me: Value = client
        .get(server.url("/auth/me"))
        .header(COOKIE, &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["id"], "oidc:alice", "{me}");
    assert_eq!(me["role"], "editor", "the provider's roles claim: {me}");
    let response = client
        .get(server.url("/datasets"))
        .header(COOKIE, &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // The same callback again: the login was used up.
    let response = client
        .get(&callback)
        .header(COOKIE, &state_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    // Admins see who logged in.
    let users: Value = client
        .get(server.url("/admin/users"))
        .header("x-api-key", "ops-key-00001")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"oidc:alice"), "{users}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_login_gets_no_session() {
    let provider = Provider::start();
    let server = server(&provider.issuer);
    let client = browser();
    let (to_provider, state_cookie) = start_login(&client, &server).await;
    let callback = authorize(&client, &to_provider, &[("action", "deny")]).await;
    let response = client
        .get(&callback)
        .header(COOKIE, &state_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().get(SET_COOKIE).is_none());
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("access_denied"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_down_is_a_bad_gateway_not_a_crash() {
    let issuer = format!("http://127.0.0.1:{}", free_port());
    let server = server(&issuer);
    let response = browser()
        .get(server.url("/auth/oidc/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("discovery"),
        "{body}"
    );
    assert_eq!(
        browser()
            .get(server.url("/health"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
}
