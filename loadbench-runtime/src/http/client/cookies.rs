//! A virtual user's cookie jar: `Set-Cookie` stored, `Cookie` sent, as a browser does. The rules of
//! RFC 6265 (domain, path, expiry, `Secure`, `HttpOnly`) are the `cookie_store` crate's; this file
//! only decides when the jar is looked at and what an iteration keeps ([`CookieMode`]).
//!
//! An empty jar costs a request one branch: the request's URL (which `cookie_store` works on) is
//! built only when the jar holds a cookie or the response set one (`h1::parse_head` notices
//! `Set-Cookie` as it walks the headers).

use cookie_store::{CookieStore, RawCookie};
use http::HeaderMap;
use http::header::{HeaderValue, SET_COOKIE};

use crate::config::CookieMode;
use crate::error::{Error, ErrorKind, Result};
use crate::http::wire::target::Target;

/// One user's jar and what its iterations keep.
#[derive(Debug, Default)]
pub(crate) struct Jar {
    mode: CookieMode,
    /// `None` until the first cookie, so that a user without cookies never builds a URL.
    store: Option<Box<CookieStore>>,
    /// [`CookieMode::Iteration`]: the jar as the user's setup left it, put back at the end of
    /// every iteration that changed it.
    kept: Option<Box<CookieStore>>,
    /// Whether the current iteration changed the jar ([`CookieMode::Iteration`] only).
    changed: bool,
}

impl Jar {
    pub(crate) fn new(mode: CookieMode) -> Jar {
        Jar { mode, ..Jar::default() }
    }

    /// Whether the jar stores what a response sets (cookies are not off).
    #[inline]
    pub(crate) fn accepts(&self) -> bool {
        self.mode != CookieMode::Off
    }

    /// Whether a request must ask the jar for a `Cookie` header.
    #[inline]
    pub(crate) fn has_cookies(&self) -> bool {
        self.store.is_some()
    }

    /// The `Cookie` header for a request to `path` (path and query, as sent) on the target, if
    /// the jar holds cookies for it.
    #[cold]
    pub(crate) fn header(&self, target: &Target, path: &str) -> Option<HeaderValue> {
        let store = self.store.as_deref()?;
        let url = target.url_for(path)?;
        let mut value = String::new();
        for (name, cookie) in store.get_request_values(&url) {
            if !value.is_empty() {
                value.push_str("; ");
            }
            value.push_str(name);
            value.push('=');
            value.push_str(cookie);
        }
        // Values came through `Set-Cookie` or `Cookies::set`, both of which refuse what a header
        // cannot carry; an empty header is not sent.
        (!value.is_empty()).then(|| HeaderValue::from_str(&value).ok()).flatten()
    }

    /// Stores the cookies a response to `path` on the target set (its `Set-Cookie` headers).
    #[cold]
    pub(crate) fn store_from(&mut self, target: &Target, path: &str, headers: &HeaderMap) {
        if self.mode == CookieMode::Off {
            return;
        }
        let Some(url) = target.url_for(path) else { return };
        let cookies = headers
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|text| RawCookie::parse(text.to_owned()).ok());
        self.store_mut().store_response_cookies(cookies, &url);
    }

    /// The store, made on first use; marks the jar changed for [`CookieMode::Iteration`].
    fn store_mut(&mut self) -> &mut CookieStore {
        self.changed = self.mode == CookieMode::Iteration;
        self.store.get_or_insert_with(Box::default)
    }

    /// The user's setup is over: under [`CookieMode::Iteration`], what the jar holds now is what
    /// every iteration starts from.
    pub(crate) fn setup_done(&mut self) {
        if self.mode == CookieMode::Iteration {
            self.kept = self.store.clone();
            self.changed = false;
        }
    }

    /// An iteration is over: under [`CookieMode::Iteration`], cookies it got are dropped.
    #[inline]
    pub(crate) fn iteration_done(&mut self) {
        if self.changed {
            self.restore();
        }
    }

    #[cold]
    fn restore(&mut self) {
        self.store.clone_from(&self.kept);
        self.changed = false;
    }
}

/// A virtual user's cookies, from [`Ctx::cookies`](crate::Ctx::cookies): read, set, remove.
///
/// Each user has a jar of its own, on by default: `Set-Cookie` answers are stored (domain, path
/// and expiry as RFC 6265 says, through the `cookie_store` crate) and sent back on the requests
/// they match, redirects included. What an iteration keeps is the scenario's `cookies = "…"`:
///
/// - `"iteration"` (the default): cookies the user's `setup` got are kept for its whole run, and
///   cookies set during an iteration are dropped at its end, so that every iteration (warmup ones
///   too) starts from the jar `setup` left. Log in once per user, in `setup`.
/// - `"user"`: cookies are kept for the user's whole run, from iteration to iteration.
/// - `"off"`: no jar: `Set-Cookie` is ignored, no `Cookie` header is sent, and
///   [`Cookies::set`] fails.
///
/// ```no_run
/// async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     // The answer's `Set-Cookie: session=…` goes into the user's jar.
///     ctx.post("/login").body("user=ada&password=secret").send().await?.expect_status(200)?;
///     Ok(())
/// }
///
/// #[loadbench::scenario(concurrency = 10, count = 1_000, setup = log_in)]
/// async fn account(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     // Sent with `Cookie: session=…`.
///     ctx.get("/me").send().await?.expect_status(200)?;
///     if ctx.cookies().get("session").is_none() {
///         return Err(loadbench::Error::msg("logged out"));
///     }
///     ctx.cookies().set("theme", "dark")?;
///     Ok(())
/// }
/// # fn main() {}
/// ```
#[derive(Debug)]
pub struct Cookies<'a> {
    pub(in crate::http) jar: &'a mut Jar,
    pub(in crate::http) target: &'a Target,
}

