//! The rounds of `cargo loadbench ab`: each runs every unit once on each side, back to back, the
//! side that goes first alternating by round as the Thue–Morse sequence does (AB BA BA AB BA AB
//! AB BA …), so that neither side always runs first, second or after a given other run: a drift
//! that grows steadily over a round, or over two, is met by both sides alike. Warmup rounds run
//! first, in the same order, and are not counted.

use std::path::Path;
use std::time::SystemTime;

use cargo_loadbench::Results;
use loadbench::cli::interrupt;
use loadbench::console::err;
use loadbench::exit_code;

use crate::ab::plan::{Part, Unit};
use crate::ab::serve::Service;
use crate::ab::side::{Side, Which};
use crate::error::Error;
use crate::run::{self, Outcome, RunOptions};
use crate::scenarios::{did_not_run, ran_in};

/// Whether round `round` (from 0) runs the base first: when the number of ones in `round`'s
/// binary digits is even (the Thue–Morse sequence).
pub fn base_first(round: u32) -> bool {
    round.count_ones().is_multiple_of(2)
}

/// How many rounds, and where each side's requests go.
#[derive(Debug, Clone)]
pub struct Rounds<'a> {
    /// Rounds run first and not counted.
    pub warmup: u32,
    /// Counted rounds.
    pub counted: u32,
    /// Each side, base then head.
    pub sides: [&'a Side; 2],
    /// Each side's target (its service's URL with `--serve`), base then head; `None`: the bench
    /// binary's own.
    pub targets: [Option<String>; 2],
}

/// What the rounds measured: per side, one report per counted round, in order; and
/// [`exit_code::USAGE`] when a binary rejected its configuration (nothing more ran), else
/// [`exit_code::OK`].
#[derive(Debug)]
pub struct Measured {
    /// The base's rounds.
    pub base: Vec<Results>,
    /// The head's rounds.
    pub head: Vec<Results>,
    /// The exit code so far.
    pub code: u8,
}

/// Runs `rounds` of `units`, with `options` for every bench binary (its `target` set per side)
/// and their answers under `scratch`. A service that exits meanwhile stops the run: the error
/// names its side.
pub fn run(
    units: &[Unit],
    rounds: &Rounds,
    options: &RunOptions,
    scratch: &Path,
    services: &mut [(Which, Service)],
) -> Result<Measured, Error> {
    let mut measured = Measured { base: Vec::new(), head: Vec::new(), code: exit_code::OK };
    let all = (0..rounds.warmup).map(|r| (r, false)).chain((0..rounds.counted).map(|r| (r, true)));
    for (round, counted) in all {
        let label = if counted {
            format!("round {} of {}", round + 1, rounds.counted)
        } else {
            format!("warmup round {} of {}", round + 1, rounds.warmup)
        };
        let order = if base_first(round) { Which::BOTH } else { [Which::Head, Which::Base] };
        let mut reports = [Results::new(SystemTime::now()), Results::new(SystemTime::now())];
        let mut headers = [false, false];
        // A signal, or a binary that rejects its configuration, ends the rounds; what this round
        // measured before it is kept (an interrupted run's partial results among it).
        let mut stop = false;
        'units: for (u, unit) in units.iter().enumerate() {
            for which in order {
                if interrupt::interrupted() {
                    stop = true;
                    break 'units;
                }
                let i = usize::from(which == Which::Head);
                let part = match which {
                    Which::Base => unit.base.as_ref(),
                    Which::Head => Some(&unit.head),
                };
                let Some(part) = part else { continue };
                let side = rounds.sides[i];
                let mut options = options.clone();
                options.target.clone_from(&rounds.targets[i]);
                if !options.quiet {
                    err!("     Running {} {} on {} [{label}]", part.exe.target, part.names.join(", "), side);
                }
                let output = scratch.join(format!("run-{}-{round}-{counted}-{u}.json", which.name()));
                match run_part(part, unit, &options, &output) {
                    Ran::Report(mut report) => {
                        let scenarios = std::mem::take(&mut report.scenarios);
                        // The side's first report's header (tool, machine, start) stands for its round.
                        if !std::mem::replace(&mut headers[i], true) {
                            reports[i] = report.with_scenarios(std::mem::take(&mut reports[i].scenarios));
                        }
                        reports[i].scenarios.extend(scenarios.into_iter().map(|s| ran_in(part.exe, None, s, &[])));
                    }
                    Ran::Failed { reason, entries } => {
                        err!("error: {} ({side}): {reason}; its scenarios did not run", part.exe.target);
                        reports[i].scenarios.extend(entries);
                    }
                    Ran::Rejected => {
                        err!("error: {} ({side}) rejected its configuration; see above", part.exe.target);
                        measured.code = exit_code::USAGE;
                        stop = true;
                        break 'units;
                    }
                }
                for (which, service) in services.iter_mut() {
                    if let Err(reason) = service.check(&label) {
                        return Err(rounds.sides[usize::from(*which == Which::Head)].failed(reason));
                    }
                }
            }
        }
        if counted {
            let [base, head] = reports;
            measured.base.push(base);
            measured.head.push(head);
        }
        if stop {
            break;
        }
    }
    Ok(measured)
}

/// How one start of a bench binary went.
enum Ran {
    /// It reported.
    Report(Box<loadbench::report::RunReport>),
    /// It could not run: why, and an entry per scenario saying so.
    Failed { reason: String, entries: Vec<cargo_loadbench::ScenarioResult> },
    /// It rejected its configuration and said why.
    Rejected,
}

fn run_part(part: &Part, unit: &Unit, options: &RunOptions, output: &Path) -> Ran {
    match run::run(part.exe, &part.names, options, output) {
        Outcome::Finished(report) => Ran::Report(report),
        Outcome::UsageError => Ran::Rejected,
        Outcome::CouldNotRun(reason) => {
            let entries = unit
                .infos
                .iter()
                .filter(|info| part.names.contains(&info.name))
                .map(|info| ran_in(part.exe, None, did_not_run(info, options, &reason), &[]))
                .collect();
            Ran::Failed { reason, entries }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_side_alternates_as_abba_baab() {
        let order: String = (0..16).map(|r| if base_first(r) { "AB " } else { "BA " }).collect();
        assert_eq!(order.trim_end(), "AB BA BA AB BA AB AB BA BA AB AB BA AB BA BA AB");
        for rounds in [2, 4, 6, 8] {
            let first = (0..rounds).filter(|&r| base_first(r)).count();
            assert_eq!(first * 2, rounds as usize, "{rounds} rounds: each side first half the time");
        }
    }
}
