//! A target where nothing listens: when every attempt of a worker so far was refused (no
//! success, no other failure), the worker gives up after a bounded time or number of attempts,
//! rather than send hundreds of thousands of connects to a closed port.
//!
//! The watch costs a successful iteration nothing: the worker tells it of failures only, and of
//! measured successes only through its own counts (`failed == done` before a failure means that
//! none succeeded); a warmup iteration, which is in no figure, tells it either way. It ends at the
//! first success or the first failure of another kind, and then stays ended.

use std::time::{Duration, Instant};

use crate::error::Error;

/// Refused attempts, over all workers, after which a run gives up: a few hundred say that nothing
/// listens as surely as a hundred thousand, which is what a second of refused connects to a port
/// on this machine makes. Split over the workers (each decides alone, without a shared counter on
/// the request path); every user still makes its first attempt, so a run makes at least
/// `concurrency` of them.
pub(crate) const REFUSED_ATTEMPTS: u64 = 256;

/// How long a worker's attempts may all be refused before it gives up, however few they were: a
/// server that starts a moment after the run has had its chance, and a slow schedule (a low rate,
/// a think time) gives up as soon as a few hundred attempts would have.
pub(crate) const REFUSED_FOR: Duration = Duration::from_secs(1);

/// One worker's watch over its refused attempts.
#[derive(Debug)]
pub(crate) struct Refusals {
    /// This worker's share of [`REFUSED_ATTEMPTS`].
    limit: u64,
    state: Watch,
    /// Refused attempts seen while watching and after giving up (those in flight then).
    refused: u64,
    /// When the first of them ended.
    first: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// Every attempt so far was refused.
    Watching,
    /// Something else happened: the target is there.
    Ended,
    /// The worker gave up: it starts no more iterations.
    GaveUp,
}

impl Refusals {
    /// The watch of one of `workers` workers.
    pub(crate) fn new(workers: usize) -> Refusals {
        let limit = REFUSED_ATTEMPTS.div_ceil(workers.max(1) as u64).max(1);
        Refusals { limit, state: Watch::Watching, refused: 0, first: None }
    }

    /// An attempt failed with `error`, ending at `at`; `only_failures`: no attempt of this worker
    /// has succeeded so far. Returns `true` when this failure makes the worker give up.
    pub(crate) fn failed(&mut self, error: &Error, at: Instant, only_failures: bool) -> bool {
        let refused = error.is_refused();
        match self.state {
            Watch::Ended => false,
            Watch::GaveUp => {
                self.refused += u64::from(refused);
                false
            }
            Watch::Watching if !(refused && only_failures) => {
                self.state = Watch::Ended;
                false
            }
            Watch::Watching => {
                self.refused += 1;
                let first = *self.first.get_or_insert(at);
                if self.refused >= self.limit || at.saturating_duration_since(first) >= REFUSED_FOR {
                    self.state = Watch::GaveUp;
                    return true;
                }
                false
            }
        }
    }

    /// An attempt succeeded (told of warmup iterations only: see the module's comment).
    pub(crate) fn succeeded(&mut self) {
        if self.state == Watch::Watching {
            self.state = Watch::Ended;
        }
    }

    /// The refused attempts this worker made, when it gave up because of them.
    pub(crate) fn gave_up(&self) -> Option<u64> {
        (self.state == Watch::GaveUp).then_some(self.refused)
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::error::ErrorKind;

    fn refused() -> Error {
        Error::with_source(
            ErrorKind::Connect,
            "cannot connect to 127.0.0.1:1",
            io::Error::from(io::ErrorKind::ConnectionRefused),
        )
    }

    #[test]
    fn a_worker_gives_up_after_its_share_of_the_refused_attempts() {
        let start = Instant::now();
        let mut one = Refusals::new(1);
        let gave_up = (0..REFUSED_ATTEMPTS).position(|_| one.failed(&refused(), start, true));
        assert_eq!(gave_up, Some(REFUSED_ATTEMPTS as usize - 1));
        // Attempts still in flight then are counted, and the worker stays given up.
        assert!(!one.failed(&refused(), start, true));
        assert_eq!(one.gave_up(), Some(REFUSED_ATTEMPTS + 1));
        // Two workers: half each.
        let mut half = Refusals::new(2);
        let gave_up = (0..REFUSED_ATTEMPTS).position(|_| half.failed(&refused(), start, true));
        assert_eq!(gave_up, Some(REFUSED_ATTEMPTS as usize / 2 - 1));
        // More workers than attempts: one each.
        assert!(Refusals::new(1_000).failed(&refused(), start, true));
    }

    #[test]
    fn a_worker_gives_up_once_its_attempts_were_refused_for_long_enough() {
        let start = Instant::now();
        let mut slow = Refusals::new(1);
        assert!(!slow.failed(&refused(), start, true));
        assert!(!slow.failed(&refused(), start + REFUSED_FOR / 2, true));
        assert!(slow.failed(&refused(), start + REFUSED_FOR, true));
        assert_eq!(slow.gave_up(), Some(3));
    }

    #[test]
    fn a_success_or_another_failure_ends_the_watch_for_good() {
        let start = Instant::now();
        let late = start + REFUSED_FOR * 10;
        // A measured success before the refusal (the worker's own counts say so).
        let mut answered = Refusals::new(1);
        assert!(!answered.failed(&refused(), start, false));
        assert!(!answered.failed(&refused(), late, true), "ended for good");
        assert_eq!(answered.gave_up(), None);
        // A warmup success.
        let mut warmed = Refusals::new(1);
        assert!(!warmed.failed(&refused(), start, true));
        warmed.succeeded();
        assert!(!warmed.failed(&refused(), late, true));
        assert_eq!(warmed.gave_up(), None);
        // A timeout, a reset, a TLS failure, a scenario's own error, an unreachable host: the
        // target may be there.
        let others = [
            Error::new(ErrorKind::Timeout, "no complete response within 1s"),
            Error::with_source(ErrorKind::Io, "request failed", io::Error::from(io::ErrorKind::ConnectionReset)),
            Error::new(ErrorKind::Tls, "TLS handshake with 127.0.0.1:1 failed"),
            Error::msg("connection refused"),
            Error::with_source(ErrorKind::Connect, "cannot connect", io::Error::from(io::ErrorKind::HostUnreachable)),
        ];
        for other in others {
            let mut mixed = Refusals::new(1);
            assert!(!mixed.failed(&refused(), start, true));
            assert!(!mixed.failed(&other, start, true), "{other}");
            assert!(!mixed.failed(&refused(), late, true), "{other}");
            assert_eq!(mixed.gave_up(), None, "{other}");
        }
    }
}
