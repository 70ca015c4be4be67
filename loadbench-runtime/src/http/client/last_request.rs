//! A user's previous request, so that the next one, usually the same, is cheap to prepare.
//!
//! Scenario bodies send the same few requests over and over. Remembering the last path (checked
//! and joined to the target's base path) and whether the encoded request is still in the user's
//! buffer saves the parse and the encoding; keeping short paths inline, in the user's own state,
//! saves a cache miss per request when a thousand users take turns on one core.

use http::Method;

/// Paths up to this many bytes are compared without leaving the user's state.
const INLINE: usize = 32;

/// The path of the request being built, and what is known about the encoded one.
#[derive(Debug, Default)]
// What every request reads first, `long` last: it sits in a user's state between other fields
// that every request reads (`Ctx`'s layout).
#[repr(C)]
pub(crate) struct LastRequest {
    inline: [u8; INLINE],
    len: usize,
    /// The method of the request encoded in the user's buffer, when that request had this path,
    /// no headers of its own and no body, so that it can be sent again as it is.
    encoded: Option<Method>,
    /// The path as sent, under the target's base path; `None` before the first request.
    joined: Option<String>,
    /// The path as given, when it is longer than [`INLINE`].
    long: String,
}

impl LastRequest {
    /// Whether `path` is the last path given.
    #[inline]
    pub(crate) fn is(&self, path: &str) -> bool {
        if self.joined.is_none() || path.len() != self.len {
            return false;
        }
        if path.len() <= INLINE { &self.inline[..path.len()] == path.as_bytes() } else { self.long == path }
    }

    /// Remembers `path`, sent as `joined`.
    pub(crate) fn set(&mut self, path: &str, joined: String) {
        self.len = path.len();
        self.long.clear();
        match self.inline.get_mut(..path.len()) {
            Some(inline) => inline.copy_from_slice(path.as_bytes()),
            None => self.long.push_str(path),
        }
        self.joined = Some(joined);
        self.encoded = None;
    }

    /// The last path as sent.
    pub(crate) fn joined(&self) -> Option<&str> {
        self.joined.as_deref()
    }

    /// Whether the user's buffer already holds `method` for the last path, without headers or
    /// body.
    pub(crate) fn is_encoded(&self, method: &Method) -> bool {
        self.encoded.as_ref() == Some(method)
    }

    /// Records what the user's buffer now holds: a plain `method` request for the last path, or
    /// (`None`) something else.
    pub(crate) fn set_encoded(&mut self, method: Option<Method>) {
        self.encoded = method;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_short_and_long_paths() {
        let mut last = LastRequest::default();
        assert!(!last.is(""), "nothing before the first request");
        last.set("/a", "/api/a".into());
        assert!(last.is("/a") && !last.is("/b") && !last.is("/a/"));
        assert_eq!(last.joined(), Some("/api/a"));
        let long = format!("/{}", "x".repeat(100));
        last.set(&long, long.clone());
        assert!(last.is(&long) && !last.is("/a"));
        last.set("/a", "/a".into());
        assert!(last.is("/a") && !last.is(&long));
    }

    #[test]
    fn a_new_path_forgets_the_encoded_request() {
        let mut last = LastRequest::default();
        last.set("/a", "/a".into());
        last.set_encoded(Some(Method::GET));
        assert!(last.is_encoded(&Method::GET) && !last.is_encoded(&Method::POST));
        last.set("/b", "/b".into());
        assert!(!last.is_encoded(&Method::GET));
    }
}
