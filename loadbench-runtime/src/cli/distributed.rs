//! A run spread over several machines: `--shard I/N` (this process runs part I of N of every
//! scenario's load), `--start-at TIME` (every part starts at the same instant) and
//! `--histograms` (the results carry their HdrHistograms, so that the parts merge exactly). One
//! grammar for the bench binary's command line and `cargo loadbench`'s, which passes the flags on.
//!
//! How a load is split is [`Shard::share`]'s one rule, which the load plan applies to every figure
//! of a scenario: the parts add up exactly to the whole, whatever N, so a distributed run asks the
//! server for what the attribute says and not a rounding of it.

use std::ffi::OsString;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::console::err;

/// Where `--help` lists these flags.
const HEADING: &str = "Distributed runs";

/// How long [`StartAt::wait`] sleeps at most before it looks at the stop flag again: a Ctrl-C
/// during a long wait ends it at once, not at the start instant.
const WAKE_EVERY: Duration = Duration::from_millis(50);

/// The furthest ahead `--start-at` may be. A run waits for its instant, silently but for its
/// first line; one that a typo put days away would sit idle until then.
pub const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 60 * 60);

/// Later than this after `--start-at`, a run says so on stderr: its shards did not start together.
const LATE_NOTE: Duration = Duration::from_millis(100);

/// The most shards a run may have. Every shard is a machine (a pod) and needs a virtual user of
/// each scenario; ten thousand is far past any load one server takes, and keeps what `cargo
/// loadbench merge` holds per shard index small, where a count read from a file (4294967295)
/// once made it allocate for four billion.
pub const MAX_SHARDS: u32 = 10_000;

/// The longest `--run-id`: a Kubernetes Job name is at most 63 characters.
pub const MAX_RUN_ID: usize = 128;

/// One part of a distributed run: shard `index` (from 0, as Kubernetes' `JOB_COMPLETION_INDEX`)
/// of `count`.
///
/// ```
/// use loadbench::cli::Shard;
/// let shard = Shard::parse("1/3").unwrap();
/// assert_eq!((shard.index(), shard.count()), (1, 3));
/// // 7 users over 3 shards: 3, 2, 2; this one's are numbered from 3.
/// assert_eq!((shard.share(7), shard.before(7)), (2, 3));
/// assert_eq!(
///     Shard::parse("3/3").unwrap_err(),
///     "`3/3` is not a shard: give I/N with I from 0 to N-1 and N at most 10000, such as 0/3"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Shard `index` of `count`; `None` unless `count >= 1`, `index < count` and `count` is at
    /// most [`MAX_SHARDS`].
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count && count <= MAX_SHARDS).then_some(Shard { index, count })
    }

    /// Reads `I/N`: one line saying what is wrong otherwise, as clap shows it.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let parsed = text.trim().split_once('/').and_then(|(index, count)| {
            let digits =
                |s: &str| s.trim().parse::<u32>().ok().filter(|_| s.trim().bytes().all(|b| b.is_ascii_digit()));
            Shard::new(digits(index)?, digits(count)?)
        });
        parsed.ok_or_else(|| {
            format!("`{text}` is not a shard: give I/N with I from 0 to N-1 and N at most {MAX_SHARDS}, such as 0/3")
        })
    }

    /// This shard's number, from 0.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many shards the run has.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// This shard's part of `total`: `total / N`, plus one on the first `total % N` shards, so
    /// that the parts of every shard add up to `total` exactly (7 over 3: 3, 2, 2).
    pub fn share(&self, total: u64) -> u64 {
        let n = u64::from(self.count);
        total / n + u64::from(u64::from(self.index) < total % n)
    }

    /// The parts of the shards before this one, added up: where this shard's part of `total`
    /// starts (its first user's number, for users).
    pub fn before(&self, total: u64) -> u64 {
        let (n, i) = (u64::from(self.count), u64::from(self.index));
        i * (total / n) + i.min(total % n)
    }

    /// [`Shard::share`] of a `u32` (users).
    pub fn share_u32(&self, total: u32) -> u32 {
        // At most `total`.
        u32::try_from(self.share(u64::from(total))).unwrap_or(total)
    }

    /// [`Shard::before`] of a `u32` (users).
    pub fn before_u32(&self, total: u32) -> u32 {
        u32::try_from(self.before(u64::from(total))).unwrap_or(total)
    }

    /// Why scenario `scenario` with `users` virtual users cannot run as this shard, if it cannot:
    /// every shard needs a user, and a shard without one would measure nothing while its
    /// results looked like a part of the run.
    pub fn too_few_users(&self, scenario: &str, users: u32) -> Option<String> {
        (users < self.count).then(|| {
            format!(
                "scenario `{scenario}` has {users} virtual user{}, fewer than the {} shards of --shard {self}: each shard needs at least one",
                if users == 1 { "" } else { "s" },
                self.count,
            )
        })
    }
}

