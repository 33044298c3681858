//! What the figures ran on and what a process costs: the machine, a process's CPU time (its
//! CPU-time clock, every thread) and its resident memory (VmRSS).

use anyhow::{Context, Result};

/// `nproc`, the CPU model and the memory, on one line.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split(':').nth(1))
        .unwrap_or("unknown CPU")
        .trim();
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| field_kib(&m, "MemTotal:"))
        .map_or("unknown".to_owned(), |kib| {
            format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0)
        });
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores ({model}), {memory} memory")
}

/// CPU seconds `pid` has used so far, every thread of it, those that ended included: the
/// process's CPU-time clock (`clock_getcpuclockid`), to the nanosecond. (`/proc/PID/schedstat`
/// is the main thread's alone: it left out the console's reports worker.) Where the clock
/// cannot be read, user and system time in clock ticks from `/proc/PID/stat` (a tick is 10 ms:
/// too coarse for an idle backend over a window of seconds).
pub fn cpu_secs(pid: u32) -> Result<f64> {
    let mut clock: libc::clockid_t = 0;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both calls only write to the locals passed.
    let read = unsafe {
        libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) == 0
            && libc::clock_gettime(clock, &mut now) == 0
    };
    if read {
        return Ok(now.tv_sec as f64 + now.tv_nsec as f64 / 1e9);
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("no command name in /proc/<pid>/stat")?
        .1
        .split_whitespace()
        .collect();
    let ticks = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("field {} of /proc/{pid}/stat", i + 3))
    };
    // SAFETY: sysconf has no preconditions.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok((ticks(11)? + ticks(12)?) as f64 / per_sec)
}

/// Resident memory of `pid`, in MiB.
pub fn rss_mib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let kib = field_kib(&status, "VmRSS:").context("no VmRSS in /proc/<pid>/status")?;
    Ok(kib as f64 / 1024.0)
}

/// The number in a `Name:   1234 kB` line.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
