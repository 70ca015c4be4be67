//! The git repository `cargo loadbench ab` compares two commits of: naming them, and checking a
//! commit out in a worktree of its own.
//!
//! Everything here runs the `git` program, as a user would. The user's working tree, index and
//! refs are only read (`status` without optional locks, which never rewrites the index); what is
//! written is a detached worktree of ours, its entry under the repository's `worktrees/`, and the
//! files in it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_loadbench::Commit;
use loadbench::console::err;

use crate::error::Error;

/// A git repository, found from a directory inside its working tree.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The root of the working tree (`git rev-parse --show-toplevel`), canonical.
    toplevel: PathBuf,
    /// The repository's own directory, shared by its worktrees (`--git-common-dir`), canonical.
    common_dir: PathBuf,
}

/// Variables that would point git at another repository or index than the one a command names
/// with `-C`: set in a git hook, say. Cleared for every command run here.
const REDIRECTS: [&str; 5] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"];

/// `git -C dir ARGS…`, its stdout trimmed; on failure, git's last line of stderr (or how it could
/// not start).
fn git<I, S>(dir: &Path, args: I) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new("git");
    command.arg("-C").arg(dir).args(args).stdin(Stdio::null());
    for name in REDIRECTS {
        command.env_remove(name);
    }
    let output = command.output().map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).trim_end().to_owned());
    }
    // git's own line (`fatal: …`, `error: …`) says what failed; the lines after it, advice.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    let said = lines()
        .find_map(|l| l.strip_prefix("fatal: ").or_else(|| l.strip_prefix("error: ")))
        .or_else(|| lines().next_back());
    Err(said.map_or_else(|| format!("git failed ({})", output.status), str::to_owned))
}

impl Repo {
    /// The repository whose working tree holds `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, Error> {
        let found = git(dir, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"])
            .map_err(|reason| Error::Ab(format!("cannot find the git repository of {}: {reason}", dir.display())))?;
        let mut lines = found.lines();
        let (Some(toplevel), Some(common_dir)) = (lines.next(), lines.next()) else {
            return Err(Error::Ab(format!("{} has no working tree that git can name", dir.display())));
        };
        let canonical = |path: &str| std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
        Ok(Repo { toplevel: canonical(toplevel), common_dir: canonical(common_dir) })
    }

    /// The root of the working tree.
    pub fn toplevel(&self) -> &Path {
        &self.toplevel
    }

    /// A short name for this repository, unique on the machine: its directory's name and a hash
    /// of where git keeps it. Worktrees live under it, so that repositories sharing a target
    /// directory (`CARGO_TARGET_DIR` set once for all) never share a worktree.
    pub fn key(&self) -> String {
        let name = self.toplevel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name: String =
            name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') { c } else { '_' }).collect();
        // FNV-1a: stable across builds and platforms, unlike std's hasher.
        let hash = self
            .common_dir
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        format!("{name}-{:08x}", hash >> 32)
    }

    /// The commit `rev` names (a sha, a branch, a tag, `origin/main`, `HEAD~1`).
    pub fn commit(&self, rev: &str) -> Result<Commit, Error> {
        let not_a_commit = |reason: String| {
            Error::Ab(format!("`{rev}` is not a commit of the repository at {}: {reason}", self.toplevel.display()))
        };
        if rev.starts_with('-') {
            return Err(not_a_commit("a revision does not start with `-`".to_owned()));
        }
        let sha = git(&self.toplevel, ["rev-parse", "--verify", "--end-of-options", &format!("{rev}^{{commit}}")])
            .map_err(|reason| {
                let shallow = self
                    .is_shallow()
                    .then_some("; the clone is shallow: fetch its history (actions/checkout's `fetch-depth: 0`)");
                not_a_commit(format!("{reason}{}", shallow.unwrap_or_default()))
            })?;
        self.describe(&sha).map_err(not_a_commit)
    }

