//! Numbers as both sides write them: Rust literals in the attribute may group digits with `_`
//! (`1_000`), so the command line accepts that too.

/// `text` without its digit separators, trimmed.
pub(crate) fn ungrouped(text: &str) -> String {
    text.trim().replace('_', "")
}

/// A whole number, digits only (no sign), with optional `_` separators.
pub(crate) fn whole(text: &str) -> Option<u64> {
    let digits = ungrouped(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A decimal number, with optional `_` separators.
pub(crate) fn decimal(text: &str) -> Option<f64> {
    ungrouped(text).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_signs() {
        assert_eq!(whole("1_000"), Some(1000));
        assert_eq!(whole(" 42 "), Some(42));
        assert_eq!(whole("+1"), None);
        assert_eq!(whole("-1"), None);
        assert_eq!(whole(""), None);
        assert_eq!(whole("1.5"), None);
        assert_eq!(decimal("0.01"), Some(0.01));
        assert_eq!(decimal("1_000.5"), Some(1000.5));
        assert_eq!(decimal("-1"), Some(-1.0));
        assert_eq!(decimal("ten"), None);
    }
}
