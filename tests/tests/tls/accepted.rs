//! HTTPS runs that succeed: exact counts, connections and handshakes as the server saw them,
//! resumption on reconnect, `--insecure`, TLS 1.2, http:// beside, and a scenario's bench binary.

use std::collections::BTreeMap;

use loadbench_tests::cli::{read_report, run_fixture, scenario};
use loadbench_tests::tls::{Identity, Pki, TlsOptions, TlsServer};
use loadbench_tests::{Behavior, TestServer};
use serde_json::{Value, json};

use super::{all_ok, path, serial, summary, tls_counts, tls_figures, url};

#[test]
fn https_counts_are_exact_with_one_connection_per_user() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let target = format!("{}/", server.url());
    let run = url(&[&target, "-n", "200", "-c", "10", "--cacert", path(&pki.ca)]);

    all_ok(&run, 200);
    assert_eq!(run.s().http.responses, 200);
    assert_eq!(server.requests(), 200, "requests the server answered");
    assert_eq!(server.connections(), 10, "one TLS connection per user");
    assert!(server.peak_open() <= 10, "{}", server.peak_open());
    assert_eq!(
        (server.handshakes(), server.resumed(), server.failed_handshakes()),
        (10, 0, 0),
        "{:?}",
        server.failures()
    );
    assert_eq!(server.alpn_http11(), 10, "ALPN http/1.1 offered and agreed");
    assert_eq!(server.server_names(), BTreeMap::from([(None, 10)]), "no SNI for an IP address");
    tls_figures(&run, 10, 0, "TLSv1.3");
    let tls = run.s().tls.as_ref().expect("tls figures for https://, in the contract types");
    assert_eq!((tls.handshakes, tls.resumed, tls.unverified), (10, 0, 0));
    assert_eq!(
        run.at("/config/tls"),
        &json!({"insecure": false, "cacert": [path(&pki.ca)], "client_cert": null, "resumption": true})
    );
    assert_eq!(run.at("/config/connect_to"), &Value::Null);
    assert!(!run.out.stdout.contains("not verified"), "{}", run.out.stdout);
}

#[test]
fn reconnects_resume_the_users_session() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { close_every_response: true, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "200", "-c", "10", "--cacert", path(&pki.ca)]);

    all_ok(&run, 200);
    // `Connection: close` on every response: a connection per request, every one after a user's
    // first resumed (none lost).
    assert_eq!((server.requests(), server.connections()), (200, 200));
    assert_eq!((server.handshakes(), server.resumed()), (200, 190), "server-observed: {:?}", server.failures());
    tls_figures(&run, 200, 190, "TLSv1.3");
}

#[test]
fn no_tls_resumption_makes_every_handshake_full() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { close_every_response: true, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "100", "-c", "5", "--cacert", path(&pki.ca), "--no-tls-resumption"]);

    all_ok(&run, 100);
    assert_eq!((server.handshakes(), server.resumed()), (100, 0));
    tls_figures(&run, 100, 0, "TLSv1.3");
    assert_eq!(run.at("/config/tls/resumption"), &json!(false));
}

#[test]
fn insecure_accepts_an_unknown_ca_with_a_warning() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { identity: Identity::SelfSigned, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "100", "-c", "5", "--insecure"]);

    all_ok(&run, 100);
    assert_eq!((server.requests(), server.handshakes()), (100, 5));
    assert!(run.out.stdout.contains("not verified (--insecure)"), "{}", run.out.stdout);
    assert_eq!(run.at("/config/tls/insecure"), &json!(true));
    assert!(!run.out.stderr.contains("hint:"), "{}", run.out.stderr);

    let short = url(&[&server.url(), "-n", "20", "-c", "2", "-k"]);
    all_ok(&short, 20);
    assert_eq!(short.at("/config/tls/insecure"), &json!(true));
}

#[test]
fn a_tls12_only_server_works_and_resumes() {
    let _serial = serial();
    let pki = Pki::new();
    let options = TlsOptions { tls12_only: true, close_every_response: true, ..TlsOptions::default() };
    let server = TlsServer::start(&pki, options);
    let run = url(&[&server.url(), "-n", "100", "-c", "5", "--cacert", path(&pki.ca)]);

    all_ok(&run, 100);
    assert_eq!((server.handshakes(), server.resumed()), (100, 95), "{:?}", server.failures());
    assert_eq!(server.versions(), BTreeMap::from([("TLSv1.2".to_owned(), 100)]));
    tls_figures(&run, 100, 95, "TLSv1.2");
}

#[test]
fn http_targets_have_connect_times_and_no_tls() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let port = server.url().rsplit(':').next().expect("a port").to_owned();
    let target = format!("http://example.test:{port}/");
    let connect_to = format!("example.test:{port}:127.0.0.1:{port}");
    let run = url(&[&target, "-n", "50", "-c", "5", "--connect-to", &connect_to]);

    all_ok(&run, 50);
    assert_eq!(server.connections(), 5);
    assert!(server.seen().iter().all(|r| r.header("host") == Some(&*format!("example.test:{port}"))));
    assert_eq!(
        (run.at("/tls"), run.at("/tls_handshake_us"), run.at("/config/tls")),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    assert_eq!(run.at("/config/connect_to"), &json!(format!("127.0.0.1:{port}")));
    assert_eq!(run.count("/errors/tls"), 0);
    summary(run.at("/connect_us"), "connect_us");
}

#[test]
fn a_scenario_takes_an_https_target() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    // fixtures/basic `hello`: 500 GETs from 20 users, each expecting 200; the TLS flags pass
    // through `cargo loadbench` to the bench binary.
    let out = run_fixture(
        "basic",
        &["hello", "--target", &server.url(), "--cacert", path(&pki.ca), "--json", path(&json), "--quiet"],
    );

    assert_eq!(out.code, Some(0), "{out:#?}");
    let report = read_report(&json);
    let s = scenario(&report, "hello");
    assert_eq!((s.iterations, s.ok, s.failed), (500, 500, 0), "{:#?}", s.errors);
    assert_eq!((server.requests(), server.connections(), server.handshakes()), (500, 20, 20));
    let raw: Value = loadbench_tests::cli::read_json(&json);
    let hello = raw["scenarios"].as_array().and_then(|all| all.iter().find(|s| s["name"] == "hello")).expect("hello");
    tls_counts(&hello["tls"], 20, 0, "TLSv1.3");
    assert_eq!(hello["config"]["tls"]["cacert"], json!([path(&pki.ca)]));
}
