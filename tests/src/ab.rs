//! Git repositories made at test time for `cargo loadbench ab` and the shipped workflow: a
//! service in a folder of its own (`tests/data/ab/app.py`, Python, as a team whose service is not
//! Rust has it), a bench crate in `bench/`, and the commits of a pull request's life. Also what a
//! user would notice in their own checkout ([`Checkout`]), and `cargo loadbench ab` run as a
//! child whose progress a test can wait on ([`AbRun`]).

// A broken test environment (git, python3 or the binary missing) should fail loudly.
#![allow(clippy::expect_used)]

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{Output, cargo_loadbench_path, fixture, isolate, workspace_root};

/// A git repository in a temporary directory, removed with it.
#[derive(Debug)]
pub struct Repo {
    _dir: tempfile::TempDir,
    /// The repository's root.
    pub root: PathBuf,
}

impl Repo {
    /// An empty repository named `name` (its folder's name).
    pub fn new(name: &str) -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join(name);
        std::fs::create_dir(&root).expect("mkdir");
        let repo = Repo { _dir: dir, root };
        repo.git(&["init", "--quiet"]);
        repo
    }

    /// `git ARGS…` in the repository; its trimmed stdout. Fails the test when git does.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&self.root)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Writes `text` to `path` (relative to the root), making its folders.
    pub fn write(&self, path: &str, text: &str) {
        let path = self.root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Commits everything as `message`; returns the commit's sha.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// The bench crate's package name: the repository's folder's, with `-bench`.
    pub fn package(&self) -> String {
        format!("{}-bench", self.root.file_name().expect("a name").to_string_lossy())
    }

    /// The short name git gives `sha`.
    pub fn short(&self, sha: &str) -> String {
        self.git(&["rev-parse", "--short", sha])
    }

    /// The Python service, answering after `sleep` seconds asleep and `work` of CPU.
    pub fn write_service(&self, sleep: f64, work: f64) {
        let app = std::fs::read_to_string(workspace_root().join("tests/data/ab/app.py")).expect("tests/data/ab/app.py");
        let app = app
            .replace("SLEEP = 0.004", &format!("SLEEP = {sleep}"))
            .replace("WORK = 0.001", &format!("WORK = {work}"));
        assert!(app.contains(&format!("SLEEP = {sleep}\nWORK = {work}\n")), "the service's two lines");
        self.write("service/app.py", &app);
    }

    /// A bench crate in `bench/` (a workspace of its own, with the gate fixture's lock, so nothing
    /// is resolved or fetched) whose bench target `api` holds `bench` as its source. Its package
    /// is named after the repository: the tests' repositories share one target directory, where
    /// cargo would take two packages of one name and layout for one.
    pub fn write_bench_crate(&self, bench: &str) {
        let runtime = workspace_root().join("loadbench-runtime");
        let runtime = runtime.to_str().expect("UTF-8 path");
        let name = self.package();
        self.write(
            "bench/Cargo.toml",
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
                 [workspace]\n\n[dev-dependencies]\nloadbench-runtime = {{ path = \"{runtime}\" }}\n\n\
                 [[bench]]\nname = \"api\"\nharness = false\n"
            ),
        );
        self.write("bench/src/lib.rs", "//! The service's load tests live in benches/.\n");
        self.write("bench/benches/api.rs", bench);
        let lock = std::fs::read_to_string(fixture("gate").with_file_name("Cargo.lock")).expect("gate's Cargo.lock");
        self.write("bench/Cargo.lock", &lock.replace("name = \"gate\"", &format!("name = \"{name}\"")));
        self.write(".gitignore", "target/\n/loadbench.*\n");
        // Cargo sorts the lock's packages by name: let it put the renamed one in its place now,
        // offline, so that no build rewrites a committed file later.
        let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["update", "--workspace", "--offline", "--quiet", "--manifest-path"])
            .arg(self.root.join("bench/Cargo.toml"))
            .stdout(Stdio::null())
            .output()
            .expect("run cargo update");
        assert!(out.status.success(), "cargo update: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// One scenario, `home`: `count` requests of `GET /` by 4 users, to wherever the run sends them.
pub fn scenario(count: u32) -> String {
    format!(
        "#[loadbench::scenario(concurrency = 4, count = {count})]\n\
         async fn home(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {{\n\
         \x20   ctx.get(\"/\").send().await?.expect_status(200)?;\n\
         \x20   Ok(())\n\
         }}\n\nloadbench::main!();\n"
    )
}

/// [`scenario`], with the server in the bench file itself: std's TCP listener answering each
/// keep-alive request after `delay_ms`, started as the binary's default target (so each side's
/// binary measures its own server).
pub fn scenario_with_server(count: u32, delay_ms: u64) -> String {
    let scenario = scenario(count).replace("loadbench::main!();\n", "");
    format!(
        "{scenario}\
         const DELAY_MS: u64 = {delay_ms};\n\n\
         fn answer(stream: std::net::TcpStream) -> std::io::Result<()> {{\n\
         \x20   use std::io::{{BufRead, Write}};\n\
         \x20   stream.set_nodelay(true)?;\n\
         \x20   let mut reader = std::io::BufReader::new(stream.try_clone()?);\n\
         \x20   let mut writer = stream;\n\
         \x20   let mut line = String::new();\n\
         \x20   loop {{\n\
         \x20       line.clear();\n\
         \x20       if reader.read_line(&mut line)? == 0 {{ return Ok(()); }}\n\
         \x20       if line.trim().is_empty() {{\n\
         \x20           std::thread::sleep(std::time::Duration::from_millis(DELAY_MS));\n\
         \x20           writer.write_all(b\"HTTP/1.1 200 OK\\r\\ncontent-length: 3\\r\\n\\r\\nok\\n\")?;\n\
         \x20       }}\n\
         \x20   }}\n\
         }}\n\n\
         fn serve() -> std::io::Result<String> {{\n\
         \x20   let listener = std::net::TcpListener::bind(\"127.0.0.1:0\")?;\n\
         \x20   let url = format!(\"http://{{}}\", listener.local_addr()?);\n\
         \x20   std::thread::spawn(move || {{\n\
         \x20       for stream in listener.incoming().flatten() {{\n\
         \x20           std::thread::spawn(move || answer(stream));\n\
         \x20       }}\n\
         \x20   }});\n\
         \x20   Ok(url)\n\
         }}\n\n\
         fn main() -> std::process::ExitCode {{\n\
         \x20   loadbench::Harness::new().default_target(serve).run()\n\
         }}\n"
    )
}

/// What a user would notice change in their own checkout: its HEAD, branches, status (with
/// ignored files, but for the target directory, where `ab` works), index and stash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    head: String,
    branches: String,
    status: String,
    /// A hash of the index file's bytes.
    index: u64,
    stash: String,
}

impl Checkout {
    /// The state of `repo`'s working tree now.
    pub fn of(repo: &Repo) -> Checkout {
        let status = repo.git(&["--no-optional-locks", "status", "--porcelain", "--ignored"]);
        let status = status
            .lines()
            .filter(|l| !l.contains("target/") && !l.contains("loadbench."))
            .collect::<Vec<_>>()
            .join("\n");
        Checkout {
            head: repo.git(&["rev-parse", "HEAD"]),
            branches: repo.git(&["branch", "--list", "--all"]),
            status,
            index: {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(repo.root.join(".git/index")).expect("the index").hash(&mut hasher);
                hasher.finish()
            },
            stash: repo.git(&["stash", "list"]),
        }
    }
}

/// `cargo loadbench ab ARGS…` running in `dir`, its stderr in a file a test can read while it
/// runs.
#[derive(Debug)]
pub struct AbRun {
    child: Child,
    started: Instant,
    stdout: PathBuf,
    stderr: PathBuf,
    _files: tempfile::TempDir,
}

impl AbRun {
    /// Starts `cargo loadbench ARGS…` in `dir` with extra `env`.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> AbRun {
        AbRun::start_without(dir, args, env, &[])
    }

    /// [`AbRun::start`], without the variables `remove` (those cargo and rustup set for the
    /// tests, say, to see what a user's shell would give).
    pub fn start_without(dir: &Path, args: &[&str], env: &[(&str, &OsStr)], remove: &[&str]) -> AbRun {
        let files = tempfile::tempdir().expect("tempdir");
        let (stdout, stderr) = (files.path().join("stdout"), files.path().join("stderr"));
        let mut command = Command::new(cargo_loadbench_path());
        command
            .arg("loadbench")
            .args(crate::cli::judged_args(args, false))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).expect("stdout file"))
            .stderr(File::create(&stderr).expect("stderr file"));
        isolate(&mut command);
        command.envs(env.iter().copied());
        for name in remove {
            command.env_remove(name);
        }
        let child = command.spawn().expect("start cargo-loadbench");
        AbRun { child, started: Instant::now(), stdout, stderr, _files: files }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it has written on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits (at most `limit`) until its stderr contains `text`; whether it did.
    pub fn wait_for(&mut self, text: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.stderr().contains(text) {
                return true;
            }
            if self.child.try_wait().ok().flatten().is_some() {
                return self.stderr().contains(text);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits for it to end (killing it when it has not within `limit` from now, which fails the
    /// test) and returns what it printed.
    pub fn finish(mut self, limit: Duration) -> Output {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Output {
                    code: status.code(),
                    stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
                    stderr: self.stderr(),
                };
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "cargo loadbench ab ran for {:?}, and {limit:?} after it was waited for:\n{}",
                    self.started.elapsed(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `cargo loadbench ARGS…` in `dir`, to its end (at most ten minutes, a first build included).
pub fn run_in(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Output {
    AbRun::start(dir, args, env).finish(Duration::from_secs(600))
}

/// Two processes that keep both cores busy until dropped: a neighbour on a shared CI runner.
#[derive(Debug)]
pub struct Neighbour(Vec<Child>);

impl Neighbour {
    /// Starts `n` busy loops.
    pub fn start(n: usize) -> Neighbour {
        Neighbour(
            (0..n)
                .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("start a busy loop"))
                .collect(),
        )
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The requests each side's service answered, by side, from the files it writes on SIGTERM in
/// `dir` ([`Repo::write_service`]): summed over the services of that side.
pub fn served(dir: &Path, side: &str) -> u64 {
    std::fs::read_dir(dir)
        .expect("the served folder")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{side}-")))
        .map(|e| std::fs::read_to_string(e.path()).expect("a count").trim().parse::<u64>().expect("a number"))
        .sum()
}
