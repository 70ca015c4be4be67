//! Where the workers and the executor's thread meet once every user is set up: the last to arrive
//! takes the run's start instant and lets everyone go, so that every worker starts at once and
//! setups are outside the run's time.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

/// The meeting point. Used once per run, never per iteration, so a mutex is fine.
#[derive(Debug)]
pub(crate) struct StartGate {
    /// Parties still to arrive, and the start once they all have.
    state: Mutex<(usize, Option<Instant>)>,
    opened: Condvar,
}

impl StartGate {
    /// A gate for `parties`; each gets a [`StartLine`] from [`StartGate::line`].
    pub(crate) fn new(parties: usize) -> Arc<StartGate> {
        Arc::new(StartGate { state: Mutex::new((parties, None)), opened: Condvar::new() })
    }

    /// One party's place at the gate.
    pub(crate) fn line(self: &Arc<StartGate>) -> StartLine {
        StartLine { gate: Arc::clone(self), passed: false }
    }

    /// Arrives; with `wait`, blocks until everyone has and returns the start.
    fn arrive(&self, wait: bool) -> Instant {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        if state.0 == 0 && state.1.is_none() {
            state.1 = Some(Instant::now());
            self.opened.notify_all();
        }
        while wait && state.1.is_none() {
            state = self.opened.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.1.unwrap_or_else(Instant::now)
    }
}

/// One party's place at the [`StartGate`]. Dropped without passing (a worker that panicked, or
/// whose thread failed to spawn), it leaves the gate without waiting, so nobody waits forever.
#[derive(Debug)]
pub(crate) struct StartLine {
    gate: Arc<StartGate>,
    passed: bool,
}

impl StartLine {
    /// Waits for everyone, then returns the run's start.
    pub(crate) fn pass(mut self) -> Instant {
        self.passed = true;
        self.gate.arrive(true)
    }
}

impl Drop for StartLine {
    fn drop(&mut self) {
        if !self.passed {
            self.gate.arrive(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_gets_the_start_of_the_last_to_arrive_and_a_dropped_line_waits_for_nobody() {
        let gate = StartGate::new(3);
        let (first, second) = (gate.line(), gate.line());
        drop(gate.line());
        let other = std::thread::spawn(move || first.pass());
        let start = second.pass();
        assert_eq!(other.join().ok(), Some(start));
    }
}
