//! Live metrics to Prometheus (`--remote-write URL`, `--remote-write-label K=V`,
//! `--remote-write-interval`, `--remote-write-histograms`): one grammar for the bench binary's
//! command line and `cargo loadbench`'s, which passes the flags on to every bench binary it runs.
//! The flags parse whether or not the runtime's `remote-write` feature is built; a run that asks
//! for them without it is refused before any load ([`RemoteWriteArgs::config`]).

use std::ffi::OsString;
use std::fmt;
use std::time::Duration;

/// Where `--help` lists these flags.
const HEADING: &str = "Live metrics";

/// The shortest interval between pushes: below it a push could not finish before the next.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The labels loadbench's series carry (`step` and `request` name a row), which a user's label
/// may not replace.
pub const RESERVED_LABELS: [&str; 7] = ["scenario", "shard", "run", "kind", "le", "step", "request"];

/// How latency histograms are pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistogramKind {
    /// Prometheus native histograms (Prometheus started with `--enable-feature=native-histograms`).
    #[default]
    Native,
    /// Classic histograms: a `_bucket` series per bound (`le`), `_count` and `_sum`.
    Classic,
}

impl HistogramKind {
    /// Reads `native` or `classic`.
    pub fn parse(text: &str) -> Result<HistogramKind, String> {
        match text.trim() {
            "native" => Ok(HistogramKind::Native),
            "classic" => Ok(HistogramKind::Classic),
            _ => Err(format!("`{text}` is not a kind of histogram: give native or classic")),
        }
    }
}

impl fmt::Display for HistogramKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HistogramKind::Native => "native",
            HistogramKind::Classic => "classic",
        })
    }
}

/// One `--remote-write-label NAME=VALUE`.
///
/// ```
/// use loadbench::cli::Label;
/// let label = Label::parse("env=staging").unwrap();
/// assert_eq!((label.name.as_str(), label.value.as_str()), ("env", "staging"));
/// assert!(Label::parse("scenario=x").is_err(), "every series has its scenario already");
/// assert!(Label::parse("9lives=x").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// A Prometheus label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`.
    pub name: String,
    /// Any text.
    pub value: String,
}

impl Label {
    /// Reads `NAME=VALUE`: one line saying what is wrong otherwise, as clap shows it.
    pub fn parse(text: &str) -> Result<Label, String> {
        let Some((name, value)) = text.split_once('=') else {
            return Err(format!("`{text}` is not a label: give NAME=VALUE, such as env=staging"));
        };
        let name = name.trim();
        let mut bytes = name.bytes();
        let valid = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.starts_with("__");
        if !valid {
            return Err(format!(
                "`{name}` is not a label name: give letters, digits and `_`, not starting with a digit or `__`"
            ));
        }
        if RESERVED_LABELS.contains(&name) {
            return Err(format!("label `{name}` is loadbench's own: every series has it already"));
        }
        Ok(Label { name: name.to_owned(), value: value.to_owned() })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

/// `--remote-write` and its companions, flattened into a bench binary's command line and
/// `cargo loadbench`'s, which passes them on ([`RemoteWriteArgs::to_args`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RemoteWriteArgs {
    /// Push live counters and latency histograms to this Prometheus remote-write endpoint while
    /// scenarios run, such as http://127.0.0.1:9090/api/v1/write (needs loadbench-runtime's
    /// `remote-write` feature)
    #[arg(long, value_name = "URL", value_parser = parse_endpoint, global = true, help_heading = HEADING)]
    pub remote_write: Option<String>,
    /// A label every pushed series carries, as NAME=VALUE (repeatable); scenario, shard and run
    /// are there already
    #[arg(long = "remote-write-label", value_name = "NAME=VALUE", value_parser = Label::parse, global = true, help_heading = HEADING)]
    pub labels: Vec<Label>,
    /// How often the figures are pushed, such as 5s [default: 1s]
    #[arg(long, value_name = "TIME", value_parser = parse_interval, global = true, help_heading = HEADING)]
    pub remote_write_interval: Option<Duration>,
    /// How latency is pushed: `native` histograms or `classic` buckets [default: native]
    #[arg(long, value_name = "KIND", value_parser = HistogramKind::parse, global = true, help_heading = HEADING)]
    pub remote_write_histograms: Option<HistogramKind>,
}

/// What a run pushes, and where: [`RemoteWriteArgs`] checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteWriteConfig {
    /// The endpoint, `http://…`.
    pub url: String,
    /// The user's labels, sorted by name, each name once.
    pub labels: Vec<Label>,
    /// Between two pushes.
    pub interval: Duration,
    /// Native or classic histograms.
    pub histograms: HistogramKind,
}

