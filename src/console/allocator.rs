//! The console's resident memory under glibc's allocator, which by default gives each thread an
//! arena of its own and keeps memory freed among long-lived allocations (a burst of rows leaves
//! plenty among the debates' summaries) instead of handing it back. [`share_arenas`] is called
//! once, before any thread starts; `give_back` off the draw loop, when a burst of rows is over
//! or has left much free (it holds the arenas while it runs: see `held_free`). Elsewhere they
//! do nothing.

/// Lets every thread allocate from the same two arenas.
pub fn share_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only tunes the allocator; called before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Hands the memory the allocator holds free back to the system.
pub(crate) fn give_back() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory; it may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The memory the allocator holds free, in bytes (0 where unknown). It walks the free lists,
/// but makes no system call.
pub(crate) fn held_free() -> usize {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    unsafe {
        libc::mallinfo2().fordblks
    }
    #[cfg(not(target_env = "gnu"))]
    0
}