impl fmt::Display for Shard {
    /// `I/N`, as parsed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The instant a run starts its load (`--start-at`), so that the shards of a distributed run,
/// started whenever their machines got to it, load the server together.
///
/// ```
/// use loadbench::cli::StartAt;
/// let rfc = StartAt::parse("2026-12-01T10:00:00Z").unwrap();
/// assert_eq!(StartAt::parse("1796119200").unwrap(), rfc);
/// assert_eq!(StartAt::parse("2026-12-01T11:00:00+01:00").unwrap(), rfc);
/// assert_eq!(StartAt::parse("1796119200.25").unwrap().millis(), "2026-12-01T10:00:00.250Z");
/// assert!(StartAt::parse("tomorrow").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartAt(SystemTime);

impl StartAt {
    /// Reads an RFC 3339 instant (`2026-12-01T10:00:00Z`, `2026-12-01T11:00:00.5+01:00`) or Unix
    /// seconds (`1796119200`, `1796119200.25`), what `date -u +%FT%TZ` and `date +%s` print.
    pub fn parse(text: &str) -> Result<StartAt, String> {
        let trimmed = text.trim();
        let parsed = if trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            unix_seconds(trimmed)
        } else {
            rfc3339(trimmed)
        };
        parsed.map(StartAt).ok_or_else(|| {
            format!(
                "`{text}` is not a start time: give an RFC 3339 instant such as 2026-12-01T10:00:00Z or Unix seconds such as 1796119200"
            )
        })
    }

    /// [`StartAt::parse`] for the command line: an instant more than [`MAX_START_AHEAD`] from now
    /// is refused, before any load is sent.
    pub fn parse_flag(text: &str) -> Result<StartAt, String> {
        let at = StartAt::parse(text)?;
        if let Ok(ahead) = at.0.duration_since(SystemTime::now())
            && ahead > MAX_START_AHEAD
        {
            let ahead = humantime::format_duration(Duration::from_secs(ahead.as_secs()));
            return Err(format!("`{text}` is {ahead} from now: --start-at waits 24h at most"));
        }
        Ok(at)
    }

    /// The instant.
    pub fn time(&self) -> SystemTime {
        self.0
    }

    /// The instant as RFC 3339 in UTC with milliseconds, as the results record it.
    pub fn millis(&self) -> String {
        humantime::format_rfc3339_millis(self.0).to_string()
    }

    /// Sleeps until the instant, or until `stop` is set (Ctrl-C during the wait), and returns how
    /// late after it this returned: zero, give or take the timer, when the instant was still
    /// ahead. Already past, it returns at once and, when late by more than 100 ms, says so on
    /// stderr, since the run's shards then did not start together.
    pub fn wait(&self, stop: &AtomicBool) -> Duration {
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match self.0.duration_since(SystemTime::now()) {
                Ok(left) if !left.is_zero() => std::thread::sleep(left.min(WAKE_EVERY)),
                _ => break,
            }
        }
        let late = SystemTime::now().duration_since(self.0).unwrap_or_default();
        if late > LATE_NOTE && !stop.load(Ordering::Relaxed) {
            err!("note: started {:.3}s after --start-at ({})", late.as_secs_f64(), self.millis());
        }
        late
    }
}

impl fmt::Display for StartAt {
    /// RFC 3339 in UTC with nanoseconds: what is passed on to a bench binary, read back exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_rfc3339_nanos(self.0))
    }
}

