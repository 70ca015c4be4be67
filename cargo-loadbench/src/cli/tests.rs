use super::url::Body;
use super::*;
use loadbench::Method;

#[test]
fn verify_app() {
    use clap::CommandFactory;
    Cargo::command().debug_assert();
}

#[test]
fn parses_the_subcommand_form_cargo_uses() {
    let parsed = Cargo::try_parse_from([
        "cargo-loadbench",
        "loadbench",
        "hello",
        "-p",
        "shop",
        "--bench",
        "api",
        "--target",
        "http://127.0.0.1:1",
    ]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    assert_eq!(args.filters, ["hello"]);
    assert_eq!(args.selection.packages, ["shop"]);
    assert_eq!(args.selection.benches, ["api"]);
    assert_eq!(args.targets, [TargetArg { name: None, url: "http://127.0.0.1:1".into() }]);
    assert!(!args.list && !args.exact && !args.quiet);
}

#[test]
fn gating_and_output_flags() {
    let parsed = Cargo::try_parse_from([
        "cargo-loadbench",
        "loadbench",
        "--runs",
        "3",
        "--baseline",
        "main",
        "--save-baseline",
        "pr-12",
        "--noise-threshold",
        "2.5%",
        "--fail-on-regression",
        "--threshold",
        "hello:p99<50ms",
        "--threshold",
        "error_rate<0.01",
        "--format",
        "markdown",
        "--output",
        "out.xml",
        "--output",
        "csv:results.txt",
    ]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    assert_eq!(args.runs, Some(3));
    assert_eq!(args.baseline.as_deref(), Some("main"));
    assert_eq!(args.save_baseline.as_deref(), Some("pr-12"));
    assert_eq!(args.noise_threshold, Some(2.5));
    assert!(args.fail_on_regression);
    assert_eq!(args.thresholds.len(), 2);
    assert_eq!(args.thresholds[0].scenario.as_deref(), Some("hello"));
    assert_eq!(args.thresholds[1].scenario, None);
    assert_eq!(args.format, Format::Markdown);
    let outputs: Vec<(Format, String)> =
        args.outputs.iter().map(|o| (o.format, o.path.display().to_string())).collect();
    assert_eq!(outputs, [(Format::Junit, "out.xml".to_owned()), (Format::Csv, "results.txt".to_owned())]);
}

#[test]
fn targets_repeat_with_names() {
    let parsed = Cargo::try_parse_from([
        "cargo-loadbench",
        "loadbench",
        "--target",
        "fast=http://127.0.0.1:1",
        "--target",
        "slow=http://127.0.0.1:2/api",
    ]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    let named: Vec<(Option<&str>, &str)> = args.targets.iter().map(|t| (t.name.as_deref(), t.url.as_str())).collect();
    assert_eq!(named, [(Some("fast"), "http://127.0.0.1:1"), (Some("slow"), "http://127.0.0.1:2/api")]);
}

#[test]
fn the_last_of_fail_and_no_fail_on_regression_wins() {
    let parse = |flags: &[&str]| {
        let args = ["cargo-loadbench", "loadbench"].iter().chain(flags).copied();
        match Cargo::try_parse_from(args) {
            Ok(Cargo::Loadbench(args)) => (args.fail_on_regression, args.no_fail_on_regression),
            Err(err) => panic!("{flags:?}: {err}"),
        }
    };
    assert_eq!(parse(&[]), (false, false));
    assert_eq!(parse(&["--fail-on-regression", "--no-fail-on-regression"]), (false, true));
    assert_eq!(parse(&["--no-fail-on-regression", "--fail-on-regression"]), (true, false));
}

#[test]
fn bad_gating_values_are_one_line_usage_errors() {
    for (flag, value, message) in [
        ("--threshold", "hello:p100<5ms", "unknown metric `p100`"),
        ("--threshold", "p99<50", "p99 takes a duration such as 50ms"),
        ("--runs", "0", "runs must be from 1 to 1000, not 0"),
        ("--noise-threshold", "lots", "expected a percentage"),
        ("--baseline", "../main", "a baseline name is letters"),
        ("--output", "results.dat", "cannot tell the format of `results.dat`"),
        ("--target", "fast=localhost:80", "target `localhost:80` is not a valid URL"),
        ("--target", "my server=http://h", "`my server` is not a target name"),
    ] {
        let Err(err) = Cargo::try_parse_from(["cargo-loadbench", "loadbench", flag, value]) else {
            panic!("{flag} {value} was accepted")
        };
        assert_eq!(err.exit_code(), 2);
        let first = err.to_string().lines().next().unwrap_or_default().to_owned();
        assert!(first.contains(message), "{flag} {value}: {first}");
    }
}

fn parse_url_run(flags: &[&str]) -> Result<(Args, UrlArgs), clap::Error> {
    let argv = ["cargo-loadbench", "loadbench"].iter().chain(flags).copied();
    let Cargo::Loadbench(mut args) = Cargo::try_parse_from(argv)?;
    match args.command.take() {
        Some(Command::Url(url)) => Ok((args, *url)),
        other => panic!("{flags:?} parsed as {other:?}"),
    }
}

#[test]
fn the_url_subcommand_takes_its_flags_and_the_shared_ones_on_either_side() {
    let (args, url) = parse_url_run(&[
        "--quiet",
        "url",
        "http://127.0.0.1:9090/items?x=1",
        "-c",
        "1000",
        "-n",
        "100000",
        "--rate",
        "120/m",
        "-m",
        "post",
        "-H",
        "x-k: v",
        "-H",
        "Content-Type:text/plain",
        "--body",
        "hi",
        "--timeout",
        "2s",
        "--json",
        "out.json",
        "--threshold",
        "p99<50ms",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(args.quiet, "a shared flag before `url`");
    assert_eq!(args.json.as_deref(), Some(std::path::Path::new("out.json")), "a shared flag after `url`");
    assert_eq!(args.thresholds.len(), 1);
    assert_eq!(args.scenario_flag(), None);
    assert_eq!(
        (url.location.url.as_deref(), url.location.path.as_str(), url.concurrency, url.requests),
        (Some("http://127.0.0.1:9090/items?x=1"), "/items?x=1", 1000, Some(100_000))
    );
    assert_eq!(url.rate.map(|r| r.per_second()), Some(2.0));
    assert_eq!(url.method, Method::POST);
    let headers: Vec<String> = url.headers.iter().map(ToString::to_string).collect();
    assert_eq!(headers, ["x-k: v", "content-type: text/plain"]);
    assert_eq!(url.body, Some(Body(b"hi".to_vec())));
    assert_eq!(url.timeout, Some(Duration::from_secs(2)));

    let (_, url) = parse_url_run(&["url", "http://h/"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((url.concurrency, url.requests, url.duration, url.method), (50, None, None, Method::GET));
}

#[test]
fn side_by_side_the_url_may_be_a_path_and_targets_go_on_either_side() {
    let (args, url) = parse_url_run(&[
        "--target",
        "a=http://127.0.0.1:1",
        "url",
        "/items?x=1",
        "--target",
        "b=http://127.0.0.1:2/api",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.location, Location { url: None, path: "/items?x=1".into() });
    let names: Vec<Option<&str>> = args.targets.iter().chain(&url.targets).map(|t| t.name.as_deref()).collect();
    assert_eq!(names, [Some("a"), Some("b")], "before and after `url`, in that order");
    assert_eq!(args.scenario_flag(), None, "--target is for `url` too");

    let (_, url) = parse_url_run(&["url", "http://h:1"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.location.path, "/", "a URL without a path requests /");
}

#[test]
fn bad_url_values_are_one_line_usage_errors_naming_the_flag() {
    for (flags, message) in [
        (&["url", "127.0.0.1:9090"][..], "for '<URL>': `127.0.0.1:9090` is not a valid URL"),
        (&["url", "ftp://h/"], "the scheme must be http:// or https://"),
        (
            &["url", "http://h/", "--connect-to", "h:80"],
            "for '--connect-to <HOST:PORT:ADDR:PORT>': `h:80` is not HOST:PORT:ADDR:PORT",
        ),
        (&["url", "http://h/", "-H", "nocolon"], "for '--header <NAME: VALUE>': `nocolon` is not a valid header"),
        (&["url", "http://h/", "--rate", "fast"], "for '--rate <RATE>': `fast` is not a whole number"),
        (&["url", "http://h/", "-d", "soon"], "for '--duration <TIME>': expected a time"),
        (&["url", "http://h/", "-n", "5", "-d", "1s"], "'--requests <N>' cannot be used with '--duration <TIME>'"),
        (&["url", "http://h/", "--body", "@/no/such/file"], "cannot read body file `/no/such/file`"),
        (&["url", "http://h/", "--frobnicate"], "'--frobnicate'"),
        (&["url", "/a b"], "for '<URL>': `/a b` is not a valid path and query"),
        (&["url", "items"], "for '<URL>': `items` is not a valid URL"),
    ] {
        let Err(err) = parse_url_run(flags) else { panic!("{flags:?} was accepted") };
        assert_eq!(err.exit_code(), 2);
        let first = err.to_string().lines().next().unwrap_or_default().to_owned();
        assert!(first.contains(message), "{flags:?}: {first}");
    }
}

#[test]
fn distributed_flags_go_on_either_side_of_url_and_not_to_report() {
    let (args, _) = parse_url_run(&["--shard", "1/3", "url", "http://h/", "--start-at", "1796119200", "--histograms"])
        .unwrap_or_else(|e| panic!("{e}"));
    let distributed = &args.distributed;
    assert_eq!(distributed.shard.map(|s| (s.index(), s.count())), Some((1, 3)));
    assert_eq!(distributed.start_at.map(|s| s.millis()).as_deref(), Some("2026-12-01T10:00:00.000Z"));
    assert!(distributed.histograms);
    assert_eq!(args.run_flag(), Some("--shard"), "`report` runs nothing and refuses them");
    for (flags, message) in [
        (
            &["url", "http://h/", "--shard", "3/3"][..],
            "`3/3` is not a shard: give I/N with I from 0 to N-1 and N at most 10000, such as 0/3",
        ),
        (&["url", "http://h/", "--start-at", "soon"], "`soon` is not a start time"),
    ] {
        let Err(err) = parse_url_run(flags) else { panic!("{flags:?} was accepted") };
        assert_eq!(err.exit_code(), 2);
        let first = err.to_string().lines().next().unwrap_or_default().to_owned();
        assert!(first.contains(message), "{flags:?}: {first}");
    }
}

#[test]
fn remote_write_flags_are_passed_on_and_refused_by_url_and_report() {
    let parsed = Cargo::try_parse_from([
        "cargo-loadbench",
        "loadbench",
        "--remote-write",
        "http://127.0.0.1:9090/api/v1/write",
        "--remote-write-label",
        "env=ci",
        "--remote-write-interval",
        "5s",
    ]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    let passed: Vec<String> = args.remote_write.to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(
        passed,
        [
            "--remote-write",
            "http://127.0.0.1:9090/api/v1/write",
            "--remote-write-label",
            "env=ci",
            "--remote-write-interval",
            "5000ms"
        ]
    );
    assert_eq!(args.scenario_flag(), Some("--remote-write"), "`url` pushes nothing");
    assert_eq!(args.run_flag(), Some("--remote-write"), "`report` runs nothing");
    let (args, _) =
        parse_url_run(&["url", "http://h/", "--remote-write", "http://p/"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(args.scenario_flag(), Some("--remote-write"));
}

#[test]
fn a_filter_named_url_goes_after_a_double_dash() {
    let parsed = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--", "url"]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    assert_eq!(args.filters, ["url"]);
    assert!(args.command.is_none());
    let (args, _) = parse_url_run(&["--bench", "api", "url", "http://h/"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(args.scenario_flag(), Some("--bench"), "refused by the url pipeline");
}

#[test]
fn unknown_flags_are_usage_errors() {
    let Err(err) = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--frobnicate"]) else {
        panic!("--frobnicate was accepted")
    };
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("--frobnicate"), "{err}");
}
