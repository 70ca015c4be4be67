//! The `#[scenario]` attribute of loadbench.
//!
//! Use it through the runtime crate, as `#[loadbench::scenario(…)]`: the code it generates names
//! `::loadbench::__private`, which only exists there.

mod args;
mod errors;
mod output;
mod scenario;
mod suggest;

use proc_macro::TokenStream;

/// Turns an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>` into a registered scenario.
///
/// ```ignore
/// #[loadbench::scenario(concurrency = 1000, count = 100_000)]
/// async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     ctx.get("/").send().await?.expect_status(200)?;
///     Ok(())
/// }
///
/// loadbench::main!();
/// ```
///
/// `concurrency` virtual users each run the body in a loop, each on its own connection, until
/// the scenario's load is done. The function is left as it is, so it can still be called
/// directly; the attribute only adds a registration that `loadbench::main!()` finds at startup.
///
/// # Arguments
///
/// | Argument                | Meaning                                                           | Default                  |
/// |-------------------------|-------------------------------------------------------------------|--------------------------|
/// | `concurrency = 100`     | Virtual users running the body at the same time (at least 1).     | `1`                      |
/// | `count = 10_000`        | Stop after this many iterations in total, across all users.       | one of `count`/`duration` is required |
/// | `duration = "1m 30s"`   | Stop starting iterations after this long ([humantime] syntax).    | one of `count`/`duration` is required |
/// | `timeout = "5s"`        | Per-request timeout ([humantime] syntax).                         | 30 s                     |
/// | `name = "checkout"`     | Name shown in reports and matched by command-line filters.        | the function's name      |
/// | `target = "http://…"`   | Base URL; `--target` and `LOADBENCH_TARGET` take precedence.      | none                     |
/// | `rate = 2000`, `rate = "2000"`, `rate = "120/m"` | Start iterations at this rate (per second, or `/s`, `/m`, `/h`): the open model. | none (closed model) |
/// | `max_concurrency = 200` | With `rate`: the virtual users that serve it.                     | 100                      |
/// | `thresholds(p99 < "50ms", error_rate < 0.01, rps > 1000)` | Conditions checked after a full run; a miss makes the exit code 1. | none |
/// | `feed = "data/users.csv"` | Records for `ctx.feed()`: a `.csv` file with a header row, or `.jsonl` (one JSON object a line); a relative path is the package's (`CARGO_MANIFEST_DIR`). Read once before the run. | none |
/// | `feed_mode = "random"`  | `"sequential"` (file order, shared by all users), `"random"`, or `"per_user"` (user `u` keeps record `u`; fewer records than users is an error). | `"sequential"` |
/// | `feed_end = "stop"`     | A sequential feed at its end: `"wrap"` to the first record, or `"stop"` starting iterations (the report says after how many records, and how many were not started). | `"wrap"` |
///
/// Exactly one of `count` and `duration` must be given. Durations are strings such as `"30s"`,
/// `"500ms"` or `"1m 30s"`, longer than zero and at most about 584 years.
///
/// A threshold is `METRIC OP LIMIT` with `OP` one of `<`, `<=`, `>`, `>=`. Latency metrics
/// (`p50`, `p90`, `p99`, `p99_9`, `max`, `mean`) take a duration above zero, quoted or not
/// (`p99 < "50ms"` or `p99 < 50ms`); `error_rate` a fraction from 0 to 1 (`error_rate < 0.01` or
/// `error_rate < 1%`); `rps` iterations per second; `failed` a count of failed iterations.
///
/// Rates, durations and thresholds follow the same grammar as the command line's `--rate`,
/// `--duration` and `--threshold` (the loadbench-grammar crate): what one accepts, the other
/// does, and a mistake is explained in the same words.
///
/// # Requirements on the function
///
/// It must be an `async fn` without generics, `self`, `const`, `unsafe` or `extern`, take exactly
/// one parameter, `&mut loadbench::Ctx`, and return `loadbench::Result<()>`. Every problem with
/// the arguments or the signature is reported at once, pointing at the offending tokens.
///
/// [humantime]: https://docs.rs/humantime/latest/humantime/fn.parse_duration.html
#[proc_macro_attribute]
pub fn scenario(args: TokenStream, item: TokenStream) -> TokenStream {
    scenario::expand(args.into(), item.into()).into()
}
