//! A scenario that stopped early because nothing was listening at its target (every attempt was
//! a refused connection): its JSON (`nothing_listening`) and the table's line for it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ScenarioReport;
use super::units::{micros, thousands};

/// Nothing was listening at the target: every attempt was refused, and the run gave up after a
/// bounded time or number of attempts rather than go on refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NothingListening {
    /// The address connected to: the target's, or the one a `--connect-to` rule chose
    /// (`127.0.0.1:18008`).
    pub address: String,
    /// Refused connections made before the run stopped, those still in flight then included
    /// (warmup ones too, which are in no other figure).
    pub refused: u64,
}

/// `nothing is listening at 127.0.0.1:18008: is the server started? (stopped after 256 refused
/// connections; 99,744 iterations not started)`, or, for a run bounded by time, `(stopped after
/// 256 refused connections, 1.00s into 30s)`.
pub(crate) fn line(s: &ScenarioReport) -> Option<String> {
    let nothing = s.nothing_listening.as_ref()?;
    let noun = if nothing.refused == 1 { "connection" } else { "connections" };
    let stopped = format!("stopped after {} refused {noun}", thousands(nothing.refused));
    let when = match s.config.duration_ms {
        Some(ms) if s.config.count.is_none() => {
            let asked = humantime::format_duration(Duration::from_millis(ms));
            format!(", {} into {asked}", micros(s.duration_us as f64))
        }
        _ => {
            let noun = if s.not_started == 1 { "iteration" } else { "iterations" };
            format!("; {} {noun} not started", thousands(s.not_started))
        }
    };
    Some(format!("nothing is listening at {}: is the server started? ({stopped}{when})", nothing.address))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ConfigReport;

    fn stopped(count: Option<u64>, duration_ms: Option<u64>) -> ScenarioReport {
        let config = ConfigReport { count, duration_ms, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("GET /", config);
        s.nothing_listening = Some(NothingListening { address: "127.0.0.1:18008".into(), refused: 263 });
        s.iterations = 263;
        s.failed = 263;
        s
    }

    #[test]
    fn the_line_names_the_address_and_what_was_not_started() {
        let mut counted = stopped(Some(100_000), None);
        counted.not_started = 99_737;
        assert_eq!(
            line(&counted).as_deref(),
            Some(
                "nothing is listening at 127.0.0.1:18008: is the server started? \
                 (stopped after 263 refused connections; 99,737 iterations not started)"
            )
        );
        let mut timed = stopped(None, Some(30_000));
        timed.duration_us = 1_020_000;
        assert_eq!(
            line(&timed).as_deref(),
            Some(
                "nothing is listening at 127.0.0.1:18008: is the server started? \
                 (stopped after 263 refused connections, 1.02s into 30s)"
            )
        );
        assert_eq!(line(&ScenarioReport::not_started("GET /", ConfigReport::default())), None);
    }
}
