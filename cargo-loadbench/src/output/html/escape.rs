//! HTML escaping, the one way any text from the user or the server reaches the page: scenario,
//! step, request and target names, URLs, error messages, status codes, paths, host names. The
//! five characters that could end a text node or an attribute value (`& < > " '`) become
//! character references, so the same escaped text is safe between tags and inside a quoted
//! attribute alike; so does `=`, so that no escaped text reads as an attribute assignment
//! (`onerror=`) even to a scan of the source.

use std::fmt;

/// `text` with `& < > " ' =` escaped.
pub fn escape(text: &str) -> String {
    Esc(text).to_string()
}

/// Text that is escaped when formatted: `format!("<td>{}</td>", Esc(name))`.
#[derive(Debug, Clone, Copy)]
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'', '=']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'=' => "&#61;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

/// `text` escaped, with each `` `quoted` `` part (as the notes and reasons shared with the
/// Markdown output write names) in `<code>`; an unpaired backtick is kept as it is.
pub fn with_code(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{}</code>", Esc(part)));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_characters_become_references() {
        assert_eq!(escape(r#"a & b < c > d " e ' f"#), "a &amp; b &lt; c &gt; d &quot; e &#39; f");
        assert_eq!(escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(escape(r#""><img src=x onerror=alert(1)>"#), "&quot;&gt;&lt;img src&#61;x onerror&#61;alert(1)&gt;");
        assert_eq!(escape("/search?q=a&b=c"), "/search?q&#61;a&amp;b&#61;c");
    }

    #[test]
    fn quoted_names_become_code() {
        assert_eq!(with_code("against baseline `main<x>` (p99)"), "against baseline <code>main&lt;x&gt;</code> (p99)");
        assert_eq!(with_code("a `b` c `d`"), "a <code>b</code> c <code>d</code>");
        assert_eq!(with_code("one ` alone <"), "one ` alone &lt;");
    }

    #[test]
    fn other_text_is_kept_as_it_is() {
        assert_eq!(escape(""), "");
        assert_eq!(escape("GET /items/{id} → 12.3ms µs ✅"), "GET /items/{id} → 12.3ms µs ✅");
        assert_eq!(escape("&&"), "&amp;&amp;");
        assert_eq!(format!("[{}]", Esc("é<")), "[é&lt;]");
    }
}
