//! A description of the generator's machine, stored with every result.

use crate::report::MachineInfo;

pub(crate) fn describe() -> MachineInfo {
    let read = |path: &str| std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    MachineInfo {
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
    }
}
