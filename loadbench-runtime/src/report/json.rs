//! Writing result files atomically: into a temporary file in the same directory, then renamed over
//! the destination, so that a reader never sees half a file and a crash never leaves one. Every
//! file loadbench writes (results, lists, baselines, every output format) goes through here.

use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

/// Writes `contents` to `path` atomically, creating missing directories (so that `--output
/// reports/loadbench.xml` works in a fresh checkout).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    // tempfile creates its file 0600, private whatever the umask says; a result file is an
    // ordinary file, made with the mode any other program's would have.
    set_default_mode(file.as_file())?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Checks, before a run, that a result file could be written at `path`: that it is not a
/// directory and that its directory exists or can be created, and takes files, so that a bad
/// `--json /proc/x.json` fails at once rather than after the whole run. Nothing is left behind:
/// no directory is created, and the probe file is removed.
///
/// ```
/// assert!(loadbench::report::check_writable(std::path::Path::new("/proc/results.json")).is_err());
/// ```
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("it is a directory".to_owned());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // The nearest directory that exists is where the missing ones would be created.
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return Err(format!("{} is not a directory", existing.display()));
    }
    // A probe of our own rather than tempfile's, whose errors name the random file.
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

/// Gives `file` the mode a new file gets from `open(2)` with 0666: read and write for whoever
/// the umask lets.
#[cfg(unix)]
fn set_default_mode(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.set_permissions(std::fs::Permissions::from_mode(0o666 & !umask()))
}

#[cfg(not(unix))]
fn set_default_mode(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

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

/// Writes `value` as pretty JSON, ending in a newline, to `path` atomically.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn files_get_the_umasks_mode_not_tempfiles_private_one() {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(parse_umask("Name:\tx\nUmask:\t0027\nState:\tR\n"), Some(0o027));
        assert_eq!(parse_umask("Name:\tx\n"), None);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("results.json");
        write_atomic(&path, b"{}").unwrap_or_else(|e| panic!("{e}"));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default();
        assert_eq!(mode, 0o666 & !umask(), "mode {mode:o}");
        assert_ne!(mode & 0o044, 0, "others may read it under any usual umask: {mode:o}");
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
}
