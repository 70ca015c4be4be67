use super::*;

fn url_error(url: &str) -> String {
    match Request::new(Method::GET, url) {
        Ok(r) => panic!("{url} was accepted: {r:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn urls_are_checked_and_split_into_origin_and_path() {
    let r = Request::new(Method::POST, "http://localhost:9090").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.origin.as_str(), r.path.as_str()), ("http://localhost:9090", "/"));
    assert_eq!(r.default_name(), "POST /");
    let r = Request::new(Method::GET, "http://127.0.0.1/a/b?x=1&y=2").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.origin.as_str(), r.path()), ("http://127.0.0.1", "/a/b?x=1&y=2"));

    let r = Request::new(Method::GET, "https://x:8443/y").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.origin.as_str(), r.path()), ("https://x:8443", "/y"));
    assert_eq!(
        url_error("ftp://x/"),
        "`ftp://x/` is not a valid URL: the scheme must be http:// or https://, not ftp://"
    );
    assert!(url_error("127.0.0.1:9090").contains("it needs a scheme and a host"), "{}", url_error("127.0.0.1:9090"));
    assert!(url_error("/just/a/path").contains("it needs a scheme and a host"));
    assert!(url_error("http://").starts_with("`http://` is not a valid URL"));
    assert!(url_error("http://a b/").starts_with("`http://a b/` is not a valid URL"));
    assert!(url_error("http://me@host/").contains("user info"));
}

#[test]
fn headers_and_methods_parse_or_say_what_is_wrong() {
    let h: Header = "Content-Type:application/json".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.to_string(), "content-type: application/json");
    let h: Header = "x-empty:".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.value(), "");
    let err = |text: &str| text.parse::<Header>().map_err(|e| e.to_string()).err().unwrap_or_default();
    assert_eq!(err("novalue"), "`novalue` is not a valid header: it has no `:`; write it as 'name: value'");
    assert!(err("bad name: v").contains("the name is not a token"));
    assert!(err("x: a\u{7}b").contains("control character"));
    assert_eq!(Request::parse_method("post").ok(), Some(Method::POST));
    assert_eq!(Request::parse_method("PURGE").map(|m| m.to_string()).ok().as_deref(), Some("PURGE"));
    assert!(Request::parse_method("GE T").is_err());
}
