//! Selecting scenarios by name: what a bench binary and `cargo loadbench` do with the `FILTER`
//! words and `--exact`.

/// Which scenarios a run selects: those whose name contains one of the filters, or equals one
/// with `exact`; every scenario when there is no filter.
///
/// ```
/// use loadbench::cli::Filter;
///
/// let filter = Filter::new(vec!["hello".into()], false);
/// assert!(filter.matches("hello_admin"));
/// assert!(!Filter::new(vec!["hello".into()], true).matches("hello_admin"));
/// assert!(Filter::default().matches("anything"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    filters: Vec<String>,
    exact: bool,
}

impl Filter {
    /// The filters as given on the command line, matched against whole names with `exact`.
    pub fn new(filters: Vec<String>, exact: bool) -> Filter {
        Filter { filters, exact }
    }

    /// Whether the scenario called `name` is selected.
    pub fn matches(&self, name: &str) -> bool {
        self.filters.is_empty()
            || self.filters.iter().any(|f| if self.exact { name == f } else { name.contains(f.as_str()) })
    }

    /// The error for filters that selected nothing, listing the scenarios there are.
    pub fn no_match<'a>(&self, available: impl IntoIterator<Item = &'a str>) -> NoMatch {
        let mut available: Vec<&str> = available.into_iter().collect();
        available.sort_unstable();
        available.dedup();
        NoMatch {
            filters: self.filters.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
            available: available.join(", "),
        }
    }
}

/// No scenario matches the filters: the one message for it, from a bench binary or from
/// `cargo loadbench`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no scenario matches {filters}; available: {available}")]
pub struct NoMatch {
    /// The filters, each in backticks.
    filters: String,
    /// Every scenario name, sorted.
    available: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_select_by_substring_or_whole_name_and_say_what_exists() {
        let some = Filter::new(vec!["hello".into(), "login".into()], false);
        assert!(some.matches("hello_admin") && some.matches("login") && !some.matches("checkout"));
        let exact = Filter::new(vec!["hello".into()], true);
        assert!(exact.matches("hello") && !exact.matches("hello_admin"));
        let none = Filter::new(vec!["xyz".into()], false).no_match(["login", "hello", "hello"]);
        assert_eq!(none.to_string(), "no scenario matches `xyz`; available: hello, login");
    }
}
