//! stdout and stderr, written without ever panicking: `println!` and `eprintln!` panic when a
//! write fails (a full disk under `> out.txt`, `2> /dev/full`), which would crash a run before it
//! starts or lose its results after it ended. Every line the harness and `cargo loadbench` print
//! goes through [`out!`], [`err!`] or [`print`].
//!
//! - A write that fails for any reason but a broken pipe is remembered, and the process's exit
//!   code is at least `exit_code::USAGE`, as for any other output that could not
//!   be written; the run itself goes on. A failure on stdout is said once on stderr.
//! - A broken pipe (`cargo loadbench | head -1`: the reader is gone) ends quietly, as ripgrep and
//!   nextest do: nothing more is written to that stream, nothing is said, and the exit code is
//!   the run's. Rust ignores SIGPIPE, so the write returns `EPIPE` instead of killing the process.

use std::fmt;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crate::exit_code;

/// A stream's state: still written to, closed by its reader, or failed.
const OPEN: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

static STDOUT: AtomicU8 = AtomicU8::new(OPEN);
static STDERR: AtomicU8 = AtomicU8::new(OPEN);
/// Set once anything this process had to say could not be said: the exit code reflects it.
static LOST: AtomicBool = AtomicBool::new(false);

/// Which stream.
#[derive(Debug, Clone, Copy)]
enum Stream {
    Out,
    Err,
}

impl Stream {
    fn state(self) -> &'static AtomicU8 {
        match self {
            Stream::Out => &STDOUT,
            Stream::Err => &STDERR,
        }
    }

    // The crate's own unit tests print through libtest's capture, which only the print macros
    // reach, so that a passing test's lines stay out of the test run's output.
    #[cfg(test)]
    #[allow(clippy::print_stdout, clippy::print_stderr)]
    fn write(self, bytes: &[u8]) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        match self {
            Stream::Out => print!("{text}"),
            Stream::Err => eprint!("{text}"),
        }
        Ok(())
    }

    #[cfg(not(test))]
    fn write(self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write as _;
        match self {
            Stream::Out => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Stream::Err => std::io::stderr().lock().write_all(bytes),
        }
    }
}

/// Writes `bytes` to `stream` unless it already closed or failed, remembering how it ended.
fn write(stream: Stream, bytes: &[u8]) {
    let state = stream.state();
    if state.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let Err(error) = stream.write(bytes) else { return };
    if error.kind() == ErrorKind::BrokenPipe {
        state.store(CLOSED, Ordering::Relaxed);
        return;
    }
    state.store(FAILED, Ordering::Relaxed);
    LOST.store(true, Ordering::Relaxed);
    if let Stream::Out = stream {
        line(Stream::Err, format_args!("error: cannot write to stdout: {error}"));
    }
}

fn line(stream: Stream, args: fmt::Arguments<'_>) {
    // One write per line, so that lines from several threads do not interleave.
    let mut text = args.to_string();
    text.push('\n');
    write(stream, text.as_bytes());
}

/// Writes `text` to stdout as it is (no newline added). Used by [`out!`].
pub fn print(text: &str) {
    write(Stream::Out, text.as_bytes());
}

/// Writes one line to stdout. Used by [`out!`].
pub fn out_line(args: fmt::Arguments<'_>) {
    line(Stream::Out, args);
}

/// Writes one line to stderr. Used by [`err!`].
pub fn err_line(args: fmt::Arguments<'_>) {
    line(Stream::Err, args);
}

/// Whether some output to stdout or stderr was lost to an error other than a broken pipe.
pub fn lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

/// The exit code for a run that would exit with `code`: at least [`exit_code::USAGE`] when
/// stdout or stderr could not be written ([`lost`]), as when a results file cannot be.
pub fn exit_code(code: u8) -> u8 {
    if lost() { code.max(exit_code::USAGE) } else { code }
}

/// `println!` that never panics: see the [module](self).
#[doc(hidden)]
#[macro_export]
macro_rules! __console_out {
    ($($arg:tt)*) => {
        $crate::console::out_line(::std::format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics: see the [module](self).
#[doc(hidden)]
#[macro_export]
macro_rules! __console_err {
    ($($arg:tt)*) => {
        $crate::console::err_line(::std::format_args!($($arg)*))
    };
}

/// One line to stdout, as `println!` writes it, without its panic: see the [module](self).
pub use crate::__console_out as out;

/// One line to stderr, as `eprintln!` writes it, without its panic: see the [module](self).
pub use crate::__console_err as err;