    /// The working tree as a side of a comparison: the commit it was checked out from, marked
    /// when tracked files have changes that are not committed.
    pub fn working_tree(&self) -> Result<Commit, Error> {
        let mut commit = self.commit("HEAD")?;
        // `--no-optional-locks`: `status` would otherwise refresh the index's file stamps.
        let changes = git(&self.toplevel, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
            .map_err(|reason| Error::Ab(format!("cannot read the state of {}: {reason}", self.toplevel.display())))?;
        commit.uncommitted = !changes.is_empty();
        Ok(commit)
    }

    fn describe(&self, sha: &str) -> Result<Commit, String> {
        let short = git(&self.toplevel, ["rev-parse", "--short", sha])?;
        let subject = git(&self.toplevel, ["log", "-1", "--format=%s", sha])?;
        Ok(Commit { sha: sha.to_owned(), short, subject, uncommitted: false })
    }

    fn is_shallow(&self) -> bool {
        git(&self.toplevel, ["rev-parse", "--is-shallow-repository"]).is_ok_and(|answer| answer == "true")
    }

    /// Files named `Cargo.toml` in the checkout at `root` (this repository's working tree or a
    /// worktree of it) that git tracks or would track (untracked ones not ignored), as paths.
    pub fn manifests(&self, root: &Path) -> Result<Vec<PathBuf>, String> {
        let listed = git(root, ["ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*Cargo.toml"])?;
        let mut manifests: Vec<PathBuf> = listed
            .split('\0')
            .filter(|p| Path::new(p).file_name() == Some(OsStr::new("Cargo.toml")))
            .map(|p| root.join(p))
            .collect();
        manifests.sort();
        manifests.dedup();
        Ok(manifests)
    }

    /// Makes `path` a worktree of this repository with `commit` checked out, detached, and
    /// nothing else in it: the worktree left there by an earlier run is reused (files that did
    /// not change keep their timestamps, so cargo rebuilds nothing); one that cannot be brought
    /// back (an interrupted checkout's lock, a directory git no longer knows) is removed and made
    /// again. The caller holds the lock on the directory above it ([`lock`]).
    pub fn check_out(&self, path: &Path, commit: &str) -> Result<(), String> {
        // Entries of worktrees whose directory is gone (a `cargo clean`) would block the path.
        git(&self.toplevel, ["worktree", "prune"])?;
        if self.is_worktree(path)? {
            match refresh(path, commit) {
                Ok(()) => return Ok(()),
                Err(reason) => err!("note: the worktree at {} is made again: {reason}", path.display()),
            }
            // Twice forced: also when git marked it locked (an add that was interrupted).
            let _ = git(
                &self.toplevel,
                [OsStr::new("worktree"), "remove".as_ref(), "--force".as_ref(), "--force".as_ref(), path.as_os_str()],
            );
        }
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        git(&self.toplevel, ["worktree", "prune"])?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        git(
            &self.toplevel,
            [
                OsStr::new("-c"),
                NO_HOOKS.as_ref(),
                "worktree".as_ref(),
                "add".as_ref(),
                "--quiet".as_ref(),
                "--detach".as_ref(),
                "--force".as_ref(),
                path.as_os_str(),
                commit.as_ref(),
            ],
        )?;
        Ok(())
    }

    /// Whether `path` is one of this repository's worktrees, by git's own list.
    fn is_worktree(&self, path: &Path) -> Result<bool, String> {
        let Ok(path) = std::fs::canonicalize(path) else {
            return Ok(false);
        };
        let list = git(&self.toplevel, ["worktree", "list", "--porcelain"])?;
        Ok(list
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .any(|listed| std::fs::canonicalize(listed).is_ok_and(|listed| listed == path)))
    }
}

/// The user's hooks are for their own checkouts: ours runs none (a `post-checkout` that installs
/// something, say).
const NO_HOOKS: &str = "core.hooksPath=/dev/null";

/// Brings the worktree at `path` to `commit`: checked out, tracked files as committed, untracked
/// and ignored files gone (a build's or a service's leftovers). Checked afterwards, so that a
/// worktree that only seemed to move is made again.
fn refresh(path: &Path, commit: &str) -> Result<(), String> {
    git(path, ["-c", NO_HOOKS, "checkout", "--quiet", "--detach", "--force", commit])?;
    git(path, ["clean", "-ffdxq"])?;
    let at = git(path, ["rev-parse", "HEAD"])?;
    let changed = git(path, ["--no-optional-locks", "status", "--porcelain", "--ignored"])?;
    if at != commit || !changed.is_empty() {
        return Err(format!("it is at {at}, with changes, after checking out {commit}"));
    }
    Ok(())
}

/// An exclusive lock on `dir`'s `lock` file, held until dropped: one `cargo loadbench ab` at a
/// time uses the worktrees and services under `dir`. Another run holding it is waited for.
pub fn lock(dir: &Path, quiet: bool) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            if !quiet {
                err!("     Waiting for another `cargo loadbench ab` that uses {}", dir.display());
            }
            file.lock().map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
            Ok(file)
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

#[cfg(test)]
// A broken test environment (no git) should fail loudly.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// A repository with two commits, `one` and `two`, each writing `file.txt`; returns it and
    /// the two shas.
    fn repo() -> (tempfile::TempDir, Repo, String, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("shop");
        std::fs::create_dir(&root).expect("mkdir");
        let run = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(&root)
                .output()
                .expect("git");
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        run(&["init", "--quiet"]);
        std::fs::write(root.join("file.txt"), "one\n").expect("write");
        std::fs::write(root.join(".gitignore"), "/target\n").expect("write");
        run(&["add", "."]);
        run(&["commit", "--quiet", "-m", "one"]);
        let one = run(&["rev-parse", "HEAD"]);
        std::fs::write(root.join("file.txt"), "two\n").expect("write");
        run(&["commit", "--quiet", "-am", "two: the second"]);
        let two = run(&["rev-parse", "HEAD"]);
        let repo = Repo::discover(&root.join(".")).expect("a repository");
        (dir, repo, one, two)
    }

