//! "Did you mean …?" for a misspelt key or value: the closest known word, if it is close enough.

/// The candidate closest to `word` by Damerau-Levenshtein distance (a swap of two letters is one
/// edit), when it is at most a third of the longer word's length (at least 1): `concurency` finds
/// `concurrency`, `users` finds nothing. Ties go to the first candidate.
pub(crate) fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(&word, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= (word.len().max(candidate.len()) / 3).max(1))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::closest;

    const KEYS: [&str; 5] = ["concurrency", "count", "duration", "timeout", "max_concurrency"];

    #[test]
    fn close_words_are_suggested_and_unrelated_ones_are_not() {
        assert_eq!(closest("concurency", KEYS), Some("concurrency"));
        assert_eq!(closest("cuont", KEYS), Some("count"));
        assert_eq!(closest("durration", KEYS), Some("duration"));
        assert_eq!(closest("Timeout", KEYS), Some("timeout"));
        assert_eq!(closest("max_concurency", KEYS), Some("max_concurrency"));
        assert_eq!(closest("users", KEYS), None);
        assert_eq!(closest("x", KEYS), None);
        assert_eq!(closest("sequental", ["sequential", "random", "per_user"]), Some("sequential"));
        assert_eq!(closest("peruser", ["sequential", "random", "per_user"]), Some("per_user"));
    }
}
