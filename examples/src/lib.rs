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
//! - The business journey's application (accounts, sessions and records in SQLite, see
//!   [`journey`]): `POST /login` with `{"user":"user7","password":"password7"}` answers
//!   `{"token":"…"}` and sets the same token as the cookie `session` (401 for wrong
//!   credentials); with that cookie or `Authorization: Bearer TOKEN`, `POST /records` stores its
//!   body as a record and answers 201 with `{"id":N}`, `GET /records/{id}` answers the record
//!   (404 when there is none) and `POST /logout` ends the session (204) and expires the cookie.
//!   Without an open session, those three answer 401.
//! - anything else: 404.
//!
//! The `demo-app` binary serves the same routes from a process of its own. The `websocket` bench
//! runs against an echo server of its own instead ([`websocket`]), and the gRPC example's server
//! is apart, in [`grpc`].

pub mod disk;
pub mod grpc;
pub mod journey;
pub mod websocket;
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
    serve(App::new()?)
}

/// [`start_demo_server`] with both databases created and filled before it accepts connections,
/// as the `demo-app` binary runs it: no request then waits for them.
pub fn start_demo_app() -> std::io::Result<String> {
    let app = App::new()?;
    app.world().map_err(std::io::Error::other)?;
    app.journey().map_err(std::io::Error::other)?;
    serve(app)
}

fn serve(app: App) -> std::io::Result<String> {
    let app = Arc::new(app);
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

/// What the routes share: a scratch directory for the disk test, and the databases (each
/// created on first use, so that the examples that never touch one do not pay for filling it).
struct App {
    scratch: tempfile::TempDir,
    world: OnceLock<Result<world::World, String>>,
    journey: OnceLock<Result<journey::Journey, String>>,
}

impl App {
    fn new() -> std::io::Result<App> {
        Ok(App { scratch: tempfile::tempdir()?, world: OnceLock::new(), journey: OnceLock::new() })
    }

    fn journey(&self) -> Result<&journey::Journey, String> {
        self.journey
            .get_or_init(|| journey::Journey::create(4).map_err(|e| format!("cannot create the database: {e}")))
            .as_ref()
            .map_err(Clone::clone)
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
    // The session cookie that `/login` sets and `/logout` expires.
    let mut set_cookie = None;
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
        (&Method::POST, "/login") => {
            let body = request.into_body().collect().await?.to_bytes();
            let reply = blocking(&app, move |app| log_in(app, &body)).await;
            if reply.0 == StatusCode::OK {
                let token = serde_json::from_slice::<serde_json::Value>(&reply.2)
                    .ok()
                    .and_then(|v| v.get("token")?.as_str().map(str::to_owned));
                set_cookie = token.map(|token| format!("session={token}; Path=/; HttpOnly; SameSite=Lax"));
            }
            reply
        }
        (&Method::POST, "/logout") => {
            let token = session_token(&request);
            let reply = blocking(&app, move |app| {
                with_session(app, token.as_deref(), |db, _, token| match db.log_out(token) {
                    Ok(_) => (StatusCode::NO_CONTENT, "text/plain", Bytes::new()),
                    Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "logout failed"),
                })
            })
            .await;
            if reply.0 == StatusCode::NO_CONTENT {
                set_cookie = Some("session=; Path=/; Max-Age=0".to_owned());
            }
            reply
        }
        (&Method::POST, "/records") => {
            let token = session_token(&request);
            let body = request.into_body().collect().await?.to_bytes();
            blocking(&app, move |app| {
                with_session(app, token.as_deref(), |db, user, _| {
                    match db.insert(user, &String::from_utf8_lossy(&body)) {
                        Ok(id) => (StatusCode::CREATED, "application/json", Bytes::from(format!(r#"{{"id":{id}}}"#))),
                        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "insert failed"),
                    }
                })
            })
            .await
        }
        (&Method::GET, path) if path.starts_with("/records/") => {
            let id = path["/records/".len()..].parse::<i64>();
            let token = session_token(&request);
            blocking(&app, move |app| {
                with_session(app, token.as_deref(), |db, _, _| match id.map(|id| db.record(id)) {
                    Ok(Ok(Some(record))) => {
                        let body = serde_json::json!({ "id": record.id, "owner": record.owner, "body": record.body });
                        (StatusCode::OK, "application/json", Bytes::from(body.to_string()))
                    }
                    Ok(Ok(None)) => text(StatusCode::NOT_FOUND, "no such record"),
                    Ok(Err(_)) => text(StatusCode::INTERNAL_SERVER_ERROR, "query failed"),
                    Err(_) => text(StatusCode::BAD_REQUEST, "id must be a number"),
                })
            })
            .await
        }
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
    if let Some(cookie) = set_cookie.and_then(|c| hyper::header::HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(hyper::header::SET_COOKIE, cookie);
    }
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

/// Runs `work` on tokio's blocking threads: a journey request may wait for the database's one
/// writing connection, or for a checkpoint's fsync, and on the event loop that wait would stall
/// every other connection of its thread.
async fn blocking(app: &Arc<App>, work: impl FnOnce(&App) -> Reply + Send + 'static) -> Reply {
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || work(&app))
        .await
        .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "the request's handler panicked"))
}

/// `POST /login`: `{"user":…,"password":…}` for a session token.
fn log_in(app: &App, body: &[u8]) -> Reply {
    let Ok(db) = app.journey() else { return text(StatusCode::INTERNAL_SERVER_ERROR, "database unavailable") };
    let credentials: Option<(String, String)> = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| Some((v.get("user")?.as_str()?.to_owned(), v.get("password")?.as_str()?.to_owned())));
    let Some((user, password)) = credentials else {
        return text(StatusCode::BAD_REQUEST, r#"the body must be {"user":"…","password":"…"}"#);
    };
    match db.log_in(&user, &password) {
        Ok(Some(token)) => {
            (StatusCode::OK, "application/json", Bytes::from(serde_json::json!({ "token": token }).to_string()))
        }
        Ok(None) => text(StatusCode::UNAUTHORIZED, "wrong user or password"),
        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "login failed"),
    }
}

/// The session token: of an `Authorization: Bearer TOKEN` header, else of the cookie `session`.
///
/// The cookie is found by hand: the demo server needs one name out of a `Cookie` header
/// (`a=1; session=…`), with no attributes to interpret; the client's side, where the rules are,
/// is loadbench's jar.
fn session_token(request: &Request<Incoming>) -> Option<String> {
    let headers = request.headers();
    if let Some(value) = headers.get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        return value.strip_prefix("Bearer ").map(|token| token.trim().to_owned());
    }
    headers
        .get_all(hyper::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix("session=").map(str::to_owned))
        .filter(|token| !token.is_empty())
}

/// Runs `handle` with the database, the session's account and its token, or answers 401 when
/// `token` names no open session.
fn with_session(app: &App, token: Option<&str>, handle: impl FnOnce(&journey::Journey, i64, &str) -> Reply) -> Reply {
    let Ok(db) = app.journey() else { return text(StatusCode::INTERNAL_SERVER_ERROR, "database unavailable") };
    let Some(token) = token else { return text(StatusCode::UNAUTHORIZED, "log in first") };
    match db.session(token) {
        Ok(Some(user)) => handle(db, user, token),
        Ok(None) => text(StatusCode::UNAUTHORIZED, "no such session"),
        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "session lookup failed"),
    }
}