    /// What a user would see change: the working tree's files, its status (the target directory
    /// is ignored, as a crate's is) and the index.
    fn user_state(repo: &Repo) -> (String, String, Vec<u8>) {
        let status = git(repo.toplevel(), ["status", "--porcelain"]).expect("status");
        let file = std::fs::read_to_string(repo.toplevel().join("file.txt")).expect("file");
        let index = std::fs::read(repo.toplevel().join(".git/index")).expect("index");
        (status, file, index)
    }

    #[test]
    fn commits_are_named_by_any_revision_and_bad_ones_are_refused() {
        let (_dir, repo, one, two) = repo();
        let head = repo.commit("HEAD").expect("HEAD");
        assert_eq!(
            (head.sha.as_str(), head.subject.as_str(), head.uncommitted),
            (two.as_str(), "two: the second", false)
        );
        assert!(two.starts_with(&head.short) && head.short.len() >= 7, "{head:?}");
        assert_eq!(repo.commit("HEAD~1").expect("HEAD~1").sha, one);
        assert_eq!(repo.commit(&one[..10]).expect("a prefix").sha, one);

        let err = repo.commit("nope").expect_err("no such revision").to_string();
        assert!(err.starts_with("`nope` is not a commit of the repository at "), "{err}");
        let err = repo.commit("--all").expect_err("an option").to_string();
        assert!(err.ends_with("a revision does not start with `-`"), "{err}");
        let tree = git(repo.toplevel(), ["rev-parse", "HEAD^{tree}"]).expect("tree");
        assert!(repo.commit(&tree).is_err(), "a tree is not a commit");
    }

    #[test]
    fn the_working_tree_says_whether_it_has_uncommitted_changes_without_touching_the_index() {
        let (_dir, repo, _, two) = repo();
        assert!(!repo.working_tree().expect("clean").uncommitted);
        std::fs::write(repo.toplevel().join("file.txt"), "three\n").expect("write");
        let before = user_state(&repo);
        let tree = repo.working_tree().expect("dirty");
        assert_eq!((tree.sha.as_str(), tree.uncommitted), (two.as_str(), true));
        assert_eq!(tree.to_string(), format!("{} (two: the second) with uncommitted changes", tree.short));
        assert_eq!(user_state(&repo), before);
    }

