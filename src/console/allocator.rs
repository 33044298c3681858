//! The console's resident memory under glibc's allocator, which by default gives each thread an
//! arena of its own and keeps memory freed among long-lived allocations (a burst of rows leaves
//! plenty among the debates' summaries) instead of handing it back. [`share_arenas`] is called
//! once, before any thread starts; [`GiveBack`] says when, off the draw loop, the memory a burst
//! of rows left free goes back to the system. Elsewhere they do nothing.

use std::time::{Duration, Instant};

/// Lets every thread allocate from the same two arenas.
pub fn share_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only tunes the allocator; called before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Memory goes back to the system at most this often: once no row has landed for [`QUIET`],
/// or, under a stream, once resident memory grew by more than [`GROWN`] since it last went
/// back. Handing it back holds the allocator's arenas, so every thread's allocations wait
/// meanwhile (the feed's and the draw loop's too: 7 ms and 355 system calls on the project's
/// machine, longer on a heap a flood left fragmented), which, done every [`TRIM`] under a steady
/// stream, held rows back from the screen. A steady stream reuses what it frees, and its
/// resident memory does not grow.
const TRIM: Duration = Duration::from_secs(10);
const QUIET: Duration = Duration::from_millis(250);
const GROWN: usize = 32 << 20;

/// When the memory bursts of rows leave free goes back to the system (see [`TRIM`]). Whether
/// memory grew is read from the kernel's count of the process's resident pages, never from the
/// allocator's statistics: those walk every free list with the arena held (20 to 25 ms after
/// 100,000 debates, a stall of every allocation on the draw loop each time).
#[derive(Debug)]
pub(crate) struct GiveBack {
    /// When memory last went back, or the last look found it not due.
    looked: Instant,
    /// When the latest row landed, if one did since memory last went back.
    landed: Option<Instant>,
    /// Resident memory when it last went back (bytes).
    resident: usize,
}

impl GiveBack {
    pub(crate) fn new() -> GiveBack {
        GiveBack {
            looked: Instant::now(),
            landed: None,
            resident: resident(),
        }
    }

    /// A row landed.
    pub(crate) fn landed(&mut self) {
        self.landed = Some(Instant::now());
    }

    /// When to look again ([`GiveBack::look`]), if rows landed since memory last went back.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.landed.map(|at| (at + QUIET).max(self.looked + TRIM))
    }

    /// Hands memory back to the system if it is due: rows landed since it last went back, the
    /// last look was [`TRIM`] ago, and the rows stopped or resident memory grew.
    pub(crate) fn look(&mut self) {
        let Some(at) = self.landed else {
            return;
        };
        if self.looked.elapsed() < TRIM {
            return;
        }
        if at.elapsed() >= QUIET || resident().saturating_sub(self.resident) > GROWN {
            give_back();
            self.landed = None;
            self.resident = resident();
        }
        self.looked = Instant::now();
    }
}

/// Hands the memory the allocator holds free back to the system.
fn give_back() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory; it may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's resident memory in bytes, as the kernel counts it (0 where unknown): one read
/// of `/proc/self/statm`, which takes no lock of the allocator's.
fn resident() -> usize {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages = statm
        .split_whitespace()
        .nth(1)
        .and_then(|pages| pages.parse::<usize>().ok())
        .unwrap_or(0);
    pages * page_size()
}

fn page_size() -> usize {
    #[cfg(unix)]
    // SAFETY: sysconf only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    #[cfg(not(unix))]
    let size = 4096;
    usize::try_from(size).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_and_grows_with_memory_touched() {
        let before = resident();
        assert!(before > 0, "statm read");
        let touched = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = resident();
        assert!(
            after >= before + (48 << 20),
            "{before} then {after} with 64 MiB touched"
        );
        drop(touched);
    }

    /// A console whose rows landed `since` ago, memory last given back when it held
    /// `resident` bytes, and last looked at a trim interval ago.
    fn landed(since: Duration, resident: usize) -> GiveBack {
        let now = Instant::now();
        GiveBack {
            looked: now - TRIM,
            landed: Some(now - since),
            resident,
        }
    }

    #[test]
    fn memory_goes_back_once_rows_stop_landing() {
        let mut giving = landed(QUIET, resident());
        giving.look();
        assert_eq!(giving.landed, None, "given back");
        assert_eq!(giving.due(), None, "nothing due until a row lands");
    }

    #[test]
    fn under_a_stream_memory_goes_back_only_once_resident_memory_grew() {
        let mut steady = landed(Duration::ZERO, resident() + (64 << 20));
        steady.look();
        assert!(steady.landed.is_some(), "not grown: kept");
        assert!(
            steady.looked.elapsed() < TRIM,
            "looked again only a trim interval on"
        );
        assert!(steady.due().expect("rows landed") >= steady.looked + TRIM);

        let touched = std::hint::black_box(vec![1u8; 2 * GROWN]);
        let mut grown = landed(Duration::ZERO, resident().saturating_sub(touched.len()));
        grown.look();
        assert_eq!(
            grown.landed,
            None,
            "grown by {} MiB: given back",
            touched.len() >> 20
        );
        drop(touched);
    }

    #[test]
    fn nothing_is_due_until_a_row_lands_then_not_before_the_quiet_or_the_trim_interval() {
        let mut giving = GiveBack::new();
        assert_eq!(giving.due(), None);
        giving.landed();
        let due = giving.due().expect("a row landed");
        assert!(due >= giving.looked + TRIM);
        giving.look();
        assert!(giving.landed.is_some(), "not due yet: nothing given back");
    }
}
