use super::*;

fn messages(args: TokenStream, item: TokenStream) -> Vec<String> {
    let mut errors = Errors::default();
    errors.check(ScenarioArgs::parse(args));
    match syn::parse2::<ItemFn>(item) {
        Ok(func) => errors.append(check_signature(&func.sig)),
        Err(e) => errors.push(e),
    }
    match errors.finish() {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn a_valid_scenario_has_no_errors() {
    let item = quote!(
        async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    assert!(messages(quote!(count = 1), item).is_empty());
}

#[test]
fn signature_errors_are_all_reported() {
    let item = quote!(
        fn hello<T>(a: &mut T, b: u8) {}
    );
    assert_eq!(
        messages(quote!(count = 1), item),
        [
            "a scenario must be an `async fn`",
            "a scenario cannot have generic parameters",
            ONE_PARAMETER,
            "a scenario must return `loadbench::Result<()>`: write `async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()>`",
        ]
    );
}

#[test]
fn parameters() {
    let ret = quote!(-> loadbench::Result<()>);
    assert_eq!(messages(quote!(count = 1), quote!(async fn f() #ret {})), [ONE_PARAMETER]);
    assert_eq!(messages(quote!(count = 1), quote!(async fn f(ctx: &Ctx) #ret {})), [ONE_PARAMETER]);
    assert_eq!(messages(quote!(count = 1), quote!(async fn f(ctx: Ctx) #ret {})), [ONE_PARAMETER]);
    assert_eq!(
        messages(quote!(count = 1), quote!(async fn f(&mut self) #ret {})),
        ["a scenario cannot take `self`: it must be a free function"]
    );
}

#[test]
fn argument_and_signature_errors_come_together() {
    let item = quote!(
        async fn f(ctx: &mut Ctx) {}
    );
    assert_eq!(
        messages(quote!(count = 0), item),
        [
            "`count` must be at least 1",
            "a scenario must return `loadbench::Result<()>`: write `async fn f(ctx: &mut loadbench::Ctx) -> loadbench::Result<()>`"
        ]
    );
}

#[test]
fn expansion_keeps_the_item_and_registers_it() {
    let item = quote!(
        async fn r#match(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    let out = expand(quote!(concurrency = 3, duration = "2s", timeout = "1s"), item.clone()).to_string();
    assert!(out.starts_with(&item.to_string()), "{out}");
    assert!(out.contains("name : \"match\""), "{out}");
    assert!(out.contains("concurrency : :: core :: option :: Option :: Some (3)"), "{out}");
    assert!(out.contains("Load :: Duration (:: core :: time :: Duration :: from_nanos (2000000000))"), "{out}");
    assert!(out.contains("timeout : :: core :: option :: Option :: Some"), "{out}");
    assert!(out.contains("vu_future (user , r#match)"), "{out}");
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn a_rate_becomes_the_open_model() {
    let item = quote!(
        async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    let out = expand(quote!(rate = "120/m", duration = "5s"), item.clone()).to_string();
    // The open model's default users are the runtime's (`ScenarioConfig::users`).
    assert!(!out.contains("concurrency :"), "{out}");
    assert!(
            out.contains("rate : :: core :: option :: Option :: Some (:: loadbench :: __private :: Rate { iterations : 120 , per : :: core :: time :: Duration :: from_nanos (60000000000) })"),
            "{out}"
        );
    let out = expand(quote!(rate = 2000, max_concurrency = 7, count = 10), item.clone()).to_string();
    assert!(out.contains("concurrency : :: core :: option :: Option :: Some (7)"), "{out}");
    assert!(out.contains("iterations : 2000"), "{out}");
    // Keys not written are the runtime's defaults.
    let out = expand(quote!(count = 10), item.clone()).to_string();
    assert!(!out.contains("rate :"), "{out}");
    assert!(!out.contains("warmup :"), "{out}");
    assert!(!out.contains("concurrency :"), "{out}");
    assert!(out.contains(".. :: loadbench :: __private :: ScenarioConfig :: DEFAULT }"), "{out}");
    let out = expand(quote!(count = 10, warmup = 5), item).to_string();
    assert!(
        out.contains("warmup : :: core :: option :: Option :: Some (:: loadbench :: __private :: Load :: Count (5))"),
        "{out}"
    );
}

#[test]
fn thresholds_become_runtime_values() {
    let item = quote!(
        async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    let out = expand(quote!(count = 1, thresholds(p99 < "50ms", error_rate <= 0.01)), item.clone()).to_string();
    assert!(
            out.contains("Threshold { metric : :: loadbench :: __private :: Metric :: P99 , op : :: loadbench :: __private :: Op :: Lt , value : 50000.0 }"),
            "{out}"
        );
    assert!(out.contains("Metric :: ErrorRate , op : :: loadbench :: __private :: Op :: Le , value : 0.01 }"), "{out}");
    let out = expand(quote!(count = 1), item).to_string();
    assert!(!out.contains("thresholds :"), "{out}");
}

#[test]
fn every_metric_and_comparison_of_the_grammar_names_a_variant() {
    let private = quote!(::loadbench::__private);
    for m in loadbench_grammar::Metric::ALL {
        let path = metric(m, Span::call_site(), &private).to_string();
        assert!(syn::parse_str::<syn::Path>(&path).is_ok(), "{m}: {path}");
    }
    let p75 = metric("p75".parse().unwrap_or(loadbench_grammar::Metric::Max), Span::call_site(), &private);
    assert!(p75.to_string().contains("from_hundred_thousandths (7500000)"), "{p75}");
    for op in loadbench_grammar::Op::ALL {
        assert!(syn::parse_str::<Ident>(&variant(op, Span::call_site()).to_string()).is_ok(), "{op}");
    }
    assert_eq!(
        metric(loadbench_grammar::Metric::P999, Span::call_site(), &private).to_string(),
        ":: loadbench :: __private :: Metric :: P999"
    );
    assert_eq!(variant(loadbench_grammar::Op::Ge, Span::call_site()).to_string(), "Ge");
}

#[test]
fn on_error_the_item_is_kept() {
    let item = quote!(
        fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    let out = expand(quote!(count = 1), item.clone()).to_string();
    assert!(out.starts_with(&item.to_string()), "{out}");
    assert!(out.contains("compile_error"), "{out}");
    assert!(!out.contains("inventory"), "{out}");
}

#[test]
fn http3_asks_for_the_http3_protocol_and_nothing_else() {
    let item = quote!(
        async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    );
    let protocol = |args: TokenStream| {
        let out = expand(args, item.clone()).to_string();
        assert_eq!(out.matches("protocol :").count(), 1, "{out}");
        out.contains("protocol : :: loadbench :: __private :: Protocol :: Http3")
    };
    assert!(protocol(quote!(count = 1, http3 = true)));
    assert!(protocol(quote!(count = 1, http2 = false, http3 = true)));
    assert!(!protocol(quote!(count = 1, http2 = true, http3 = false)));
    let out = expand(quote!(count = 1, http3 = false), item).to_string();
    assert!(!out.contains("protocol :"), "{out}");
}
