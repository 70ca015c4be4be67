//! Following redirects, when a request asks ([`RequestBuilder::follow_redirects`], the
//! attribute's `follow_redirects = N`, `--follow-redirects N`).
//!
//! Not followed by default: a measuring tool reports the server's answer, one exchange per
//! request, and following silently would add round trips to the latency measured. curl and wrk
//! do not follow either; oha and k6 do by default (k6 up to 10).
//!
//! A user's connection is bound to the target, so only redirects within its origin (scheme, host
//! and port) are followed; one elsewhere ends the chain and its 3xx is the response.

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LOCATION, TRANSFER_ENCODING};
use http::{Method, StatusCode};

use super::builder::RequestBuilder;
use super::ctx::{Ctx, sent_path};
use super::session::Chain;
use crate::http::wire::h1;
use crate::http::wire::response::Response;

impl<'a> RequestBuilder<'a> {
    /// Follows up to `hops` redirects within the target's origin, over the scenario's
    /// `follow_redirects` (0, none, unless the attribute or `--follow-redirects` says otherwise).
    ///
    /// A 301, 302 or 303 is followed with a GET without body (a HEAD stays a HEAD), a 307 or 308
    /// with the same method, headers and body; `Location` may be relative or absolute. A
    /// redirect to another scheme, host or port is not followed (the user's connection is bound
    /// to the target): its 3xx is the response. When the limit is reached, the last 3xx is the
    /// response, so `.expect_status(200)` fails it. Cookies a 3xx sets are stored before the
    /// next hop. The request's latency and its timeout cover every hop; each hop is counted in
    /// the report's `http.redirects`.
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// // `/old` answers `302 Found` with `Location: /new`.
    /// ctx.get("/old").follow_redirects(5).send().await?.expect_status(200)?;
    /// # Ok(()) }
    /// ```
    pub fn follow_redirects(self, hops: u32) -> Self {
        self.ctx.follow = hops;
        self
    }
}

/// The method of the next hop after `status`, and whether it keeps the request's body; `None`
/// for a status that is not followed (300, 304, 305 …).
fn next_hop(status: StatusCode, method: &Method) -> Option<(Method, bool)> {
    match status.as_u16() {
        301..=303 if *method == Method::HEAD => Some((Method::HEAD, false)),
        301..=303 => Some((Method::GET, false)),
        307 | 308 => Some((method.clone(), true)),
        _ => None,
    }
}

/// `path` and query of `url`, as a request line carries them.
fn request_target(url: &url::Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

impl Ctx {
    /// Makes the request that follows `response`, a redirect, and returns `true`; or `false`
    /// when it is not followed: the request's limit reached, a status not followed (300, 304 …),
    /// no usable `Location`, or another origin. The user's `chain` is where the chain stands
    /// (`None` before the first hop), its `method` the last hop's; both are the next's once made.
    pub(in crate::http) fn next_hop(&mut self, response: &Response) -> bool {
        if self.chain.as_ref().is_some_and(|chain| chain.hops >= self.follow) {
            return false;
        }
        // Whether it is followed is known before anything changes: a redirect not followed (a
        // 304, say) leaves the request as built, and `wire` holding it, for the next iteration.
        let Some((next, keep_body)) = next_hop(response.status(), &self.method) else { return false };
        let location = response.headers().get(LOCATION).and_then(|value| value.to_str().ok());
        let from = sent_path(self.chain.as_deref(), &self.last);
        let Some(url) = location.and_then(|location| self.target.resolve_location(from, location)) else {
            return false;
        };
        if !self.target.same_origin(&url) {
            return false;
        }
        let chain = match self.chain.take() {
            Some(chain) => chain,
            None => {
                // `wire` will no longer hold the request as built: the next one with this path
                // is encoded again.
                self.last.set_encoded(None);
                Box::new(Chain { resend: self.resend.take(), path: String::new(), hops: 0 })
            }
        };
        let chain = self.chain.insert(chain);
        chain.path = request_target(&url);
        chain.hops += 1;
        self.method = next;
        let resend = &chain.resend;
        let mut headers = resend.as_ref().map(|r| r.headers.clone()).unwrap_or_default();
        let body = match resend {
            Some(r) if keep_body => r.body.clone(),
            _ => {
                for name in [CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING] {
                    headers.remove(name);
                }
                Bytes::new()
            }
        };
        // The jar's cookies for the new path, beside any the scenario wrote, as on the first.
        if let Some(cookie) = self.jar.header(&self.target, &chain.path) {
            headers.append(COOKIE, cookie);
        }
        self.wire.clear();
        h1::encode_request(&mut self.wire, &self.method, &chain.path, self.target.host_header(), &headers, &body);
        // HTTP/2 and HTTP/3 send the hop's headers and body apart from `wire`.
        if self.lane.as_ref().is_some_and(|lane| lane.sends_parts()) {
            self.parts = (headers, body);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::response::Parts;

    #[test]
    fn see_other_becomes_a_get_and_temporary_keeps_the_method() {
        let hop = |code: u16, method: Method| next_hop(StatusCode::from_u16(code).unwrap(), &method);
        assert_eq!(hop(302, Method::POST), Some((Method::GET, false)));
        assert_eq!(hop(303, Method::HEAD), Some((Method::HEAD, false)));
        assert_eq!(hop(307, Method::POST), Some((Method::POST, true)));
        assert_eq!(hop(308, Method::PUT), Some((Method::PUT, true)));
        assert_eq!(hop(304, Method::GET), None);
        assert_eq!(hop(300, Method::GET), None);
    }

    /// A response with `status` and, when given, a `Location`.
    fn response(status: u16, location: Option<&str>) -> Response {
        let head = match location {
            Some(location) => format!("HTTP/1.1 {status} X\r\nlocation: {location}\r\n\r\n"),
            None => format!("HTTP/1.1 {status} X\r\n\r\n"),
        };
        let len = head.len();
        Response::from_parts(Parts::new(StatusCode::from_u16(status).unwrap(), Bytes::from(head), len, false))
    }

    #[test]
    fn a_redirect_not_followed_leaves_the_request_as_built() {
        let target = std::rc::Rc::new(crate::http::wire::target::Target::resolve("http://127.0.0.1:1/").unwrap());
        let mut ctx = Ctx::new(target, std::time::Duration::from_secs(1), 0, None);
        ctx.follow = 5;
        ctx.last.set("/a", "/a".into());
        ctx.last.set_encoded(Some(Method::GET));
        // 304, and a 302 to another origin: neither is followed, and the encoded request stays.
        for not_followed in [response(304, None), response(302, Some("http://example.com/b"))] {
            assert!(!ctx.next_hop(&not_followed));
            assert!(ctx.chain.is_none() && ctx.last.is_encoded(&Method::GET));
        }
        assert!(ctx.next_hop(&response(302, Some("/b"))));
        assert_eq!(ctx.chain.as_ref().map(|chain| (chain.path.as_str(), chain.hops)), Some(("/b", 1)));
        assert!(!ctx.last.is_encoded(&Method::GET), "the hop's request is in `wire` now");
        assert!(ctx.wire.starts_with(b"GET /b HTTP/1.1\r\n"));
    }
}
