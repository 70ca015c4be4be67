//! The browser driver's own check: before any test trusts `errors()` being empty to mean a page is
//! clean, each kind of trouble it must catch is shown caught — an exception, a console error, a
//! request for the network (which must not get out), a Content Security Policy violation.

// Setup failing (a temporary file, a loopback port) is a broken environment: a panic says so.
#![allow(clippy::expect_used)]

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::PathBuf;

use loadbench_tests::browser::{Browser, CHROMIUM_ENV, find_chromium};

/// A browser, or `None` (after saying so) when there is none and this is not CI: a developer
/// without Chromium can run the other tests, CI cannot quietly lose these.
fn browser() -> Option<Browser> {
    if find_chromium().is_none() && std::env::var_os("CI").is_none() {
        eprintln!("skipped: no Chromium (install `chromium`, or set {CHROMIUM_ENV}); CI fails instead");
        return None;
    }
    Some(Browser::launch().unwrap_or_else(|e| panic!("launching the browser: {e}")))
}

/// Writes `html` to a file of its own and returns the directory (deleted on drop) and the file.
fn page_file(html: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("page.html");
    std::fs::write(&path, html).expect("writing the page");
    (dir, path)
}

#[test]
fn a_clean_page_has_no_errors_and_no_requests_but_itself() {
    let Some(browser) = browser() else { return };
    let (_dir, path) = page_file(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Self-check</title>
        <style>body { font: 16px sans-serif; background: #f4f4f4; } .bar { height: 40px; background: #36c; }</style>
        </head><body><h1 id="greeting">Hello</h1><div class="bar"></div>
        <p>Enough on the page for a screenshot to have content.</p>
        <script>document.getElementById("greeting").textContent = "Hello from the script";</script>
        </body></html>"#,
    );
    let page = browser.open(&path).expect("opening the clean page");
    assert_eq!(page.errors(), Vec::<String>::new(), "a clean page logs no error");
    assert_eq!(page.requests(), vec![page.url().to_owned()], "the page's own file is all it loads");
    assert_eq!(page.failed_requests(), Vec::<String>::new());
    assert_eq!(page.eval_json("document.title").expect("evaluating"), "Self-check");
    assert_eq!(
        page.eval_json("document.getElementById('greeting').textContent").expect("evaluating"),
        "Hello from the script",
        "the inline script ran"
    );
    assert_eq!(
        page.eval_json("Promise.resolve({ a: [1, 2] })").expect("evaluating"),
        serde_json::json!({ "a": [1, 2] })
    );
    let thrown = page.eval_json("(() => { throw new Error('from eval') })()");
    assert!(thrown.as_ref().is_err_and(|e| e.contains("from eval")), "an exception is an error: {thrown:?}");

    for full_page in [false, true] {
        let png = page.screenshot_png(full_page).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG (full page: {full_page})");
        assert!(png.len() > 1024, "a PNG of {} bytes is too small to show the page", png.len());
        // The IHDR chunk follows the signature: width then height, big-endian.
        let width = u32::from_be_bytes(png[16..20].try_into().expect("4 bytes"));
        assert_eq!(width, 1280, "the viewport's width (full page: {full_page})");
    }
}

#[test]
fn an_uncaught_exception_is_an_error() {
    let Some(browser) = browser() else { return };
    let (_dir, path) = page_file(r#"<!doctype html><title>t</title><script>throw new Error("boom-4711");</script>"#);
    let page = browser.open(&path).expect("opening the page");
    let errors = page.errors();
    assert!(errors.iter().any(|e| e.contains("boom-4711")), "the exception is reported: {errors:?}");
}

#[test]
fn console_error_is_an_error_and_console_log_is_not() {
    let Some(browser) = browser() else { return };
    let (_dir, path) =
        page_file(r#"<!doctype html><title>t</title><script>console.log("just saying"); console.error("x");</script>"#);
    let page = browser.open(&path).expect("opening the page");
    assert_eq!(page.errors(), vec!["console.error: x".to_owned()]);
    assert!(page.console().contains(&"console.log: just saying".to_owned()), "{:?}", page.console());
}

#[test]
fn no_request_leaves_the_machine() {
    let Some(browser) = browser() else { return };
    // A server of our own on loopback: it must see no connection, whatever the page tries.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.set_nonblocking(true).expect("non-blocking listener");
    let local = format!("http://{}", listener.local_addr().expect("local address"));
    let (_dir, path) = page_file(&format!(
        r#"<!doctype html><title>t</title><img src="http://example.com/x.png"><img src="{local}/y.png">"#
    ));
    let page = browser.open(&path).expect("opening the page");
    let fetched = page
        .eval_json(&format!("fetch('{local}/z', {{ mode: 'no-cors' }}).then(() => 'fetched', e => 'failed: ' + e)"))
        .expect("evaluating");
    assert!(fetched.as_str().is_some_and(|f| f.starts_with("failed")), "{fetched}");
    assert_eq!(page.eval_json("navigator.onLine").expect("evaluating"), false, "the page is offline");

    // Blocked by the driver's own list (not merely offline, nor by a failed name lookup).
    let failures = page.failures();
    for url in ["http://example.com/x.png".to_owned(), format!("{local}/y.png"), format!("{local}/z")] {
        assert!(page.requests().contains(&url), "{url} was tried: {:?}", page.requests());
        let blocked = (url.clone(), "blocked: inspector".to_owned());
        assert!(failures.contains(&blocked), "{url} was blocked: {failures:?}");
    }
    assert_eq!(page.failed_requests().len(), 3, "{failures:?}");
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the page reached a server: {other:?}"),
    }
}

#[test]
fn a_content_security_policy_violation_is_an_error() {
    let Some(browser) = browser() else { return };
    let (_dir, path) = page_file(
        r#"<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'">
        <title>before</title></head><body><script>document.title = "script ran";</script></body></html>"#,
    );
    let page = browser.open(&path).expect("opening the page");
    assert_eq!(page.eval_json("document.title").expect("evaluating"), "before", "the policy stopped the script");
    let errors = page.errors();
    assert!(errors.iter().any(|e| e.contains("Content Security Policy")), "the violation is reported: {errors:?}");
}
