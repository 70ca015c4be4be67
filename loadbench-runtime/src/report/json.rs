//! Writing result files safely. Every file loadbench writes (results, lists, baselines, every
//! output format, `kube`'s Job and shards) goes through [`write_atomic`], which decides by what is
//! at the path:
//!
//! - a regular file, or nothing yet: written atomically, into a temporary file in the same
//!   directory, synced, then renamed over the destination, so that a reader never sees half a
//!   file and a crash never leaves one;
//! - a symlink: followed, and its target written so (in the target's directory; a dangling
//!   link's target is created), so that the link stays a link;
//! - a FIFO or a character device (`/dev/null`, a terminal, `>(gzip > x.gz)`): written through,
//!   opened for writing without truncating or replacing it, as `tee`, `cp` and the shells' `>`
//!   do; renaming over it would turn the node into a regular file, and as root replace
//!   `/dev/null` for the whole machine. A FIFO without a reader waits for one, as the shells' `>`
//!   does;
//! - one of the process's open files (`/dev/stdout`, `/dev/fd/N`): written through, appended, to
//!   whatever it is (a pipe, a terminal, a file the shell opened with `>` or `>>`);
//! - a directory, a block device, a socket: refused, with the reason. A result file is never a
//!   disk, and a socket cannot be opened.
//!
//! [`check_writable`] applies the same rules before a run, and [`same_file`] tells an output that
//! would replace one of the command's inputs.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How many symlinks [`write_atomic`] follows before it gives up, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Where and how a file is written.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// Atomically, by a rename over this path (the link's target when the path is a symlink).
    Replace(PathBuf),
    /// Through the node already there, a FIFO or a character device, or through an open file of
    /// this process ([`LinksEnd::descriptor`]).
    Through,
}

/// Writes `contents` to `path` as the module says: atomically over a regular file or a
/// new path (creating missing directories, so that `--output reports/loadbench.xml` works in a
/// fresh checkout), through a symlink to its target, through a FIFO or a character device.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    match destination(path)? {
        Destination::Replace(target) => replace(&target, contents),
        Destination::Through => {
            // Never created, never truncated: a device or a pipe has no length to truncate and
            // nothing to sync, and an open file of this process is appended to.
            let mut node = std::fs::OpenOptions::new().append(true).open(path)?;
            node.write_all(contents)
        }
    }
}

/// Writes `contents` into a new file beside `target` and renames it over `target`.
fn replace(target: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = directory_of(target);
    std::fs::create_dir_all(dir)?;
    let mut staged = Staged::beside(dir, target)?;
    staged.file.write_all(contents)?;
    staged.file.sync_all()?;
    std::fs::rename(&staged.path, target)?;
    staged.renamed = true;
    Ok(())
}

/// A new file beside the destination, removed unless it was renamed over it. Made with std's
/// `create_new` (`O_CREAT | O_EXCL`: never an existing file or a symlink planted at its name), so
/// it gets the mode any program's new file gets, 0666 less the umask; a result file is an
/// ordinary file, not a private one.
struct Staged {
    path: std::path::PathBuf,
    file: std::fs::File,
    renamed: bool,
}

