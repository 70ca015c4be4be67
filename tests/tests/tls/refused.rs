//! HTTPS runs that are refused: every iteration under `tls` with its cause in words, the hint, and
//! bad TLS flags as usage errors before any load.

use std::collections::BTreeMap;

use loadbench_tests::cli::{assert_fixture_refuses, cargo_loadbench};
use loadbench_tests::hostile::{Fault, HostileServer};
use loadbench_tests::tls::{Identity, OTHER_NAME, Pki, TlsOptions, TlsServer};
use loadbench_tests::{Behavior, TestServer};
use serde_json::json;

use super::{all_ok, all_refused, hint, only_hint, path, serial, summary, url};

#[test]
fn an_unknown_ca_fails_every_iteration_with_a_hint() {
    let _serial = serial();
    let pki = Pki::new();
    // Verification is on by default: a self-signed certificate, and one of a CA the machine does
    // not trust, are refused.
    for identity in [Identity::SelfSigned, Identity::Localhost] {
        let server = TlsServer::start(&pki, TlsOptions { identity, ..TlsOptions::default() });
        let run = url(&[&server.url(), "-n", "100", "-c", "5"]);

        all_refused(&run, 100, server.port(), "unknown issuer");
        hint(&run);
        assert_eq!((server.handshakes(), server.requests()), (0, 0), "{identity:?}");
        assert!(server.failed_handshakes() > 0, "{identity:?}: the server saw the client give up");
        assert_eq!(run.count("/tls/handshakes"), 0);
        assert!(run.at("/latency_us").is_null());
        // A connection whose handshake failed was still opened: the server saw it.
        assert_eq!(run.s().http.connections, server.connections(), "{identity:?}: TCP connections, as the server saw");
        summary(run.at("/connect_us"), "connect_us");
    }
}

// `openssl req -x509` makes such certificates (webpki's `CaUsedAsEndEntity`): trusting it with
// `--cacert` does not help, so the advice is `--insecure`, said whole after the table.
#[test]
fn a_self_signed_ca_certificate_is_refused_with_its_whole_advice() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { identity: Identity::SelfSignedCa, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "20", "-c", "2"]);

    all_refused(&run, 20, server.port(), "self-signed and marked as a CA");
    // The table's cause line holds the whole cause: nothing cut.
    let line = run.out.stdout.lines().find(|l| l.contains("× tls: ")).unwrap_or_default();
    assert!(!line.ends_with('…'), "cut: {line}");
    let hint = only_hint(&run);
    assert!(hint.contains("self-signed and marked as a CA") && hint.contains("--insecure"), "{hint}");
    assert!(hint.contains("not even with --cacert"), "{hint}");
    assert_eq!(run.count("/tls/ca_as_server"), 20);
    assert_eq!((server.handshakes(), server.requests()), (0, 0));
}

#[test]
fn a_certificate_for_another_name_needs_connect_to() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { identity: Identity::OtherName, ..TlsOptions::default() });
    let port = server.port();
    let refused = url(&[&server.url(), "-n", "50", "-c", "5", "--cacert", path(&pki.ca)]);
    all_refused(&refused, 50, port, &format!("not valid for `127.0.0.1` (it names: {OTHER_NAME})"));
    // The fix is another name (and --connect-to), not another trust store.
    let hint = only_hint(&refused);
    assert!(hint.contains("not valid for the host name in the target URL"), "{hint}");
    assert!(hint.contains("--connect-to NAME:PORT:ADDRESS:PORT"), "{hint}");
    assert!(!hint.contains("--cacert") && !hint.contains("--insecure"), "{hint}");
    assert_eq!(refused.count("/tls/wrong_name"), 50);
    assert_eq!(server.handshakes(), 0);

    // The certificate's name in the URL, the connection sent to the server's address: SNI, name
    // check and Host header are the URL's.
    let target = format!("https://{OTHER_NAME}:{port}/");
    let connect_to = format!("{OTHER_NAME}:{port}:127.0.0.1:{port}");
    let run = url(&[&target, "-n", "50", "-c", "5", "--cacert", path(&pki.ca), "--connect-to", &connect_to]);
    all_ok(&run, 50);
    assert_eq!(server.server_names(), BTreeMap::from([(Some(OTHER_NAME.to_owned()), 5)]), "SNI");
    assert_eq!(server.hosts(), BTreeMap::from([(format!("{OTHER_NAME}:{port}"), 50)]), "Host header");
    assert_eq!(run.at("/config/connect_to"), &json!(format!("127.0.0.1:{port}")));
    assert_eq!(run.s().config.target.as_deref(), Some(target.as_str()));

    // The default port, and an empty HOST matching any host.
    let run = url(&[
        &format!("https://{OTHER_NAME}/"),
        "-n",
        "20",
        "-c",
        "2",
        "--cacert",
        path(&pki.ca),
        "--connect-to",
        &format!(":443:127.0.0.1:{port}"),
    ]);
    all_ok(&run, 20);
    assert_eq!(server.hosts().get(OTHER_NAME), Some(&20), "Host without the default port: {:?}", server.hosts());
}

