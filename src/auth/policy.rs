//! What each route requires, in one table: the role (viewer reads, editor runs and writes, admin
//! administers), whether `X-Admin-Key` applies, and the tier that licenses it. The guard asks
//! this module for every request, and the OpenAPI document shows the same answer per operation,
//! so a new route is covered by default (a GET needs a viewer, anything else an editor).

use axum::http::Method;

use super::Role;
use super::config::Tier;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No credentials needed (health, documentation, logging in).
    Open,
    /// An authenticated caller with at least this role.
    Role(Role),
}

/// Everything a route requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    pub access: Access,
    /// `X-Admin-Key` is checked when `GEOMILL_ADMIN_KEY` is set (and the route is closed in
    /// production without it): the SQL endpoints, a session's SQL query, the admin routes.
    pub admin_key: bool,
    /// The tier that licenses the route.
    pub tier: Tier,
    /// Counted by the rate limiter.
    pub rate_limited: bool,
    /// A read of published data (OGC API Features, vector and raster tiles, the map pages): counted in a
    /// budget of its own (`GEOMILL_RATE_LIMIT_READS`), because clients of these routes make
    /// many small requests by design: a map view fetches dozens of tiles, and GDAL before 3.8
    /// pages through a collection ten features at a time.
    pub published_read: bool,
}

/// Routes anyone may call.
const OPEN: &[(&str, &str)] = &[
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("POST", "/auth/login"),
    ("POST", "/auth/logout"),
    ("GET", "/auth/session"),
    ("GET", "/auth/providers"),
    ("GET", "/auth/oidc/login"),
    ("GET", "/auth/oidc/callback"),
];

/// POST routes that only read (validate, preview, convert, query, export): a viewer may call
/// them. Nothing here may store anything (`POST /rules/from-node` stores a rule: not here); the
/// integration test `security_policy` keeps its own reviewed copy of this list.
const READ_ONLY_POSTS: &[&str] = &[
    "/api/pipelines/validate",
    "/pipelines/validate",
    "/api/pipelines/preview",
    "/rules/validate",
    "/rules/to-node",
    "/rules/{id}/validate",
    "/capabilities/{name}/sql-preview",
    "/api/portal/sql/execute",
    "/api/portal/sql/export",
    "/api/portal/datasets/export",
    "/datasets/export-gpkg",
    "/datasets/{id}/layers/{layer}/breaks",
    "/sessions/{id}/query",
    "/triggers/validate",
    "/triggers/test",
    "/triggers/evaluate",
    "/examples/{id}/triggers/dryrun",
];

/// Path prefixes of the Pro groups (triggers, sessions, projects, schedules, billing).
const PRO_PREFIXES: &[&str] = &[
    "/triggers",
    "/sessions",
    "/projects",
    "/schedules",
    "/billing",
    "/examples/{id}/triggers",
];

/// Path prefixes of the Enterprise groups (single sign-on).
const ENTERPRISE_PREFIXES: &[&str] = &["/auth/oidc"];

fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The requirement of a route, from its method and its path template (`/datasets/{id}`), or
/// the request path when no route matched.
pub fn requirement(method: &Method, template: &str) -> Requirement {
    let method_name = if method == Method::HEAD {
        "GET"
    } else {
        method.as_str()
    };
    let open = OPEN
        .iter()
        .any(|(m, p)| *m == method_name && *p == template)
        || (method_name == "GET" && under(template, "/docs"));
    let access = if open {
        Access::Open
    } else if under(template, "/admin") {
        Access::Role(Role::Admin)
    } else if method_name == "GET" || READ_ONLY_POSTS.contains(&template) {
        Access::Role(Role::Viewer)
    } else {
        Access::Role(Role::Editor)
    };
    let tier = if ENTERPRISE_PREFIXES.iter().any(|p| under(template, p)) {
        Tier::Enterprise
    } else if PRO_PREFIXES.iter().any(|p| under(template, p)) {
        Tier::Pro
    } else {
        Tier::Community
    };
    Requirement {
        access,
        admin_key: under(template, "/admin")
            || under(template, "/api/portal/sql")
            || template == "/sessions/{id}/query",
        tier,
        rate_limited: template != "/health",
        published_read: (method_name == "GET" || method_name == "HEAD")
            && (under(template, "/ogc")
                || template.starts_with("/examples/{id}/tiles/")
                || template.starts_with("/rasters/{id}/tiles")
                || template == "/rasters/{id}/map"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: Method, path: &str) -> Requirement {
        requirement(&method, path)
    }

    #[test]
    fn reads_need_a_viewer_writes_an_editor_admin_routes_an_admin() {
        assert_eq!(of(Method::GET, "/health").access, Access::Open);
        assert!(!of(Method::GET, "/health").rate_limited);
        assert!(of(Method::GET, "/ogc/collections/{id}/items").published_read);
        assert!(of(Method::GET, "/ogc/collections/{id}/tiles/{z}/{x}/{y}").published_read);
        assert!(of(Method::GET, "/rasters/{id}/tiles/{z}/{x}/{y}").published_read);
        assert!(of(Method::GET, "/rasters/{id}/tiles").published_read);
        assert!(!of(Method::GET, "/datasets").published_read);
        assert!(!of(Method::POST, "/jobs/{id}/publish").published_read);
        assert_eq!(of(Method::GET, "/docs/index.html").access, Access::Open);
        for (method, path, role) in [
            (Method::GET, "/datasets", Role::Viewer),
            (Method::HEAD, "/datasets", Role::Viewer),
            (Method::POST, "/rules/validate", Role::Viewer),
            (Method::POST, "/rules", Role::Editor),
            (Method::POST, "/rules/from-node", Role::Editor),
            (Method::DELETE, "/api/portal/datasets/{id}", Role::Editor),
            (Method::GET, "/admin/users", Role::Admin),
        ] {
            assert_eq!(
                of(method.clone(), path).access,
                Access::Role(role),
                "{method} {path}"
            );
        }
        assert!(of(Method::POST, "/api/portal/sql/execute").admin_key);
        assert!(of(Method::POST, "/sessions/{id}/query").admin_key);
        assert!(!of(Method::GET, "/datasets").admin_key);
        // A route nobody listed is covered by the defaults.
        assert_eq!(
            of(Method::PUT, "/brand/new").access,
            Access::Role(Role::Editor)
        );
    }

    #[test]
    fn tiers_follow_the_groups() {
        assert_eq!(of(Method::GET, "/sessions").tier, Tier::Pro);
        assert_eq!(of(Method::POST, "/projects/{id}/layers").tier, Tier::Pro);
        assert_eq!(of(Method::GET, "/auth/oidc/login").tier, Tier::Enterprise);
        assert_eq!(of(Method::GET, "/datasets").tier, Tier::Community);
        assert_eq!(of(Method::GET, "/sessionsx").tier, Tier::Community);
    }
}