/// `1796119200` or `1796119200.25`: whole seconds and up to nanoseconds (more digits are cut).
fn unix_seconds(text: &str) -> Option<SystemTime> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || fraction.contains('.') {
        return None;
    }
    let seconds: u64 = whole.parse().ok()?;
    let digits: String = fraction.chars().take(9).collect();
    let nanos: u32 = if digits.is_empty() { 0 } else { format!("{digits:0<9}").parse().ok()? };
    UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

/// An RFC 3339 instant: `Z` (or `z`), or an offset `±HH:MM` from UTC.
fn rfc3339(text: &str) -> Option<SystemTime> {
    if let Some(utc) = text.strip_suffix(['Z', 'z']) {
        return humantime::parse_rfc3339(&format!("{utc}Z")).ok();
    }
    // `…+01:00`: the last six bytes.
    let split = text.len().checked_sub(6).filter(|&at| text.is_char_boundary(at))?;
    let (local, offset) = text.split_at(split);
    // Sliced by byte below: only ASCII can be.
    if !offset.is_ascii() {
        return None;
    }
    let bytes = offset.as_bytes();
    let sign = match bytes.first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return None,
    };
    if bytes.get(3) != Some(&b':') || !offset[1..3].bytes().chain(offset[4..].bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (hours, minutes): (u64, u64) = (offset[1..3].parse().ok()?, offset[4..].parse().ok()?);
    if hours > 23 || minutes > 59 {
        return None;
    }
    let shift = Duration::from_secs(hours * 3_600 + minutes * 60);
    let as_if_utc = humantime::parse_rfc3339(&format!("{local}Z")).ok()?;
    // 11:00+01:00 is 10:00 UTC.
    if sign > 0 { as_if_utc.checked_sub(shift) } else { as_if_utc.checked_add(shift) }
}

/// `--shard`, `--start-at` and `--histograms`, flattened into a bench binary's command line and
/// `cargo loadbench`'s (global there, like `--runs`), which passes them on ([`DistributedArgs::to_args`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DistributedArgs {
    /// Run part I of N of every scenario's load (I from 0, as Kubernetes' JOB_COMPLETION_INDEX):
    /// users, counts, rates and ramps split so that the N shards add up to the whole exactly;
    /// implies --histograms
    #[arg(long, value_name = "I/N", value_parser = Shard::parse, global = true, help_heading = HEADING)]
    pub shard: Option<Shard>,
    /// Wait until this instant before the first scenario starts its load, as RFC 3339
    /// (2026-12-01T10:00:00Z) or Unix seconds (1796119200), so that every shard starts together;
    /// 24h ahead at most
    #[arg(long, value_name = "TIME", value_parser = StartAt::parse_flag, global = true, help_heading = HEADING)]
    pub start_at: Option<StartAt>,
    /// Write each latency's HdrHistogram into the results (base64 of the V2 deflate encoding), so
    /// that runs merge exactly (always on with --shard)
    #[arg(long, global = true, help_heading = HEADING)]
    pub histograms: bool,
    /// Name the run in its results (`run_id`), the same on every shard: `cargo loadbench merge`
    /// refuses shards of different runs (kube job sets it to the Job's name)
    #[arg(long, value_name = "ID", value_parser = parse_run_id, global = true, help_heading = HEADING)]
    pub run_id: Option<String>,
}

/// `--run-id`: 1 to [`MAX_RUN_ID`] printable ASCII characters, no space (a Job's name, a CI run's
/// number, a commit), so that it reads the same in a file, a log and a command line.
pub fn parse_run_id(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > MAX_RUN_ID || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "`{text}` is not a run id: give 1 to {MAX_RUN_ID} printable ASCII characters without spaces, such as loadbench-20261201-110405"
        ));
    }
    Ok(text.to_owned())
}

impl DistributedArgs {
    /// Whether the results carry histograms: asked for, or a shard's, which a merge needs.
    pub fn histograms(&self) -> bool {
        self.histograms || self.shard.is_some()
    }

