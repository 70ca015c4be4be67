//! Which bench crate `cargo loadbench ab` measures: found in the head's checkout as `cargo
//! loadbench` finds it (`--manifest-path`, else the `Cargo.toml` nearest the current directory),
//! and, in a repository whose crate is in a folder of its own beside a service in another
//! language, the one crate of the checkout that uses loadbench. The base's crate is the one at the
//! same place in the base's checkout, if the base has it.

use std::path::{Component, Path, PathBuf};

use crate::ab::git::Repo;
use crate::discover::RUNTIME_PACKAGE;
use crate::error::Error;

/// `path` relative to `root`, or an error naming both when it is not inside it. Both are taken
/// as they are written (`..` resolved lexically), so that a path that exists only in another
/// checkout can be mapped too.
pub fn relative(root: &Path, path: &Path) -> Result<PathBuf, Error> {
    let normal = normalize(path);
    normal
        .strip_prefix(normalize(root))
        .map(Path::to_owned)
        .map_err(|_| Error::Ab(format!("{} is not inside the git repository at {}", path.display(), root.display())))
}

/// `path` with `.` and `..` resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `Cargo.toml` nearest `start`, in it or a folder above it up to `root` (cargo's own rule
/// for where a command's workspace is).
pub fn nearest(root: &Path, start: &Path) -> Option<PathBuf> {
    let root = normalize(root);
    let mut dir = normalize(start);
    loop {
        let manifest = dir.join("Cargo.toml");
        if manifest.is_file() {
            return Some(manifest);
        }
        if dir == root || !dir.pop() || !dir.starts_with(&root) {
            return None;
        }
    }
}

/// The one crate of the checkout at `root` that declares bench targets and depends on
/// loadbench-runtime (by the text of its manifest): `None` when there is none, an error listing
/// them when there are several.
pub fn search(repo: &Repo, root: &Path) -> Result<Option<PathBuf>, Error> {
    let manifests = repo
        .manifests(root)
        .map_err(|reason| Error::Ab(format!("cannot list the files of {}: {reason}", root.display())))?;
    let uses_loadbench = |path: &PathBuf| {
        std::fs::read_to_string(path).is_ok_and(|text| text.contains(RUNTIME_PACKAGE) && text.contains("[[bench]]"))
    };
    let found: Vec<PathBuf> = manifests.into_iter().filter(uses_loadbench).collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        several => {
            let listed: Vec<String> =
                several.iter().map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string()).collect();
            Err(Error::Ab(format!(
                "several crates of {} use loadbench ({}): choose one with --manifest-path",
                root.display(),
                listed.join(", ")
            )))
        }
    }
}

#[cfg(test)]
// A broken test environment should fail loudly.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_between_checkouts_lexically() {
        let root = Path::new("/work/shop");
        assert_eq!(
            relative(root, Path::new("/work/shop/bench/../bench/./Cargo.toml")).expect("inside"),
            Path::new("bench/Cargo.toml")
        );
        let err = relative(root, Path::new("/work/other/Cargo.toml")).expect_err("outside").to_string();
        assert_eq!(err, "/work/other/Cargo.toml is not inside the git repository at /work/shop");
    }

    #[test]
    fn the_nearest_manifest_is_looked_for_upwards_within_the_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("bench/benches")).expect("mkdir");
        std::fs::create_dir_all(root.join("service")).expect("mkdir");
        std::fs::write(root.join("bench/Cargo.toml"), "").expect("write");
        std::fs::write(dir.path().join("Cargo.toml"), "").expect("above the root: never found");
        assert_eq!(nearest(&root, &root.join("bench/benches")), Some(root.join("bench/Cargo.toml")));
        assert_eq!(nearest(&root, &root.join("service")), None);
        assert_eq!(nearest(&root, &root), None);
    }
}
