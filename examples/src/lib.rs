//! The demo server that the example scenarios run against, embedded in each bench binary so that
//! `cargo loadbench` works on a fresh clone with nothing else started.
//!
//! Routes:
//! - `GET /`: `<p>hello, world!</p>` as `text/html`.
//! - `GET /items/{id}`: a small JSON document.
//! - `POST /items`: echoes the body back with status 201.
//! - `GET /disk`: writes a random 108 KB string to a file, reads it back and returns it.
//! - TechEmpower's tests: `GET /json` (`{"message":"Hello, World!"}`), `GET /plaintext`
//!   (`Hello, World!`), `GET /db` (one random row of the `World` table, from SQLite) and
//!   `GET /queries?queries=N` (N random rows, 1 to 500).
//! - anything else: 404.

pub mod disk;
pub mod world;

use std::sync::{Arc, OnceLock};

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};

/// Starts the demo server on 127.0.0.1 and an ephemeral port, on a background thread that lives
/// as long as the process, and returns its base URL.
///
/// ```no_run
/// let url = loadbench_examples::start_demo_server().unwrap();
/// assert!(url.starts_with("http://127.0.0.1:"));
/// ```
pub fn start_demo_server() -> std::io::Result<String> {
    let app = Arc::new(App::new()?);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let listener = runtime.block_on(listen())?;
    let addr: SocketAddr = listener.local_addr()?;
    std::thread::Builder::new().name("demo-server".into()).spawn(move || {
        runtime.block_on(async move {
            loop {
                // Accept errors (e.g. out of file descriptors) are transient for a demo server.
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                let app = Arc::clone(&app);
                tokio::spawn(async move {
                    let service = service_fn(move |request| route(Arc::clone(&app), request));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        })
    })?;
    Ok(format!("http://{addr}"))
}

/// Binds 127.0.0.1 on an ephemeral port with a deep accept queue: the examples open 1,000
/// connections at once, and with the usual 1,024-entry queue some of those SYNs would be dropped
/// and retried a second later, which shows up as one-second outliers that are the demo server's
/// fault, not the scenario's.
async fn listen() -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    socket.listen(8192)
}

/// What the routes share: a scratch directory for the disk test, and the database (created on
/// first use, so that the examples that never touch it do not pay for 10,000 inserts).
struct App {
    scratch: tempfile::TempDir,
    world: OnceLock<Result<world::World, String>>,
}

impl App {
    fn new() -> std::io::Result<App> {
        Ok(App { scratch: tempfile::tempdir()?, world: OnceLock::new() })
    }

    fn world(&self) -> Result<&world::World, String> {
        self.world
            .get_or_init(|| world::World::create(4).map_err(|e| format!("cannot create the database: {e}")))
            .as_ref()
            .map_err(Clone::clone)
    }
}

type Reply = (StatusCode, &'static str, Bytes);

fn text(status: StatusCode, body: &'static str) -> Reply {
    (status, "text/plain", Bytes::from_static(body.as_bytes()))
}

async fn route(app: Arc<App>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/") => (StatusCode::OK, "text/html", Bytes::from_static(b"<p>hello, world!</p>")),
        (&Method::GET, path) if path.starts_with("/items/") => {
            let id = &path["/items/".len()..];
            match id.parse::<u64>() {
                Ok(id) => {
                    (StatusCode::OK, "application/json", Bytes::from(format!(r#"{{"id":{id},"name":"item {id}"}}"#)))
                }
                Err(_) => text(StatusCode::BAD_REQUEST, "id must be a number"),
            }
        }
        (&Method::POST, "/items") => {
            let body = request.into_body().collect().await?.to_bytes();
            (StatusCode::CREATED, "application/json", body)
        }
        (&Method::GET, "/disk") => {
            // File I/O blocks; keep it off the event loop, as a real server would.
            let dir = app.scratch.path().to_owned();
            match tokio::task::spawn_blocking(move || disk::round_trip(&dir)).await {
                Ok(Ok(content)) => (StatusCode::OK, "text/plain", Bytes::from(content)),
                _ => text(StatusCode::INTERNAL_SERVER_ERROR, "disk round trip failed"),
            }
        }
        (&Method::GET, "/json") => {
            let body = serde_json::json!({ "message": "Hello, World!" }).to_string();
            (StatusCode::OK, "application/json", Bytes::from(body))
        }
        (&Method::GET, "/plaintext") => text(StatusCode::OK, "Hello, World!"),
        (&Method::GET, "/db") => queries(&app, 1, false),
        (&Method::GET, "/queries") => {
            // TechEmpower: a missing, malformed or out-of-range count is clamped to 1..=500.
            let n = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("queries=")))
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(1)
                .clamp(1, 500);
            queries(&app, n, true)
        }
        _ => text(StatusCode::NOT_FOUND, "not found"),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
    Ok(response)
}

/// `n` random rows of `World` as JSON: an object for `/db`, an array for `/queries`.
fn queries(app: &App, n: u32, as_array: bool) -> Reply {
    let world = match app.world() {
        Ok(world) => world,
        Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, "database unavailable"),
    };
    let mut rng = fastrand::Rng::new();
    let mut rows = Vec::with_capacity(n as usize);
    for _ in 0..n {
        match world.row(rng.u32(1..=world::ROWS)) {
            Ok(Some(row)) => rows.push(serde_json::json!({ "id": row.id, "randomNumber": row.random_number })),
            _ => return text(StatusCode::INTERNAL_SERVER_ERROR, "query failed"),
        }
    }
    let body = if as_array { serde_json::Value::Array(rows) } else { rows.swap_remove(0) };
    (StatusCode::OK, "application/json", Bytes::from(body.to_string()))
}