/// Why `--remote-write` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteWriteError {
    /// The bench was built without the runtime's `remote-write` feature.
    #[error(
        "--remote-write is not built into this bench: live metrics need loadbench-runtime's `remote-write` feature \
         (`features = [\"remote-write\"]` on its line in Cargo.toml)"
    )]
    NotBuilt,
    /// A companion flag was given without `--remote-write`.
    #[error("{0} needs --remote-write URL")]
    Companion(&'static str),
    /// The same label name twice.
    #[error("--remote-write-label `{0}` is given twice")]
    DuplicateLabel(String),
}

impl RemoteWriteArgs {
    /// The checked configuration, `None` when `--remote-write` is not given; refused when this
    /// runtime is built without the `remote-write` feature, or when a companion flag comes alone.
    pub fn config(&self) -> Result<Option<RemoteWriteConfig>, RemoteWriteError> {
        let Some(url) = &self.remote_write else {
            let alone = [
                ("--remote-write-label", !self.labels.is_empty()),
                ("--remote-write-interval", self.remote_write_interval.is_some()),
                ("--remote-write-histograms", self.remote_write_histograms.is_some()),
            ];
            return match alone.into_iter().find(|(_, given)| *given) {
                Some((flag, _)) => Err(RemoteWriteError::Companion(flag)),
                None => Ok(None),
            };
        };
        if !cfg!(feature = "remote-write") {
            return Err(RemoteWriteError::NotBuilt);
        }
        let mut labels = self.labels.clone();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(pair) = labels.windows(2).find(|pair| pair[0].name == pair[1].name) {
            return Err(RemoteWriteError::DuplicateLabel(pair[0].name.clone()));
        }
        Ok(Some(RemoteWriteConfig {
            url: url.clone(),
            labels,
            interval: self.remote_write_interval.unwrap_or(Duration::from_secs(1)),
            histograms: self.remote_write_histograms.unwrap_or_default(),
        }))
    }

    /// Whether any of these flags is given.
    pub fn given(&self) -> bool {
        !self.to_args().is_empty()
    }

    /// The flags again, as a bench binary takes them: how `cargo loadbench` passes them on.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        if let Some(url) = &self.remote_write {
            args.extend(["--remote-write".into(), url.into()]);
        }
        for label in &self.labels {
            args.extend(["--remote-write-label".into(), label.to_string().into()]);
        }
        if let Some(interval) = self.remote_write_interval {
            args.extend(["--remote-write-interval".into(), format!("{}ms", interval.as_millis()).into()]);
        }
        if let Some(kind) = self.remote_write_histograms {
            args.extend(["--remote-write-histograms".into(), kind.to_string().into()]);
        }
        args
    }
}

/// An `http://` URL with a host: the endpoint a POST goes to. `https://` is refused (the pusher's
/// client has no TLS; a Prometheus behind TLS is reached through a local agent or proxy).
fn parse_endpoint(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    match url.scheme() {
        "http" if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(url.to_string()),
        "http" => Err(format!("`{text}` has no host")),
        "https" => Err(format!(
            "`{text}`: an https:// remote-write endpoint is not supported; push to http:// (a local Prometheus agent or proxy)"
        )),
        other => Err(format!("`{text}`: the scheme `{other}` is not http://")),
    }
}