#[test]
fn an_expired_certificate_is_refused() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { identity: Identity::Expired, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "50", "-c", "5", "--cacert", path(&pki.ca)]);

    all_refused(&run, 50, server.port(), "expired");
    hint(&run);
    assert_eq!((server.handshakes(), server.requests()), (0, 0));
}

#[test]
fn mutual_tls_accepts_a_certificate_of_the_client_ca() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { client_auth: true, ..TlsOptions::default() });
    let (cert, key) = (path(&pki.client.cert), path(&pki.client.key));
    let run = url(&[&server.url(), "-n", "100", "-c", "5", "--cacert", path(&pki.ca), "--cert", cert, "--key", key]);

    all_ok(&run, 100);
    assert_eq!((server.handshakes(), server.requests()), (5, 100), "{:?}", server.failures());
    assert_eq!(run.at("/config/tls/client_cert"), &json!(cert));
}

// The server's `certificate_required` alert arrives after the client's side of the TLS 1.3
// handshake is done, at the first read: still a `tls` failure, with its cause.
#[test]
fn mutual_tls_without_a_client_certificate_is_refused() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { client_auth: true, ..TlsOptions::default() });
    let run = url(&[&server.url(), "-n", "50", "-c", "5", "--cacert", path(&pki.ca)]);

    all_refused(&run, 50, server.port(), "requires a client certificate");
    assert_eq!((server.handshakes(), server.requests()), (0, 0), "{:?}", server.failures());
}

// As above: the server's `unknown_ca` alert comes with the first response.
#[test]
fn mutual_tls_with_a_certificate_of_another_ca_is_refused() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions { client_auth: true, ..TlsOptions::default() });
    let (cert, key) = (path(&pki.foreign_client.cert), path(&pki.foreign_client.key));
    let run = url(&[&server.url(), "-n", "50", "-c", "5", "--cacert", path(&pki.ca), "--cert", cert, "--key", key]);

    all_refused(&run, 50, server.port(), "rejected the client certificate");
    assert_eq!((server.handshakes(), server.requests()), (0, 0), "{:?}", server.failures());
}

#[test]
fn a_plain_http_server_behind_https_is_not_tls() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let target = server.url().replace("http://", "https://");
    let port = target.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port");
    let run = url(&[&target, "-n", "50", "-c", "5"]);

    all_refused(&run, 50, port, "not TLS");
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_server_refusing_the_handshake_is_described() {
    let _serial = serial();
    for (alert, cause) in [(40, "refused the handshake"), (70, "no TLS version in common")] {
        let server = HostileServer::start(Fault::TlsAlert(alert));
        let target = server.url().replace("http://", "https://");
        let port = target.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port");
        let run = url(&[&target, "-n", "20", "-c", "2"]);

        all_refused(&run, 20, port, cause);
        assert!(!run.out.stderr.contains("hint:"), "not a certificate problem: {}", run.out.stderr);
    }
}

#[test]
fn bad_tls_files_and_connect_to_are_usage_errors() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let missing = pki.dir().join("missing.pem");
    let not_pem = pki.dir().join("not.pem");
    std::fs::write(&not_pem, "this is not PEM\n").expect("write");
    let (cert, key) = (path(&pki.client.cert), path(&pki.foreign_client.key));
    let cases: [(&[&str], &str); 5] = [
        (&["--cacert", path(&missing)], path(&missing)),
        (&["--cacert", path(&not_pem)], path(&not_pem)),
        (&["--cert", cert, "--key", key], key),
        (&["--connect-to", "api.example.test:443:127.0.0.1"], "api.example.test:443:127.0.0.1"),
        (&["--connect-to", "a:b:c:d"], "a:b:c:d"),
    ];
    for (flags, named) in cases {
        let target = server.url();
        let mut args = vec!["url", &target, "-n", "10"];
        args.extend_from_slice(flags);
        let out = cargo_loadbench(&args);
        assert_eq!(out.code, Some(2), "{flags:?}: {out:#?}");
        assert_eq!(out.stderr.lines().count(), 1, "{flags:?}: one line: {out:#?}");
        assert!(out.stderr.contains(named), "{flags:?}: the line names {named}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{flags:?}");
    }
    assert_eq!(server.connections(), 0, "no load before the usage error");
}

// The `causes` fixture's Cargo.toml, like the README's quick start, leaves the runtime's `tls`
// feature off: an https:// target is then one line naming the feature, exit 2, before any connection,
// whether the bench binary is run by `cargo loadbench` or by itself.
#[test]
fn a_bench_built_without_tls_refuses_https_before_any_load() {
    let _serial = serial();
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let url = server.url();
    let wanted = "`tls` feature (`features = [\"tls\"]` on its line in Cargo.toml)";

    assert_fixture_refuses("causes", &["--quiet", "--target", &url], wanted);
    assert_eq!(server.connections(), 0, "refused before any load");
}