impl Staged {
    /// Tries names `.NAME.PID.N.tmp` until one is free: a name left by a crashed run is passed
    /// over, never reused.
    fn beside(dir: &Path, target: &Path) -> std::io::Result<Staged> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let name = target.file_name().map_or_else(|| "results".into(), |n| n.to_string_lossy());
        for _ in 0..1000 {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok(Staged { path, file, renamed: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("no free temporary file name in {}", dir.display()),
        ))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: what cannot be removed is a hidden file, never the destination.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The directory a file at `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// How `path` is written, from what is there, following symlinks: an error for what is refused.
fn destination(path: &Path) -> std::io::Result<Destination> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            let end = follow_links(path)?;
            Ok(if end.descriptor { Destination::Through } else { Destination::Replace(end.path) })
        }
        Ok(meta) => match special(&meta.file_type()) {
            Ok(()) => Ok(Destination::Through),
            Err(refusal) => Err(std::io::Error::other(refusal)),
        },
        // Nothing there, or a dangling symlink: a new file, at the end of the links. (Under a
        // file, not a directory: creating the directory says so.)
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            Ok(Destination::Replace(follow_links(path)?.path))
        }
        Err(e) => Err(e),
    }
}

/// Where a path's symlinks lead.
#[derive(Debug)]
struct LinksEnd {
    /// The first path that is not a link (which may not exist: a dangling link's target).
    path: PathBuf,
    /// The links lead to an open file of this process (`/dev/stdout`, `/dev/fd/1`,
    /// `/proc/self/fd/1`): `path` is that link, and the file is written through it where the
    /// process writes it, appended, as a shell's `>&1` would. Renaming over the file it names
    /// would replace a log that `>>` appends to, and the process would go on writing into the
    /// file replaced.
    descriptor: bool,
}

/// Follows `path`'s last component's symlinks (links in the directories above are left to the
/// system, which follows them whatever the last component is).
fn follow_links(path: &Path) -> std::io::Result<LinksEnd> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if is_descriptor(&current) {
                    return Ok(LinksEnd { path: current, descriptor: true });
                }
                let target = std::fs::read_link(&current)?;
                // A relative target is relative to the link's directory.
                current = if target.is_absolute() { target } else { directory_of(&current).join(target) };
            }
            _ => return Ok(LinksEnd { path: current, descriptor: false }),
        }
    }
    Err(std::io::Error::other(format!("more than {MAX_LINKS} symlinks in a row")))
}

/// Whether `link` is one of a process's file descriptors, `/proc/PID/fd/N` by any name.
#[cfg(target_os = "linux")]
fn is_descriptor(link: &Path) -> bool {
    std::fs::canonicalize(directory_of(link))
        .is_ok_and(|dir| dir.starts_with("/proc") && dir.file_name().is_some_and(|name| name == "fd"))
}

#[cfg(not(target_os = "linux"))]
fn is_descriptor(_link: &Path) -> bool {
    false
}

/// Whether a node of this type that is not a regular file is written through (a FIFO, a
/// character device), or why it is refused.
#[cfg(unix)]
fn special(kind: &std::fs::FileType) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt as _;
    let what = if kind.is_fifo() || kind.is_char_device() {
        return Ok(());
    } else if kind.is_dir() {
        return Err("it is a directory".to_owned());
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "neither a file nor a FIFO nor a character device"
    };
    Err(format!("it is {what}: results are written to a file, a FIFO or a character device"))
}

#[cfg(not(unix))]
fn special(kind: &std::fs::FileType) -> Result<(), String> {
    if kind.is_dir() { Err("it is a directory".to_owned()) } else { Ok(()) }
}

/// Whether `output` names the same regular file as `input` (the same device and inode, whatever
/// the names, links or `..` on the way), so that writing `output` would replace `input`. A path
/// that does not exist names no input; a FIFO or a device is written through, not replaced.
///
/// ```
/// let dir = std::env::temp_dir();
/// let file = dir.join(format!("loadbench-same-file-doc-{}", std::process::id()));
/// std::fs::write(&file, "{}").unwrap();
/// let dotted = dir.join("..").join(dir.file_name().unwrap()).join(file.file_name().unwrap());
/// assert!(loadbench::report::same_file(&dotted, &file));
/// assert!(!loadbench::report::same_file(&dir.join("elsewhere.json"), &file));
/// std::fs::remove_file(&file).unwrap();
/// ```
pub fn same_file(output: &Path, input: &Path) -> bool {
    let (Ok(a), Ok(b)) = (std::fs::metadata(output), std::fs::metadata(input)) else { return false };
    a.is_file() && b.is_file() && identity(&a) == identity(&b)
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Checks, before a run, that a result file could be written at `path` by [`write_atomic`]: that
/// it is not a directory or a node that is refused, and that its directory (its link's target's,
/// for a symlink) exists or can be created, and takes files; so that a bad `--json /proc/x.json`
/// fails at once rather than after the whole run. Nothing is left behind: no directory is
/// created, and the probe file is removed. A FIFO or a device is not opened (a FIFO's reader
/// would take the probe for the end of the results); its errors come when it is written.
///
/// ```
/// assert!(loadbench::report::check_writable(std::path::Path::new("/proc/results.json")).is_err());
/// assert!(loadbench::report::check_writable(std::path::Path::new("/dev/null")).is_ok());
/// ```
pub fn check_writable(path: &Path) -> Result<(), String> {
    let target = match destination(path) {
        Ok(Destination::Replace(target)) => target,
        Ok(Destination::Through) => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    let dir = directory_of(&target);
    // The nearest directory that exists is where the missing ones would be created.
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return Err(format!("{} is not a directory", existing.display()));
    }
    // A fixed name, so that a refusal names the directory rather than a random file.
    let probe = existing.join(format!(".loadbench-write-check-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        // Another check of this process is probing the same directory: it could create a file.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot create files in {}: {e}", existing.display())),
    }
}

/// Writes `value` as pretty JSON, ending in a newline, to `path` atomically.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's umask, as Linux shows it in `/proc/self/status` (reading it with umask(2) means
    /// setting it, which is neither safe Rust nor safe beside other threads); 022 where it cannot be
    /// read, the usual default.
    #[cfg(unix)]
    fn umask() -> u32 {
        static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *UMASK.get_or_init(|| {
            std::fs::read_to_string("/proc/self/status").ok().and_then(|status| parse_umask(&status)).unwrap_or(0o022)
        })
    }

    /// The `Umask:` line of a `/proc/PID/status` file.
    #[cfg(unix)]
    fn parse_umask(status: &str) -> Option<u32> {
        let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(line.trim(), 8).ok().map(|mask| mask & 0o777)
    }

    #[test]
    fn files_are_replaced_whole_and_directories_made() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("new/dir/results.json");
        write_json_atomic(&path, &[1, 2]).unwrap_or_else(|e| panic!("{e}"));
        write_json_atomic(&path, &[3]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("[\n  3\n]\n"));
        assert_eq!(std::fs::read_dir(path.parent().unwrap_or(dir.path())).map(Iterator::count).ok(), Some(1));
    }

