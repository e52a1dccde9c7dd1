//! A real server with one API key per role, and requests made as each role (anonymous, viewer,
//! editor, admin), for the tests of who may do what.

use reqwest::Method;

use super::Server;

const VIEWER_KEY: &str = "viewer-key-00000V";
const EDITOR_KEY: &str = "editor-key-00000E";
pub const ADMIN_KEY: &str = "admin-key-00000A";
const ADMIN_HEADER: &str = "admin-header-key-0001";

/// A server with one key per role and an admin key (every tier, no rate limit).
pub fn keyed_server(extra: &[(&str, &str)]) -> Server {
    let keys = format!("v:viewer:{VIEWER_KEY},e:editor:{EDITOR_KEY},a:admin:{ADMIN_KEY}");
    let mut env = vec![
        ("GEOMILL_API_KEYS", keys.as_str()),
        ("GEOMILL_ADMIN_KEY", ADMIN_HEADER),
        ("GEOMILL_TIER", "enterprise"),
        ("GEOMILL_RATE_LIMIT", "0"),
        ("GEOMILL_RATE_LIMIT_READS", "0"),
    ];
    env.extend_from_slice(extra);
    Server::start(&env)
}

/// Who calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Caller {
    Anonymous,
    Viewer,
    Editor,
    Admin,
}

impl Caller {
    fn key(self) -> Option<&'static str> {
        match self {
            Self::Anonymous => None,
            Self::Viewer => Some(VIEWER_KEY),
            Self::Editor => Some(EDITOR_KEY),
            Self::Admin => Some(ADMIN_KEY),
        }
    }
}

/// A request of `caller` (with the admin header, so that the role alone decides).
pub fn request(
    client: &reqwest::Client,
    server: &Server,
    method: Method,
    path: &str,
    caller: Caller,
) -> reqwest::RequestBuilder {
    let mut builder = client.request(method, server.url(path));
    if let Some(key) = caller.key() {
        builder = builder
            .header("x-api-key", key)
            .header("x-admin-key", ADMIN_HEADER);
    }
    builder
}