impl Cookies<'_> {
    /// The value of the cookie called `name`, whatever its path, unless it has expired.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.jar.store.as_deref()?.iter_unexpired().find(|c| c.name() == name).map(|c| c.value())
    }

    /// Sets the cookie `name` to `value` for the target's host and every path, as if the server
    /// had sent `Set-Cookie: name=value; Path=/`. Under `cookies = "iteration"`, a cookie set
    /// during an iteration is dropped at its end, and one set in `setup` is kept.
    ///
    /// Fails with a scenario error when cookies are off, or when the name or value cannot be a
    /// cookie's (RFC 6265: a token for the name, no `;`, `,`, space, quote or control character
    /// in the value).
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        if self.jar.mode == CookieMode::Off {
            return Err(Error::msg(format!("cannot set cookie `{name}`: the scenario has `cookies = \"off\"`")));
        }
        let token = |c: char| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c);
        let octet = |c: char| c.is_ascii_graphic() && !",;\\\"".contains(c);
        if name.is_empty() || !name.chars().all(token) || !value.chars().all(octet) {
            return Err(Error::msg(format!("`{name}={value}` is not a valid cookie")));
        }
        let url = self.target.url_for("/").ok_or_else(|| Error::msg("the target URL cannot carry cookies"))?;
        let cookie = RawCookie::build((name.to_owned(), value.to_owned())).path("/").build();
        self.jar
            .store_mut()
            .insert_raw(&cookie, &url)
            .map(|_| ())
            .map_err(|e| Error::with_source(ErrorKind::Scenario, format!("cannot set cookie `{name}`"), e))
    }

    /// Removes every cookie called `name` (whatever its domain and path); returns whether there
    /// was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(store) = self.jar.store.as_deref() else { return false };
        let found: Vec<(String, String)> = store
            .iter_any()
            .filter(|c| c.name() == name)
            .filter_map(|c| Some((c.domain.as_cow()?.into_owned(), String::from(&*c.path))))
            .collect();
        if found.is_empty() {
            return false;
        }
        let store = self.jar.store_mut();
        for (domain, path) in &found {
            store.remove(domain, path, name);
        }
        true
    }

    /// Removes every cookie.
    pub fn clear(&mut self) {
        if self.jar.store.is_some() {
            self.jar.store_mut().clear();
        }
    }

    /// Every cookie in the jar that has not expired, as `(name, value)`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.jar.store.as_deref().into_iter().flat_map(|store| store.iter_unexpired().map(|c| (c.name(), c.value())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_cookie(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(SET_COOKIE, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn an_iteration_starts_from_the_jar_setup_left() {
        let target = Target::resolve("http://127.0.0.1:9/").unwrap();
        let mut jar = Jar::new(CookieMode::Iteration);
        assert!(!jar.has_cookies());
        jar.store_from(&target, "/login", &set_cookie(&["session=s1; Path=/"]));
        jar.setup_done();
        jar.iteration_done();
        jar.store_from(&target, "/cart", &set_cookie(&["cart=c1; Path=/"]));
        assert_eq!(jar.header(&target, "/").unwrap().to_str().unwrap().len(), "session=s1; cart=c1".len());
        jar.iteration_done();
        assert_eq!(jar.header(&target, "/").unwrap(), "session=s1");
    }

    #[test]
    fn paths_and_expiry_are_the_crates() {
        let target = Target::resolve("http://127.0.0.1:9/").unwrap();
        let mut jar = Jar::new(CookieMode::User);
        jar.store_from(&target, "/", &set_cookie(&["a=1; Path=/admin", "b=2; Path=/", "c=3; Max-Age=0"]));
        assert_eq!(jar.header(&target, "/"), Some(HeaderValue::from_static("b=2")));
        assert!(jar.header(&target, "/admin/x?y=1").unwrap().to_str().unwrap().contains("a=1"));
        jar.iteration_done();
        let mut cookies = Cookies { jar: &mut jar, target: &target };
        assert_eq!((cookies.get("b"), cookies.get("c")), (Some("2"), None));
        assert!(cookies.set("bad name", "x").is_err() && cookies.set("n", "a;b").is_err());
        cookies.set("n", "v").unwrap();
        assert_eq!(cookies.get("n"), Some("v"));
        assert!(cookies.remove("n") && !cookies.remove("n"));
        cookies.clear();
        assert_eq!(cookies.iter().count(), 0);
    }

    #[test]
    fn off_stores_nothing() {
        let target = Target::resolve("http://127.0.0.1:9/").unwrap();
        let mut jar = Jar::new(CookieMode::Off);
        jar.store_from(&target, "/", &set_cookie(&["a=1"]));
        assert!(!jar.has_cookies());
        assert!(Cookies { jar: &mut jar, target: &target }.set("a", "1").is_err());
    }
}