    #[cfg(unix)]
    #[test]
    fn files_get_the_umasks_mode_and_leave_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(parse_umask("Name:\tx\nUmask:\t0027\nState:\tR\n"), Some(0o027));
        assert_eq!(parse_umask("Name:\tx\n"), None);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("results.json");
        write_atomic(&path, b"{}").unwrap_or_else(|e| panic!("{e}"));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default();
        assert_eq!(mode, 0o666 & !umask(), "mode {mode:o}");
        assert_ne!(mode & 0o044, 0, "others may read it under any usual umask: {mode:o}");
        write_atomic(&path, b"[]").unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(|entry| entry.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(names, ["results.json"]);
        assert_eq!(std::fs::read(&path).unwrap_or_default(), b"[]");
    }

    #[test]
    fn unwritable_places_are_found_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_writable(&dir.path().join("new/dir/results.json")), Ok(()));
        assert!(!dir.path().join("new").exists(), "nothing is created by the check");
        assert_eq!(std::fs::read_dir(dir.path()).map(Iterator::count).ok(), Some(0), "no probe file is left");
        assert_eq!(check_writable(dir.path()), Err("it is a directory".to_owned()));
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
        let under_a_file = check_writable(&file.join("results.json")).unwrap_err();
        assert!(under_a_file.ends_with("file is not a directory"), "{under_a_file}");
        if cfg!(target_os = "linux") {
            let proc = check_writable(Path::new("/proc/results.json")).unwrap_err();
            assert!(proc.starts_with("cannot create files in /proc: "), "{proc}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old").unwrap_or_else(|e| panic!("{e}"));
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap_or_else(|e| panic!("{e}"));
        let chain = dir.path().join("chain.json");
        std::os::unix::fs::symlink(&link, &chain).unwrap_or_else(|e| panic!("{e}"));
        write_atomic(&chain, b"new").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
        assert!(std::fs::symlink_metadata(&chain).is_ok_and(|m| m.file_type().is_symlink()));
        assert_eq!(std::fs::read_to_string(&real).ok().as_deref(), Some("new"));

        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("made/here.json", &dangling).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_writable(&dangling), Ok(()));
        write_atomic(&dangling, b"x").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::symlink_metadata(&dangling).is_ok_and(|m| m.file_type().is_symlink()));
        assert_eq!(std::fs::read_to_string(dir.path().join("made/here.json")).ok().as_deref(), Some("x"));

        let looped = dir.path().join("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap_or_else(|e| panic!("{e}"));
        assert!(write_atomic(&looped, b"x").is_err());
        assert!(std::fs::symlink_metadata(&looped).is_ok_and(|m| m.file_type().is_symlink()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_are_written_through_and_refusals_are_reasons() {
        use std::os::unix::fs::FileTypeExt as _;
        assert_eq!(destination(Path::new("/dev/null")).ok(), Some(Destination::Through));
        write_atomic(Path::new("/dev/null"), b"{}").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::metadata("/dev/null").is_ok_and(|m| m.file_type().is_char_device()));
        let full = write_atomic(Path::new("/dev/full"), b"{}").map_err(|e| e.kind());
        assert_eq!(full, Err(std::io::ErrorKind::StorageFull));
        assert!(std::fs::metadata("/dev/full").is_ok_and(|m| m.file_type().is_char_device()));
        assert_eq!(check_writable(Path::new("/dev/full")), Ok(()), "written through: not probed");

        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_writable(dir.path()), Err("it is a directory".to_owned()));
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap_or_else(|e| panic!("{e}"));
        let refused = check_writable(&socket).unwrap_err();
        assert!(refused.starts_with("it is a socket: "), "{refused}");
        assert!(write_atomic(&socket, b"{}").is_err());
        assert!(std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_open_file_of_the_process_is_appended_to_not_replaced() {
        use std::os::fd::AsRawFd as _;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let log = dir.path().join("log.txt");
        std::fs::write(&log, "earlier\n").unwrap_or_else(|e| panic!("{e}"));
        let open = std::fs::OpenOptions::new().append(true).open(&log).unwrap_or_else(|e| panic!("{e}"));
        // As `/dev/stdout` names fd 1: a link to this process's descriptor, by another name.
        let by_fd = PathBuf::from(format!("/dev/fd/{}", open.as_raw_fd()));
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(format!("/proc/self/fd/{}", open.as_raw_fd()), &link)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(destination(&by_fd).ok(), Some(Destination::Through));
        assert_eq!(destination(&link).ok(), Some(Destination::Through));
        write_atomic(&by_fd, b"one\n").unwrap_or_else(|e| panic!("{e}"));
        write_atomic(&link, b"two\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&log).ok().as_deref(), Some("earlier\none\ntwo\n"));
        assert!(same_file(&by_fd, &log), "the file the shell opened is still the one written");
    }

    #[cfg(unix)]
    #[test]
    fn the_same_file_is_told_by_identity_not_name() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("shard.json");
        std::fs::write(&file, "{}").unwrap_or_else(|e| panic!("{e}"));
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap_or_else(|e| panic!("{e}"));
        let hard = dir.path().join("hard.json");
        std::fs::hard_link(&file, &hard).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(dir.path().join("sub")).unwrap_or_else(|e| panic!("{e}"));
        for name in [link.clone(), hard, dir.path().join("sub/../shard.json")] {
            assert!(same_file(&name, &file), "{}", name.display());
        }
        assert!(!same_file(&dir.path().join("new.json"), &file));
        std::fs::write(dir.path().join("other.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        assert!(!same_file(&dir.path().join("other.json"), &file));
        assert!(!same_file(Path::new("/dev/null"), Path::new("/dev/null")), "written through, not replaced");
    }
}
