//! The attribute parser's unit tests: each value, each combination of keys, each message.

use quote::quote;

use super::*;
use loadbench_grammar::{Metric, Op};

fn parse(tokens: TokenStream) -> ScenarioArgs {
    match ScenarioArgs::parse(tokens) {
        Ok(args) => args,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Every message, in order.
fn errors(tokens: TokenStream) -> Vec<String> {
    match ScenarioArgs::parse(tokens) {
        Ok(args) => panic!("expected errors, got {args:?}"),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn minimal_count() {
    let args = parse(quote!(count = 100_000));
    assert_eq!(args.load.0, Load::Count(100_000));
    assert!(args.concurrency.is_none());
    assert!(args.timeout.is_none() && args.name.is_none() && args.target.is_none());
}

#[test]
fn every_key() {
    let args = parse(quote!(
        concurrency = 1000u32,
        duration = "1m 30s",
        timeout = "500ms",
        grace = "2s",
        name = "checkout",
        target = "http://127.0.0.1:8080/api",
    ));
    assert_eq!(args.concurrency.map(|c| c.0), Some(1000));
    assert_eq!(args.load.0, Load::Duration(Duration::from_secs(90)));
    assert_eq!(args.timeout.map(|t| t.0), Some(Duration::from_millis(500)));
    assert_eq!(args.grace.map(|t| t.0), Some(Duration::from_secs(2)));
    assert_eq!(args.name.map(|n| n.0).as_deref(), Some("checkout"));
    assert_eq!(args.target.map(|t| t.0).as_deref(), Some("http://127.0.0.1:8080/api"));
}

#[test]
fn integers() {
    assert_eq!(errors(quote!(concurrency = 0, count = 1)), ["`concurrency` must be at least 1"]);
    assert_eq!(errors(quote!(concurrency = -5, count = 1)), ["`concurrency` must be at least 1"]);
    assert_eq!(errors(quote!(concurrency = "8", count = 1)), ["expected an integer such as `100`"]);
    assert_eq!(errors(quote!(concurrency = 1.5, count = 1)), ["expected an integer such as `100`"]);
    assert_eq!(errors(quote!(concurrency = 4_294_967_296, count = 1)), ["`concurrency` must be at most 4294967295"]);
    assert_eq!(
        errors(quote!(concurrency = 8u8, count = 1)),
        ["`concurrency` is a `u32`: write `8` without the `u8` suffix"]
    );
    assert_eq!(errors(quote!(count = 0)), ["`count` must be at least 1"]);
    assert_eq!(parse(quote!(count = 1, max_body = 1_048_576)).max_body.map(|(n, _)| n), Some(1_048_576));
    assert_eq!(errors(quote!(count = 1, max_body = 0)), ["`max_body` must be at least 1"]);
    assert_eq!(errors(quote!(count = 1, max_body = "1MB")), ["expected an integer such as `1_048_576`"]);
    assert_eq!(errors(quote!(count = 1, max_body = -1)), ["`max_body` must be at least 1"]);
    assert_eq!(parse(quote!(count = 18_446_744_073_709_551_615)).load.0, Load::Count(u64::MAX));
}

#[test]
fn durations() {
    assert_eq!(errors(quote!(duration = 30)), ["expected a string such as \"30s\""]);
    assert_eq!(errors(quote!(count = 1, timeout = "0s")), ["`timeout`: expected a time above zero"]);
    assert_eq!(errors(quote!(count = 1, grace = "0s")), ["`grace`: expected a time above zero"]);
    assert_eq!(errors(quote!(count = 1, grace = 2)), ["expected a string such as \"2s\""]);
    let bad = errors(quote!(duration = "30 parsecs"));
    assert_eq!(bad.len(), 1);
    assert!(
        bad[0].starts_with(
            "`duration`: expected a time such as 30s, 1m 30s or 500ms (unknown time unit \"parsecs\", supported units:"
        ),
        "{bad:?}"
    );
    assert_eq!(
        errors(quote!(duration = "30")),
        ["`duration`: expected a time such as 30s, 1m 30s or 500ms (time unit needed, for example 30sec or 30ms)"]
    );
    assert_eq!(
        errors(quote!(duration = "")),
        ["`duration`: expected a time such as 30s, 1m 30s or 500ms (value was empty)"]
    );
    assert_eq!(errors(quote!(duration = "1000000 years")), ["`duration`: expected a time of at most about 584 years"]);
    assert_eq!(parse(quote!(duration = "584years")).load.0, Load::Duration(Duration::from_secs(584 * 31_557_600)));
}

#[test]
fn strings() {
    assert_eq!(errors(quote!(count = 1, name = "")), ["`name` must not be empty"]);
    assert_eq!(
        errors(quote!(count = 1, target = "localhost:8080")),
        ["`target` must start with `http://` or `https://`, as in \"http://127.0.0.1:8080\""]
    );
    assert_eq!(
        errors(quote!(count = 1, target = "ftp://example.com")),
        ["`target` must start with `http://` or `https://`, as in \"http://127.0.0.1:8080\""]
    );
    assert_eq!(
        parse(quote!(count = 1, target = "https://example.com")).target.map(|(url, _)| url).as_deref(),
        Some("https://example.com")
    );
    assert_eq!(
        errors(quote!(count = 1, target = "http://")),
        ["`target` has no host, as in \"http://127.0.0.1:8080\""]
    );
    assert_eq!(errors(quote!(count = 1, name = checkout)), ["expected a string such as \"checkout\""]);
}

#[test]
fn cookies_and_redirects() {
    let args = parse(quote!(count = 1, cookies = "user", follow_redirects = 0));
    assert_eq!(args.cookies.map(|(mode, _)| mode), Some(Cookies::User));
    assert_eq!(args.follow_redirects.map(|(hops, _)| hops), Some(0));
    assert_eq!(parse(quote!(count = 1, cookies = "off")).cookies.map(|(mode, _)| mode), Some(Cookies::Off));
    assert!(parse(quote!(count = 1)).cookies.is_none());
    let refused = errors(quote!(count = 1, cookies = "session"));
    assert!(refused[0].contains("\"iteration\"") && refused[0].ends_with("not \"session\""), "{refused:?}");
    assert_eq!(
        errors(quote!(count = 1, follow_redirects = -1)),
        ["`follow_redirects` is a number of redirects: 0 (none) or more"]
    );
}

#[test]
fn shared_connections() {
    let args = parse(quote!(concurrency = 256, connections = 16, pipeline = 16, count = 1));
    assert_eq!((args.connections.map(|c| c.0), args.pipeline.map(|p| p.0)), (Some(16), Some(16)));
    let args = parse(quote!(rate = 500, connections = 100, http2 = true, count = 1));
    assert_eq!((args.connections.map(|c| c.0), args.http2.map(|h| h.0)), (Some(100), Some(true)));
    let args = parse(quote!(concurrency = 50, connections = 5, http3 = true, count = 1));
    assert_eq!((args.connections.map(|c| c.0), args.http3.map(|h| h.0)), (Some(5), Some(true)));
    assert_eq!(
        errors(quote!(count = 1, http2 = true, http3 = true)),
        ["`http2` and `http3` ask for different protocols; keep one"]
    );
    assert_eq!(
        errors(quote!(concurrency = 10, connections = 2, pipeline = 4, http3 = true, count = 1)),
        [
            "`pipeline` is HTTP/1.1's: over HTTP/3 (`http3 = true`) the requests on a connection are concurrent streams; remove `pipeline`"
        ]
    );
    assert_eq!(errors(quote!(count = 1, http3 = "yes")), ["`http3` is `true` or `false`, as in `http3 = true`"]);
    // `false` asks for nothing, so it conflicts with nothing.
    assert_eq!(parse(quote!(count = 1, http2 = true, http3 = false)).http3.map(|h| h.0), Some(false));
    // Without `concurrency`, a closed scenario has 1 user and an open one 100.
    assert_eq!(
        errors(quote!(count = 1, connections = 2)),
        ["`connections = 2` is more than the virtual users (1): each connection needs a user to send on it"]
    );
    assert_eq!(
        errors(quote!(rate = 500, count = 1, connections = 101)),
        ["`connections = 101` is more than the virtual users (100): each connection needs a user to send on it"]
    );
    let ramp = quote!(stages = [("1s", 8)], connections = 9);
    assert_eq!(
        errors(ramp),
        ["`connections = 9` is more than the virtual users (8): each connection needs a user to send on it"]
    );
}

#[test]
fn combinations() {
    assert_eq!(errors(quote!()), [NO_LOAD]);
    assert_eq!(errors(quote!(concurrency = 5)), [NO_LOAD]);
    assert_eq!(
        errors(quote!(count = 1, duration = "1s")),
        [
            "`duration` cannot be combined with `count`: a scenario stops after a number of iterations or after a time, not both"
        ]
    );
    assert_eq!(errors(quote!(count = 1, count = 2)), ["`count` is set more than once"]);
    // An invalid first value still counts as given.
    assert_eq!(errors(quote!(count = 0, count = 2)), ["`count` must be at least 1", "`count` is set more than once"]);
}

#[test]
fn unknown_keys_and_malformed_values() {
    let expected = "unknown attribute `foo`; expected one of: `concurrency`, `count`, `duration`, `timeout`, `max_body`, `grace`, `name`, `target`, `thresholds`, `rate`, `max_concurrency`, `warmup`, `think_time`, `setup`, `teardown`, `stages`, `rate_stages`, `group`, `cookies`, `follow_redirects`, `feed`, `feed_mode`, `feed_end`, `connections`, `pipeline`, `http2`, `http3`";
    assert_eq!(errors(quote!(foo = 1, count = 1)), [expected]);
    assert_eq!(errors(quote!(count = 1, foo(1, 2))), [expected]);
    assert_eq!(errors(quote!(count = 1, a::b)), [expected.replace("`foo`", "`a::b`")]);
    assert_eq!(errors(quote!(count)), ["expected a value: `count = 10_000`"]);
}

#[test]
fn rates() {
    let rate = |tokens: TokenStream| parse(tokens).rate.map(|(r, _)| (r.iterations, r.per.as_secs()));
    assert_eq!(rate(quote!(rate = 2000, duration = "5s")), Some((2000, 1)));
    assert_eq!(rate(quote!(rate = 2_000u64, duration = "5s")), Some((2000, 1)));
    assert_eq!(rate(quote!(rate = "2_000/s", duration = "5s")), Some((2000, 1)));
    assert_eq!(rate(quote!(rate = "120/m", count = 10)), Some((120, 60)));
    assert_eq!(rate(quote!(rate = "10 / h", count = 10)), Some((10, 3600)));
    // As `--rate 2000`: a string without a unit is per second.
    assert_eq!(rate(quote!(rate = "2000", count = 1)), Some((2000, 1)));
    assert_eq!(parse(quote!(rate = 5, max_concurrency = 3, count = 1)).max_concurrency.map(|m| m.0), Some(3));

    assert_eq!(errors(quote!(rate = 0, count = 1)), ["`rate`: a rate must be at least 1"]);
    assert_eq!(errors(quote!(rate = "0/s", count = 1)), ["`rate`: a rate must be at least 1"]);
    assert_eq!(
        errors(quote!(rate = "5/d", count = 1)),
        ["`rate`: unknown unit `/d`: use /s, /m or /h; write it like 2000, 2000/s or 120/m"]
    );
    assert_eq!(
        errors(quote!(rate = "fast/s", count = 1)),
        ["`rate`: `fast` is not a whole number of iterations; write it like 2000, 2000/s or 120/m"]
    );
    assert_eq!(
        errors(quote!(rate = 1.5, count = 1)),
        ["`rate`: `1.5` is not a whole number of iterations; write it like 2000, 2000/s or 120/m"]
    );
    assert_eq!(errors(quote!(rate = -3, count = 1)), ["`rate`: a rate must be at least 1"]);
    assert_eq!(errors(quote!(rate = true, count = 1)), ["expected a rate such as `2000` or `\"120/m\"`"]);
    assert_eq!(errors(quote!(rate = 5u8, count = 1)), ["`rate` is a `u64`: write `5` without the `u8` suffix"]);
    assert_eq!(errors(quote!(max_concurrency = 0, rate = 1, count = 1)), ["`max_concurrency` must be at least 1"]);
    assert_eq!(
        errors(quote!(rate = 10, concurrency = 5, count = 1)),
        [
            "`concurrency` sets the users of the closed model; with `rate`, write `max_concurrency = N` for the users that serve the rate"
        ]
    );
    assert_eq!(
        errors(quote!(max_concurrency = 5, count = 1)),
        [
            "`max_concurrency` goes with `rate = …` or `rate_stages = […]` (the open model); for a fixed number of users write `concurrency = N`"
        ]
    );
}

#[test]
fn warmups() {
    let warmup = |tokens: TokenStream| parse(tokens).warmup.map(|(w, _)| w);
    assert_eq!(warmup(quote!(count = 1, warmup = "5s")), Some(Load::Duration(Duration::from_secs(5))));
    assert_eq!(warmup(quote!(count = 1, warmup = 100)), Some(Load::Count(100)));
    assert_eq!(warmup(quote!(count = 1)), None);
    assert_eq!(errors(quote!(count = 1, warmup = 0)), ["`warmup` must be at least 1; leave it out for no warmup"]);
    assert_eq!(errors(quote!(count = 1, warmup = "0s")), ["`warmup`: expected a time above zero"]);
    assert_eq!(
        errors(quote!(count = 1, warmup = true)),
        ["expected a time such as `\"5s\"` or a number of iterations such as `100`"]
    );
    assert_eq!(
        errors(quote!(count = 1, warmup = "soon")),
        ["`warmup`: expected a time such as 30s, 1m 30s or 500ms (expected number at 0)"]
    );
}

#[test]
fn think_times() {
    let think = |tokens: TokenStream| parse(tokens).think_time.map(|(t, _)| t);
    let ms = Duration::from_millis;
    assert_eq!(think(quote!(count = 1, think_time = "1s")), Some((ms(1_000), ms(1_000))));
    assert_eq!(think(quote!(count = 1, think_time = "500ms..2s")), Some((ms(500), ms(2_000))));
    assert_eq!(think(quote!(count = 1, think_time = "0s .. 1s")), Some((ms(0), ms(1_000))));
    assert_eq!(
        errors(quote!(count = 1, think_time = "2s..1s")),
        ["`think_time`: expected the shorter time first, as in 500ms..2s"]
    );
    assert_eq!(
        errors(quote!(count = 1, think_time = "0s")),
        ["`think_time`: expected a pause above zero; leave it out for no pause"]
    );
    assert_eq!(
        errors(quote!(count = 1, think_time = "1s..soon")),
        [
            "`think_time`: expected a time such as 30s, 1m 30s or 500ms (expected number at 0); write it like 1s or 500ms..2s"
        ]
    );
    assert_eq!(
        errors(quote!(count = 1, think_time = "1s..1000000 years")),
        ["`think_time`: expected a time of at most about 584 years; write it like 1s or 500ms..2s"]
    );
    assert_eq!(errors(quote!(count = 1, think_time = 5)), ["expected a string such as \"500ms..2s\""]);
    assert_eq!(
        errors(quote!(rate = 5, count = 1, think_time = "1s")),
        ["`think_time` paces the users of the closed model; with `rate`, the schedule sets the pace"]
    );
}

#[test]
fn hooks() {
    let args = parse(quote!(count = 1, setup = log_in, teardown = session::log_out));
    assert_eq!(args.setup.map(|p| p.0.to_string()).as_deref(), Some("log_in"));
    assert_eq!(args.teardown.map(|p| p.0.to_string()).as_deref(), Some("session :: log_out"));
    assert_eq!(
        errors(quote!(count = 1, setup = "log_in")),
        ["`setup` names an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>`, as in `setup = log_in`"]
    );
    assert_eq!(
        errors(quote!(count = 1, teardown = log_out(ctx))),
        ["`teardown` names an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>`, as in `teardown = log_out`"]
    );
    assert_eq!(errors(quote!(count = 1, setup = a, setup = b)), ["`setup` is set more than once"]);
}

#[test]
fn ramps() {
    let args = parse(quote!(stages = [("10s", 100), ("30s", 100), ("10s", 0)]));
    let s = Duration::from_secs;
    assert_eq!(args.stages.map(|s| s.0), Some(vec![(s(10), 100), (s(30), 100), (s(10), 0)]));
    assert_eq!(args.load.0, Load::Duration(s(50)));
    let args = parse(quote!(rate_stages = [("1m", 500)], max_concurrency = 20));
    assert_eq!(args.rate_stages.map(|s| s.0), Some(vec![(s(60), 500)]));
    assert_eq!(args.load.0, Load::Duration(s(60)));

    let shape =
        "write `stages` as a list of (time, target), as in `stages = [(\"10s\", 100), (\"30s\", 100), (\"10s\", 0)]`";
    assert_eq!(errors(quote!(stages = ("10s", 100))), [shape]);
    assert_eq!(errors(quote!(stages = [("10s", 100, 3)])), [shape]);
    assert_eq!(errors(quote!(stages = [("10s", "100")])), [shape]);
    assert_eq!(
        errors(quote!(stages = [])),
        ["`stages` needs at least one stage: [(\"10s\", 100), (\"30s\", 100), (\"10s\", 0)]"]
    );
    assert_eq!(errors(quote!(stages = [("10s", 0)])), ["`stages` never rises above 0: give a stage a target"]);
    assert_eq!(errors(quote!(stages = [("10s", 5_000_000_000)])), ["a target of `stages` must be at most 4294967295"]);
    assert_eq!(
        errors(quote!(stages = [("soon", 10)])),
        ["`stages`: expected a time such as 30s, 1m 30s or 500ms (expected number at 0)"]
    );
    assert_eq!(errors(quote!(stages = [("0s", 10)])), ["`stages`: expected a time above zero"]);
    // Each stage fits, their sum (the run time) does not.
    assert_eq!(
        errors(quote!(rate_stages = [("584years", 10), ("1year", 10)])),
        ["`rate_stages`: expected a time of at most about 584 years"]
    );
    assert_eq!(
        errors(quote!(stages = [("10s", 10)], concurrency = 5, duration = "1s")),
        [
            "`concurrency` cannot be combined with `stages`: the stages set the users and how long the scenario runs",
            "`duration` cannot be combined with `stages`: the stages set the users and how long the scenario runs",
        ]
    );
    assert_eq!(
        errors(quote!(rate_stages = [("10s", 10)], rate = 5)),
        [
            "`rate` cannot be combined with `rate_stages`: the stages set the arrival rate and how long the scenario runs"
        ]
    );
}

#[test]
fn groups() {
    assert_eq!(parse(quote!(count = 1, group = "shop")).group.map(|g| g.0).as_deref(), Some("shop"));
    assert_eq!(errors(quote!(count = 1, group = " ")), ["`group` must not be empty"]);
    assert_eq!(errors(quote!(count = 1, group = shop)), ["expected a string such as \"shop\""]);
}

#[test]
fn reports_every_error_at_once() {
    let all = errors(quote!(concurrency = 0, foo = 1, duration = "soon", name = ""));
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all[0], "`concurrency` must be at least 1");
    assert!(all[1].starts_with("unknown attribute `foo`"));
    assert!(all[2].starts_with("`duration`: expected a time such as 30s"), "{all:?}");
    assert_eq!(all[3], "`name` must not be empty");
}

/// The grammar's message for what is not `METRIC OP LIMIT` at all.
const SHAPE: &str = "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`";

fn thresholds_of(tokens: TokenStream) -> Vec<(Metric, Op, f64)> {
    parse(tokens).thresholds.into_iter().map(|(t, _)| (t.metric, t.op, t.value)).collect()
}

#[test]
fn thresholds_on_rows() {
    let args = parse(quote!(
        count = 1,
        thresholds("GET /items/{id}": p99 < "50ms", error_rate < 0.01, "login": max < 1s, "login": rps >= 5)
    ));
    assert_eq!(args.thresholds.len(), 1, "the scenario's own");
    let rows: Vec<String> = args.row_thresholds.iter().map(|(t, _)| t.to_string()).collect();
    assert_eq!(rows, ["{GET /items/{id}}: p99 < 50ms", "{login}: max < 1s", "{login}: rps >= 5"]);
    assert_eq!(
        errors(quote!(count = 1, thresholds("": p99 < "1s", "a": checks > 0.5, a: p99 < "1s", "a":))),
        [
            "the row name is empty; name a step or a named request, as in `\"login\": p99 < \"1s\"`",
            "`checks` means nothing for a row (a step or a named request); a row's thresholds take a latency \
             (p50 … p99_9, any pNN, max, mean), error_rate, rps or failed",
            "write the row's name as a string: `\"a\": …`",
            "expected a condition after the row's name, as in `\"login\": p99 < \"1s\"`",
        ]
    );
}

#[test]
fn thresholds() {
    assert_eq!(
        thresholds_of(quote!(count = 1, thresholds(p99 < "50ms", error_rate <= 0.01, rps > 1000, failed < 1,))),
        [
            (Metric::P99, Op::Lt, 50_000.0),
            (Metric::ErrorRate, Op::Le, 0.01),
            (Metric::Rps, Op::Gt, 1000.0),
            (Metric::Failed, Op::Lt, 1.0),
        ]
    );
    assert_eq!(
        thresholds_of(quote!(
            count = 1,
            thresholds(p50 >= "1s 500ms", p99_9 < "2ms", max < "1s", mean < "1ms", p90 < "3ms", rps >= 0.5)
        )),
        [
            (Metric::P50, Op::Ge, 1_500_000.0),
            (Metric::P999, Op::Lt, 2_000.0),
            (Metric::Max, Op::Lt, 1_000_000.0),
            (Metric::Mean, Op::Lt, 1_000.0),
            (Metric::P90, Op::Lt, 3_000.0),
            (Metric::Rps, Op::Ge, 0.5),
        ]
    );
    // As on the command line: a latency unquoted, a fraction as a percentage.
    assert_eq!(
        thresholds_of(quote!(count = 1, thresholds(p99 < 50ms, p50 >= 1s 500ms, error_rate <= 1%, rps > 1_000))),
        [
            (Metric::P99, Op::Lt, 50_000.0),
            (Metric::P50, Op::Ge, 1_500_000.0),
            (Metric::ErrorRate, Op::Le, 0.01),
            (Metric::Rps, Op::Gt, 1000.0),
        ]
    );
    // Any percentile, exactly.
    let p75 = "p75".parse::<Metric>().unwrap_or(Metric::Max);
    let p99_99 = "p99_99".parse::<Metric>().unwrap_or(Metric::Max);
    assert_eq!(
        thresholds_of(quote!(count = 1, thresholds(p95 < 5ms, p75 <= "1ms", p99_99 < 1s))),
        [(Metric::P95, Op::Lt, 5_000.0), (p75, Op::Le, 1_000.0), (p99_99, Op::Lt, 1_000_000.0)]
    );
    assert!(parse(quote!(count = 1)).thresholds.is_empty());
}

#[test]
fn every_bad_threshold_is_reported() {
    let all = errors(quote!(
        count = 1,
        thresholds(p100 < "5ms", p99 == "5ms", p99 < 50, error_rate < 2, rps > -1, failed < 0.5, p50 < "soon", 5)
    ));
    assert_eq!(
        all,
        [
            "unknown metric `p100`; expected one of: p50, p90, p95, p99, p99_9, max, mean, error_rate, rps, failed, \
             checks, dropped, rate, saturated, or another percentile such as p75 or p99_99 (above p0, below \
             p100)",
            "unsupported comparison `==`; use <, <=, > or >=",
            "p99 takes a duration such as 50ms, not `50`",
            "error_rate is a fraction from 0 to 1, such as 0.01 or 1%, not `2`",
            "rps takes a number of iterations per second, such as 1000, not `-1`",
            "failed takes a whole number, such as 0, not `0.5`",
            "p50 takes a duration such as 50ms, not `soon`",
            SHAPE,
        ]
    );
    assert_eq!(errors(quote!(count = 1, thresholds(p99))), [SHAPE]);
    assert_eq!(errors(quote!(count = 1, thresholds(rps >))), [SHAPE]);
    assert_eq!(errors(quote!(count = 1, thresholds(p99 < "1ms" "2ms"))), ["expected `,` between thresholds"]);
    assert_eq!(
        errors(quote!(count = 1, thresholds())),
        ["`thresholds` is empty; write at least one, as in `thresholds(p99 < \"50ms\")`"]
    );
    assert_eq!(errors(quote!(count = 1, thresholds(p99 < "1ms", , rps > 1))), ["empty threshold between two commas"]);
    assert_eq!(
        errors(quote!(count = 1, thresholds = "p99 < 50ms")),
        ["write thresholds as a list: `thresholds(p99 < \"50ms\", error_rate < 0.01)`"]
    );
    assert_eq!(
        errors(quote!(count = 1, thresholds(p99 < "0s"))),
        ["p99 takes a duration above zero, such as 50ms, not `0s`"]
    );
    // Keys after a bad threshold list are still checked.
    assert_eq!(
        errors(quote!(thresholds(p100 < "1ms"), count = 0)),
        [
            "unknown metric `p100`; expected one of: p50, p90, p95, p99, p99_9, max, mean, error_rate, rps, failed, \
             checks, dropped, rate, saturated, or another percentile such as p75 or p99_99 (above p0, below \
             p100)",
            "`count` must be at least 1"
        ]
    );
}

#[test]
fn a_syntax_error_keeps_earlier_errors_and_skips_the_missing_load_check() {
    let all = errors(quote!(concurrency = 0 name = "x"));
    assert_eq!(all, ["`concurrency` must be at least 1", "expected `,`"]);
}