    #[test]
    fn a_worktree_is_made_then_reused_and_the_user_s_checkout_is_untouched() {
        let (_dir, repo, one, two) = repo();
        std::fs::write(repo.toplevel().join("file.txt"), "edited, not committed\n").expect("write");
        let before = user_state(&repo);
        let path = repo.toplevel().join("target/loadbench/ab").join(repo.key()).join("base");

        repo.check_out(&path, &one).expect("made");
        assert_eq!(std::fs::read_to_string(path.join("file.txt")).expect("checked out"), "one\n");
        // A build's and a service's leftovers, and an edit of a tracked file.
        std::fs::write(path.join("file.txt"), "changed by a service\n").expect("write");
        std::fs::create_dir_all(path.join("target/release")).expect("mkdir");
        std::fs::write(path.join("cache.db"), "x").expect("write");
        let stamp = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).expect("mtime");
        std::fs::write(path.join("file.txt"), "one\n").expect("write back");
        let kept = stamp(&path.join(".gitignore"));

        repo.check_out(&path, &one).expect("reused");
        assert!(!path.join("cache.db").exists() && !path.join("target").exists(), "untracked and ignored files go");
        assert_eq!(stamp(&path.join(".gitignore")), kept, "an unchanged file keeps its time: cargo rebuilds nothing");
        repo.check_out(&path, &two).expect("moved");
        assert_eq!(std::fs::read_to_string(path.join("file.txt")).expect("moved"), "two\n");

        let listed = git(repo.toplevel(), ["worktree", "list", "--porcelain"]).expect("list");
        assert_eq!(listed.lines().filter(|l| l.starts_with("worktree ")).count(), 2, "{listed}");
        assert_eq!(user_state(&repo), before, "the user's files, status and index");
        let branches = git(repo.toplevel(), ["branch", "--list"]).expect("branches");
        assert_eq!(branches.lines().count(), 1, "no branch made: {branches}");
    }

    #[test]
    fn what_an_interrupted_run_left_is_cleaned_up() {
        let (_dir, repo, one, two) = repo();
        let before = user_state(&repo);
        let path = repo.toplevel().join("target/loadbench/ab/x/base");
        let admin = |repo: &Repo| git(repo.toplevel(), ["worktree", "list", "--porcelain"]).expect("list");

        // A checkout cut short: git's lock on the worktree's index is still there.
        repo.check_out(&path, &one).expect("made");
        let gitdir = git(&path, ["rev-parse", "--path-format=absolute", "--git-dir"]).expect("gitdir");
        std::fs::write(Path::new(&gitdir).join("index.lock"), "").expect("a stale lock");
        repo.check_out(&path, &two).expect("made again");
        assert_eq!(std::fs::read_to_string(path.join("file.txt")).expect("file"), "two\n");

        // The directory gone (a `cargo clean`), git's entry for it left.
        std::fs::remove_dir_all(&path).expect("rm");
        repo.check_out(&path, &one).expect("after cargo clean");
        assert_eq!(std::fs::read_to_string(path.join("file.txt")).expect("file"), "one\n");

        // A directory git does not know at the path (its entry pruned, a half-written add).
        std::fs::remove_file(path.join(".git")).expect("unlink .git");
        git(repo.toplevel(), ["worktree", "prune"]).expect("prune");
        std::fs::write(path.join("junk"), "x").expect("write");
        repo.check_out(&path, &two).expect("over a stray directory");
        assert!(!path.join("junk").exists());

        let list = admin(&repo);
        assert_eq!(list.lines().filter(|l| l.starts_with("worktree ")).count(), 2, "one worktree of ours: {list}");
        assert!(!list.contains("prunable") && !list.contains("locked"), "{list}");
        assert_eq!(user_state(&repo), before);
    }

    #[test]
    fn manifests_are_the_checkout_s_cargo_tomls_tracked_or_not_ignored() {
        let (_dir, repo, _, _) = repo();
        for (path, text) in
            [("bench/Cargo.toml", "[package]"), ("target/x/Cargo.toml", "ignored"), ("NotCargo.toml", "")]
        {
            let path = repo.toplevel().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let found = repo.manifests(repo.toplevel()).expect("listed");
        assert_eq!(found, [repo.toplevel().join("bench/Cargo.toml")]);
    }

    #[test]
    fn keys_differ_by_repository() {
        let (_a, first, _, _) = repo();
        let (_b, second, _, _) = repo();
        assert!(first.key().starts_with("shop-") && first.key().len() == "shop-".len() + 8, "{}", first.key());
        assert_ne!(first.key(), second.key());
        assert_eq!(first.key(), Repo::discover(first.toplevel()).expect("again").key(), "stable");
    }
}
