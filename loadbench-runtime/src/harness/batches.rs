//! The selected scenarios in runs: each alone, except that the scenarios of one `group` run
//! together, as one workload, at the place of the first of them.

use crate::engine::registry::ScenarioEntry;

/// A scenario and the URL it runs against.
pub(super) type Selected = (&'static ScenarioEntry, String);

/// `selected` in batches, in order.
pub(super) fn batches(selected: Vec<Selected>) -> Vec<Vec<Selected>> {
    let mut batches: Vec<Vec<Selected>> = Vec::new();
    for (entry, url) in selected {
        let joins = entry.config.group.and_then(|group| {
            batches.iter_mut().find(|b| b.first().is_some_and(|(first, _)| first.config.group == Some(group)))
        });
        match joins {
            Some(batch) => batch.push((entry, url)),
            None => batches.push(vec![(entry, url)]),
        }
    }
    batches
}