/// A time such as `1s` or `500ms`, at least [`MIN_INTERVAL`].
fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = crate::load::parse_duration(text).map_err(|e| e.to_string())?;
    if interval < MIN_INTERVAL {
        return Err(format!("`{text}` is shorter than 100ms"));
    }
    Ok(interval)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        remote: RemoteWriteArgs,
    }

    fn parse(args: &[&str]) -> Result<RemoteWriteArgs, String> {
        Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .map(|cli| cli.remote)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn flags_read_back_from_what_they_pass_on() {
        let first = parse(&[
            "--remote-write",
            "http://127.0.0.1:9090/api/v1/write",
            "--remote-write-label",
            "env=staging",
            "--remote-write-label",
            "team=web=1",
            "--remote-write-interval",
            "2s",
            "--remote-write-histograms",
            "classic",
        ])
        .unwrap();
        assert_eq!(first.labels[1], Label { name: "team".into(), value: "web=1".into() });
        let args: Vec<String> = first.to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let again = parse(&args.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
        assert_eq!(format!("{first:?}"), format!("{again:?}"));
        assert!(first.given() && !parse(&[]).unwrap().given());
    }

    #[test]
    fn bad_values_are_refused_in_one_line() {
        for (args, said) in [
            (&["--remote-write", "ftp://x/"][..], "is not http://"),
            (&["--remote-write", "https://prom/api/v1/write"], "https:// remote-write endpoint is not supported"),
            (&["--remote-write", "not a url"], "is not a URL"),
            (&["--remote-write-label", "novalue"], "give NAME=VALUE"),
            (&["--remote-write-label", "run=x"], "loadbench's own"),
            (&["--remote-write-label", "__name__=x"], "not a label name"),
            (&["--remote-write-interval", "10ms"], "shorter than 100ms"),
            (&["--remote-write-histograms", "both"], "give native or classic"),
        ] {
            let err = parse(args).unwrap_err();
            assert!(err.lines().next().is_some_and(|l| l.contains(said)), "{args:?}: {err}");
        }
    }

    #[test]
    fn companions_need_the_url_and_names_are_given_once() {
        let alone = parse(&["--remote-write-interval", "2s"]).unwrap();
        assert_eq!(alone.config(), Err(RemoteWriteError::Companion("--remote-write-interval")));
        assert_eq!(parse(&[]).unwrap().config(), Ok(None));
        let twice =
            parse(&["--remote-write", "http://p/", "--remote-write-label", "a=1", "--remote-write-label", "a=2"])
                .unwrap();
        if cfg!(feature = "remote-write") {
            assert_eq!(twice.config(), Err(RemoteWriteError::DuplicateLabel("a".into())));
        }
    }

    #[cfg(feature = "remote-write")]
    #[test]
    fn a_configuration_sorts_the_labels_and_takes_the_defaults() {
        let args =
            parse(&["--remote-write", "http://p:9090/w", "--remote-write-label", "z=1", "--remote-write-label", "a=2"])
                .unwrap();
        let config = args.config().unwrap().unwrap();
        assert_eq!(config.url, "http://p:9090/w");
        assert_eq!(config.labels.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["a", "z"]);
        assert_eq!((config.interval, config.histograms), (Duration::from_secs(1), HistogramKind::Native));
    }

    // What a user's bench gets by default; `.ci/run` runs these tests without the workspace's
    // features.
    #[cfg(not(feature = "remote-write"))]
    #[test]
    fn without_the_feature_the_flag_is_refused_naming_it() {
        let asked = parse(&["--remote-write", "http://127.0.0.1:9090/api/v1/write"]).unwrap();
        let refused = asked.config();
        assert_eq!(refused, Err(RemoteWriteError::NotBuilt));
        let said = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(said.contains("`remote-write` feature") && said.contains(r#"features = ["remote-write"]"#), "{said}");
    }
}
