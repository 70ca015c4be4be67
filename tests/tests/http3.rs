//! The HTTP/3 test server (`loadbench_tests::h3server`) against the h3 crates' own client: its
//! counts of connections, streams and requests are exact, so that loadbench's HTTP/3 client can
//! be held to them as tests/http2.rs holds the HTTP/2 one.

use loadbench_tests::h3server::{self, H3Server};
use loadbench_tests::tls::Pki;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_h3_server_counts_connections_streams_and_requests_exactly() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let first = tokio::time::timeout(std::time::Duration::from_secs(20), h3server::h3_get(&server, &pki, 5))
        .await
        .expect("five requests on one connection in time");
    let second = tokio::time::timeout(std::time::Duration::from_secs(20), h3server::h3_get(&server, &pki, 3))
        .await
        .expect("three requests on another connection in time");
    for response in first.iter().chain(&second) {
        assert_eq!(response.status, 200);
        assert_eq!(response.body, h3server::BODY);
    }
    assert_eq!((first.len(), second.len()), (5, 3));
    assert_eq!(server.connections(), 2, "one QUIC connection per h3_get");
    assert_eq!(server.streams(), 8, "one request stream per request");
    assert_eq!(server.requests(), 8);
    assert_eq!(server.responses(), 8);
    assert_eq!(server.requests_per_connection(), [5, 3]);
}
