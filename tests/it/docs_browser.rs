//! `/docs` rendered by a real browser (headless Chromium) that cannot reach anything but the
//! loopback address: if the page needed an outside asset, it would not render.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::process::Command;

use common::Server;

#[test]
fn docs_render_in_chromium_with_the_network_cut_off() {
    let server = Server::start(&[]);
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // Every host name but the loopback address resolves to nothing.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=15000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(server.url("/docs/"))
        .output()
        .expect("chromium is installed by scripts/setup.sh test");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Swagger UI rendered the document it fetched from /openapi.json: the title, the version
    // and the operations are in the DOM, which only JavaScript could have put there.
    assert!(dom.contains("geomill"), "title not rendered:\n{dom}");
    assert!(dom.contains("opblock"), "no operations rendered:\n{dom}");
    assert!(dom.contains("/health"), "/health operation missing:\n{dom}");
    assert!(
        dom.contains("/capabilities/{name}/sql-preview"),
        "501 routes missing"
    );
}
