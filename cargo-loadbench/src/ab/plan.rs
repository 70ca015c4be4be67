//! What a round of `cargo loadbench ab` runs: the selected scenarios in units (a `group`'s
//! scenarios together, as they run together; every other scenario alone), each with what it
//! starts on either side.
//!
//! With `--serve`, one side's scenarios (the head's by default) run on both sides, from the
//! same bench binary, each against its side's service. Without it, each side runs its own bench
//! binary, which starts its own server: a scenario of the head is matched with the base's of the
//! same package, bench target and name, and is new when the base has none.

use loadbench::cli::Filter;
use loadbench::report::{ScenarioInfo, ScenarioList};

use crate::build::Executable;
use crate::error::Error;
use crate::scenarios::select;

/// One side's part of a unit: a bench binary and the scenarios it runs in one start.
#[derive(Debug, Clone)]
pub struct Part<'a> {
    /// The binary.
    pub exe: &'a Executable,
    /// The scenarios' names, as the binary lists them.
    pub names: Vec<String>,
}

/// Scenarios that run in one start of a bench binary, on each side.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// The scenarios, as the binary whose scenarios run lists them.
    pub infos: Vec<&'a ScenarioInfo>,
    /// The base's part; `None` when the base has none of these scenarios.
    pub base: Option<Part<'a>>,
    /// The head's part.
    pub head: Part<'a>,
}

/// The units of a run: `source`'s scenarios that `filter` selects, run on the head, and on the
/// base from `base` (the base's own binaries, matched by scenario) or, with `base` `None`, from
/// `source`'s binary too (`--serve`: each side's part is sent to its own service).
pub fn units<'a>(
    source: &'a [(Executable, ScenarioList)],
    base: Option<&'a [(Executable, ScenarioList)]>,
    filter: &Filter,
) -> Result<Vec<Unit<'a>>, Error> {
    let mut units = Vec::new();
    for (exe, selected) in select(source, filter)? {
        for infos in batches(selected) {
            let names: Vec<String> = infos.iter().map(|s| s.name.clone()).collect();
            let head = Part { exe, names: names.clone() };
            let base = match base {
                None => Some(head.clone()),
                Some(listed) => counterpart(listed, exe, &names),
            };
            units.push(Unit { infos, base, head });
        }
    }
    Ok(units)
}

/// The scenarios in the order listed, a group's gathered where its first one is (the bench
/// binary runs them together: see `loadbench::harness::batches`).
fn batches(selected: Vec<&ScenarioInfo>) -> Vec<Vec<&ScenarioInfo>> {
    let mut batches: Vec<Vec<&ScenarioInfo>> = Vec::new();
    for info in selected {
        let joins = info.config.group.as_deref().and_then(|group| {
            batches.iter_mut().find(|b| b.first().is_some_and(|first| first.config.group.as_deref() == Some(group)))
        });
        match joins {
            Some(batch) => batch.push(info),
            None => batches.push(vec![info]),
        }
    }
    batches
}

/// The base's binary of the same package and bench target as `exe`, with those of `names` it
/// lists; `None` when it has none of them.
fn counterpart<'a>(listed: &'a [(Executable, ScenarioList)], exe: &Executable, names: &[String]) -> Option<Part<'a>> {
    let (base, list) =
        listed.iter().find(|(b, _)| b.target.package == exe.target.package && b.target.bench == exe.target.bench)?;
    let names: Vec<String> = names.iter().filter(|n| list.scenarios.iter().any(|s| &s.name == *n)).cloned().collect();
    (!names.is_empty()).then_some(Part { exe: base, names })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use loadbench::report::ConfigReport;

    fn listed(bench: &str, scenarios: &[(&str, Option<&str>)]) -> (Executable, ScenarioList) {
        let scenarios = scenarios
            .iter()
            .map(|(name, group)| ScenarioInfo {
                name: (*name).into(),
                module_path: bench.into(),
                file: format!("benches/{bench}.rs"),
                line: 1,
                config: ConfigReport { group: group.map(str::to_owned), ..ConfigReport::default() },
            })
            .collect();
        (Executable::example(bench), ScenarioList { schema_version: 1, scenarios })
    }

    fn shape(units: &[Unit]) -> Vec<(Vec<String>, Option<Vec<String>>)> {
        units.iter().map(|u| (u.head.names.clone(), u.base.as_ref().map(|b| b.names.clone()))).collect()
    }

    #[test]
    fn a_group_runs_as_one_unit_and_the_rest_alone() {
        let head = [listed("api", &[("login", Some("shop")), ("home", None), ("search", Some("shop"))])];
        let units = units(&head, None, &Filter::default()).unwrap_or_else(|e| panic!("{e}"));
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            shape(&units),
            [
                (names(&["login", "search"]), Some(names(&["login", "search"]))),
                (names(&["home"]), Some(names(&["home"])))
            ],
            "with --serve both sides run the same binary"
        );
        assert!(std::ptr::eq(units[0].head.exe, units[0].base.as_ref().map(|b| b.exe).unwrap_or(units[0].head.exe)));
    }

    #[test]
    fn each_side_runs_its_own_binary_and_a_scenario_the_base_lacks_is_alone() {
        let head = [listed("api", &[("home", None), ("checkout", None)]), listed("admin", &[("audit", None)])];
        let base = [listed("api", &[("home", None)])];
        let units = units(&head, Some(&base), &Filter::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(units[0].base.as_ref().map(|b| b.exe.path.clone()), Some(PathBuf::from("/bin/api")));
        assert!(!std::ptr::eq(units[0].head.exe, units[0].base.as_ref().map(|b| b.exe).unwrap_or(units[0].head.exe)));
        assert_eq!(
            (units[1].head.names.as_slice(), units[1].base.is_none()),
            (["checkout".to_owned()].as_slice(), true)
        );
        assert_eq!((units[2].head.names.as_slice(), units[2].base.is_none()), (["audit".to_owned()].as_slice(), true));

        let some =
            super::units(&head, Some(&base), &Filter::new(vec!["home".into()], true)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(some.len(), 1);
        let err = super::units(&head, Some(&base), &Filter::new(vec!["nothing".into()], false)).map(|u| u.len());
        assert!(err.is_err_and(|e| e.to_string().starts_with("no scenario matches `nothing`")));
    }
}
