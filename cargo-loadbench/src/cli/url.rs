//! The command line of `cargo loadbench url`: one request under load.

use std::time::Duration;

use loadbench::Method;
use loadbench::load::{Rate, RateError};
use loadbench::oneshot::{Header, Request};

use super::parse_duration;
use crate::targets::TargetArg;

const URL_AFTER_HELP: &str = "\
Every response with a status of 400 or above counts as a failed request (kind `status`);
redirects are not followed. The output, gating and --watch options of `cargo loadbench` apply
(see cargo loadbench --help); baselines are kept under the workspace's target directory, or
./target/loadbench/baselines outside a Cargo workspace, unless --baseline-dir says otherwise.

Side by side: with two or more --target NAME=URL, the request (method, path and query, headers,
body) is sent to each server in turn, interleaved with --runs N (a b a b …), and each is compared
with the first, as scenarios are. URL may then be a bare path such as /items?x=1, or a full URL
whose path and query are sent to every target (its host and port are not used). A single
--target is refused: URL names the server.

Exit codes: 0 the run completed (failed requests are counted, not fatal), 1 a threshold failed or
a regression with --fail-on-regression (never with --no-gate), 2 a bad flag, URL (port 1 to 65535), header or body
file, an output file that cannot be written or a baseline refused, 3 the run could not start (the
host does not resolve), 130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM, 129 by SIGHUP (a closed terminal).";

/// Arguments of `cargo loadbench url`.
#[derive(Debug, clap::Args)]
#[command(after_help = URL_AFTER_HELP)]
pub struct UrlArgs {
    /// The URL to request, such as http://127.0.0.1:9090/ (http:// or https://). With two or more
    /// --target NAME=URL: a path such as /items?x=1, or a URL whose path and query are sent to
    /// every target
    #[arg(value_name = "URL", value_parser = parse_location)]
    pub location: Location,

    /// Send the request to this server instead, as NAME=URL, given two or more times: each runs
    /// side by side, compared with the first (a `--target` before `url` counts too)
    #[arg(long = "target", value_name = "NAME=URL", value_parser = TargetArg::parse)]
    pub targets: Vec<TargetArg>,

    /// Virtual users, each with its own connection unless --connections shares fewer: requests
    /// in flight at once (with --rate, the users available to serve the rate)
    #[arg(short = 'c', long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: u32,

    /// Send exactly N requests in total [default: 200, unless --duration]
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,

    /// Keep starting requests for this long, such as 30s or 1m 30s
    #[arg(short = 'd', long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Open model: start requests at this rate, such as 2000, 2000/s or 120/m
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub rate: Option<Rate>,

    /// The request method (case-insensitive)
    #[arg(short = 'm', long, value_name = "METHOD", default_value = "GET", value_parser = parse_method)]
    pub method: Method,

    /// A request header, as 'name: value' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<Header>,

    /// The request body: TEXT, or @FILE to send a file's contents (read once, before the run)
    #[arg(long, value_name = "TEXT|@FILE", value_parser = parse_body)]
    pub body: Option<Body>,

    /// Per-request timeout (connect, send and whole response) [default: 30s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// The name in the table, the JSON, baselines and `--threshold NAME:…` [default: the method
    /// and the URL's path, such as `GET /items`]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// A request body, read before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body(pub Vec<u8>);

/// What `cargo loadbench url` is pointed at: a full URL, or, for `--target`s, the path and query
/// to send to each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The URL as given; `None` for a bare path.
    pub url: Option<String>,
    /// The path and query: the bare path as given, or the URL's (`/` when it has none).
    pub path: String,
}

/// A URL that a one-shot request can be sent to, or a path and query (starting with `/`) for the
/// `--target`s to supply the server of.
fn parse_location(text: &str) -> Result<Location, String> {
    if text.starts_with('/') {
        // Checked as the path of a URL: the same rules decide whether it can be sent.
        return match Request::new(Method::GET, &format!("http://127.0.0.1{text}")) {
            Ok(request) if request.path() == text => Ok(Location { url: None, path: text.to_owned() }),
            _ => Err(format!("`{text}` is not a valid path and query")),
        };
    }
    let request = Request::new(Method::GET, text).map_err(|e| e.to_string())?;
    Ok(Location { url: Some(text.to_owned()), path: request.path().to_owned() })
}

fn parse_method(text: &str) -> Result<Method, String> {
    Request::parse_method(text).map_err(|e| e.to_string())
}

fn parse_header(text: &str) -> Result<Header, String> {
    text.parse().map_err(|e: loadbench::oneshot::RequestError| e.to_string())
}

fn parse_rate(text: &str) -> Result<Rate, String> {
    text.parse().map_err(|e: RateError| e.to_string())
}

/// `TEXT`, or `@FILE`: the file is read here, so a missing one stops the command before any
/// request (curl's `-d @file`).
fn parse_body(text: &str) -> Result<Body, String> {
    match text.strip_prefix('@') {
        Some(path) => std::fs::read(path).map(Body).map_err(|e| format!("cannot read body file `{path}`: {e}")),
        None => Ok(Body(text.as_bytes().to_vec())),
    }
}