    /// The flags again, as a bench binary takes them: how `cargo loadbench` passes them on.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        if let Some(shard) = self.shard {
            args.extend(["--shard".into(), shard.to_string().into()]);
        }
        if let Some(at) = self.start_at {
            args.extend(["--start-at".into(), at.to_string().into()]);
        }
        if self.histograms {
            args.push("--histograms".into());
        }
        if let Some(id) = &self.run_id {
            args.extend(["--run-id".into(), id.into()]);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        distributed: DistributedArgs,
    }

    #[test]
    fn shards_parse_from_zero_and_refuse_the_rest_in_one_line() {
        assert_eq!(Shard::parse("0/3"), Ok(Shard { index: 0, count: 3 }));
        assert_eq!(Shard::parse(" 2 / 3 "), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
        for bad in ["3/3", "1/0", "0/0", "-1/3", "+1/3", "1", "1/3/4", "a/b", "", "/3", "1/"] {
            let err = Shard::parse(bad).unwrap_err();
            assert_eq!(
                err,
                format!("`{bad}` is not a shard: give I/N with I from 0 to N-1 and N at most 10000, such as 0/3")
            );
        }
        assert_eq!(Shard::parse("9999/10000"), Ok(Shard { index: 9_999, count: MAX_SHARDS }));
        assert!(Shard::parse("0/10001").is_err() && Shard::parse("0/4294967295").is_err());
        assert_eq!(Shard::new(0, u32::MAX), None);
    }

    #[test]
    fn shares_add_up_exactly_with_the_remainder_on_the_first_shards() {
        let all = |n: u32| (0..n).filter_map(move |i| Shard::new(i, n));
        for (total, n, expected) in
            [(7, 3, &[3, 2, 2][..]), (1_000, 3, &[334, 333, 333]), (2_000, 3, &[667, 667, 666]), (2, 3, &[1, 1, 0])]
        {
            let shares: Vec<u64> = all(n).map(|s| s.share(total)).collect();
            assert_eq!(shares, expected, "{total} over {n}");
            // Each shard starts where the ones before it end.
            let starts: Vec<u64> = all(n).map(|s| s.before(total)).collect();
            let mut running = 0;
            for (start, share) in starts.iter().zip(&shares) {
                assert_eq!(*start, running);
                running += share;
            }
            assert_eq!(running, total);
        }
        for total in [0u64, 1, 5, 99, 1_000_003, u64::MAX] {
            for n in [1, 2, 3, 7, 64] {
                let sum: u128 = all(n).map(|s| u128::from(s.share(total))).sum();
                assert_eq!(sum, u128::from(total), "{total} over {n}");
            }
        }
        let shard = Shard { index: 1, count: 3 };
        assert_eq!((shard.share_u32(10), shard.before_u32(10)), (3, 4));
        assert_eq!(shard.too_few_users("hello", 3), None);
        assert_eq!(
            shard.too_few_users("hello", 2).as_deref(),
            Some(
                "scenario `hello` has 2 virtual users, fewer than the 3 shards of --shard 1/3: each shard needs at least one"
            )
        );
    }

    #[test]
    fn start_times_are_rfc3339_or_unix_seconds() {
        let at = |text: &str| StartAt::parse(text).map(|s| s.time());
        let base = UNIX_EPOCH + Duration::from_secs(1_796_119_200);
        assert_eq!(at("2026-12-01T10:00:00Z"), Ok(base));
        assert_eq!(at("2026-12-01T10:00:00z"), Ok(base));
        assert_eq!(at("2026-12-01T10:00:00.5Z"), Ok(base + Duration::from_millis(500)));
        assert_eq!(at("2026-12-01T05:30:00-04:30"), Ok(base));
        assert_eq!(at("1796119200"), Ok(base));
        assert_eq!(at(" 1796119200.123456789123 "), Ok(base + Duration::from_nanos(123_456_789)));
        for bad in [
            "tomorrow",
            "",
            ".",
            "1.2.3",
            "-5",
            "2026-12-01T10:00:00+é:00",
            "2026-12-01T10:00:00+0é00",
            "2026-12-01T10:00:00",
            "2026-12-01T10:00:00+25:00",
            "2026-13-01T10:00:00Z",
        ] {
            let err = StartAt::parse(bad).unwrap_err();
            assert!(err.starts_with(&format!("`{bad}` is not a start time: give an RFC 3339 instant")), "{bad}: {err}");
        }
        // Passed on to a bench binary and read back to the nanosecond.
        let precise = StartAt(base + Duration::from_nanos(1));
        assert_eq!(StartAt::parse(&precise.to_string()), Ok(precise));
    }

    #[test]
    fn waiting_ends_at_the_instant_or_at_once_when_it_is_past() {
        let stop = AtomicBool::new(false);
        let soon = StartAt(SystemTime::now() + Duration::from_millis(120));
        let late = soon.wait(&stop);
        assert!(SystemTime::now() >= soon.time());
        assert!(late < Duration::from_millis(100), "{late:?}");
        let past = StartAt(SystemTime::now() - Duration::from_secs(2));
        assert!(past.wait(&stop) >= Duration::from_secs(2));
        // A stop during the wait ends it.
        stop.store(true, Ordering::Relaxed);
        let far = StartAt(SystemTime::now() + Duration::from_secs(3_600));
        assert_eq!(far.wait(&stop), Duration::ZERO);
    }

    #[test]
    fn a_start_more_than_a_day_ahead_is_refused_on_the_command_line() {
        let unix = |t: SystemTime| format!("{}", t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs());
        let now = SystemTime::now();
        for fine in [
            now - Duration::from_secs(3_600),
            now + Duration::from_secs(3_600),
            now + MAX_START_AHEAD - Duration::from_secs(60),
        ] {
            assert!(StartAt::parse_flag(&unix(fine)).is_ok(), "{fine:?}");
        }
        let far = unix(now + Duration::from_secs(10 * 24 * 3_600));
        let err = StartAt::parse_flag(&far).err().unwrap_or_default();
        assert!(err.starts_with(&format!("`{far}` is 9days 23h")), "{err}");
        assert!(err.ends_with("--start-at waits 24h at most"), "{err}");
        // The reading itself has no bound: a saved run's instant reads back whatever it was.
        assert!(StartAt::parse(&far).is_ok());
        assert!(Cli::try_parse_from(["x", "--start-at", &far]).is_err());
    }

    #[test]
    fn flags_read_back_from_what_they_pass_on() {
        let first = Cli::try_parse_from([
            "x",
            "--shard",
            "1/3",
            "--start-at",
            "1796119200.5",
            "--histograms",
            "--run-id",
            "nightly-42",
        ])
        .unwrap_or_else(|e| panic!("{e}"))
        .distributed;
        assert_eq!(first.run_id.as_deref(), Some("nightly-42"));
        let again = Cli::try_parse_from(std::iter::once(OsString::from("x")).chain(first.to_args()))
            .unwrap_or_else(|e| panic!("{e}"))
            .distributed;
        assert_eq!(format!("{first:?}"), format!("{again:?}"));
        let shard_only = Cli::try_parse_from(["x", "--shard", "0/2"]).unwrap_or_else(|e| panic!("{e}")).distributed;
        assert!(shard_only.histograms(), "a shard always writes histograms");
        assert!(!Cli::try_parse_from(["x"]).unwrap_or_else(|e| panic!("{e}")).distributed.histograms());
        let err = Cli::try_parse_from(["x", "--shard", "3/3"]).map(|_| ()).unwrap_err().to_string();
        assert!(err.lines().next().is_some_and(|l| l.contains("`3/3` is not a shard")), "{err}");
    }

    #[test]
    fn a_run_id_is_one_printable_word() {
        for good in ["e2e", "loadbench-20261201-110405", "ci/1234:7", &"a".repeat(MAX_RUN_ID)] {
            assert_eq!(parse_run_id(good).as_deref(), Ok(good), "{good}");
        }
        for bad in ["", "two words", "tab\there", "é", &"a".repeat(MAX_RUN_ID + 1)] {
            assert!(parse_run_id(bad).is_err_and(|e| e.contains("is not a run id")), "{bad}");
        }
    }
}
