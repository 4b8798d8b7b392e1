//! Memory given back when a large answer's view closes (issue 23: "released back after the
//! view closes").
//!
//! The binary's allocator is mimalloc 3 (`src/main.rs`). A block over 512 KiB (the received
//! body of a 20 MB answer, its pretty-printed text, the index of its lines) lives in a page
//! of its own; freeing it frees the page at once, but the page's memory goes back to the
//! operating system (`madvise(MADV_DONTNEED)`, a "purge") only after mimalloc's
//! `purge_delay` (1,000 ms; `src/options.c` of `libmimalloc-sys` 0.1.49, mimalloc 3.3.2),
//! and only when some thread later runs the arenas' collection (`_mi_arenas_collect` in
//! `src/arena.c`): when a thread frees or abandons a whole page of its own, or when a
//! thread ends (`mi_thread_theaps_done` in `src/init.c` → `mi_theap_collect_ex` with
//! `MI_ABANDON`, which visits every arena, `src/theap.c`). A console that sits idle after a
//! view closed may do none of these for a long time: the 20 MB view's memory stayed
//! resident (RSS 94–95 MiB two seconds after a small answer replaced it, three runs of
//! `cargo bench --bench console -- 20mb`, BENCHMARKS.md "r13/memory").
//!
//! [`release`] makes the return deterministic without `unsafe` (mimalloc's own
//! `mi_collect` is only reachable through FFI): the payload is dropped on a short-lived
//! thread of its own, which then waits past the purge delay ([`PURGE_WAIT`]) and ends; its
//! end runs the collection, and the pages freed since more than the delay (the payload's
//! among them) are purged. Small payloads ([`RELEASE_MIN_BYTES`]) are dropped where they
//! are: their memory is reused by the next allocations anyway.

use std::time::Duration;

/// Payloads under this many bytes are dropped on the calling thread (1 MiB: above
/// mimalloc's 512 KiB, the size from which a block has a page of its own).
pub const RELEASE_MIN_BYTES: usize = 1 << 20;

/// How long the release thread lives after dropping its payload: mimalloc's purge delay
/// (1,000 ms, counted from the free) with a margin for its millisecond clock.
pub const PURGE_WAIT: Duration = Duration::from_millis(1_250);

/// The name of the release thread (seen in `/proc/<pid>/task/*/comm` while it waits).
pub const THREAD_NAME: &str = "psd2-release";

#[cfg(test)]
thread_local! {
    /// The sizes handed to [`release`] from this thread, for the tests of the callers.
    static SENT: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The sizes of the payloads this thread sent to a release thread since the last call
/// (tests only).
#[cfg(test)]
pub(crate) fn take_sent() -> Vec<usize> {
    SENT.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

/// Drops `payload`, which holds about `bytes` bytes, so that its memory goes back to the
/// operating system within [`PURGE_WAIT`]: at or above [`RELEASE_MIN_BYTES`] on a thread
/// of its own ([`THREAD_NAME`]) that ends after [`PURGE_WAIT`] (see the module docs),
/// below it here. Returns that thread's handle (`None` when dropped here, also when no
/// thread could be started: then the payload is dropped here and its memory goes back
/// with mimalloc's next collection, as before).
pub fn release<T: Send + 'static>(bytes: usize, payload: T) -> Option<std::thread::JoinHandle<()>> {
    if bytes < RELEASE_MIN_BYTES {
        drop(payload);
        return None;
    }
    #[cfg(test)]
    SENT.with(|s| s.borrow_mut().push(bytes));
    std::thread::Builder::new()
        .name(THREAD_NAME.to_string())
        .spawn(move || {
            // An allocation first, so that mimalloc knows this thread (its heap is set up
            // on the first allocation, and only a thread it knows collects when it ends).
            drop(std::hint::black_box(Vec::<u8>::with_capacity(64)));
            drop(payload);
            std::thread::sleep(PURGE_WAIT);
        })
        // On failure the closure, and with it the payload, is dropped here.
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Reports, when dropped, the name of the thread it is dropped on.
    struct Probe(Vec<u8>, mpsc::Sender<Option<String>>);

    impl Drop for Probe {
        fn drop(&mut self) {
            let name = std::thread::current().name().map(str::to_string);
            let _ = self.1.send(name);
        }
    }

    #[test]
    fn a_large_payload_is_dropped_on_the_release_thread_which_then_ends() {
        let (tx, rx) = mpsc::channel();
        let probe = Probe(vec![1; RELEASE_MIN_BYTES], tx);
        let handle = release(probe.0.len(), probe).expect("a release thread");
        assert_eq!(rx.recv().unwrap().as_deref(), Some(THREAD_NAME));
        // The thread ends (and with it mimalloc's collection of the freed pages runs).
        handle.join().unwrap();
        assert_eq!(take_sent(), vec![RELEASE_MIN_BYTES]);
    }

    #[test]
    fn a_small_payload_is_dropped_at_once_on_the_calling_thread() {
        let (tx, rx) = mpsc::channel();
        let here = std::thread::current().name().map(str::to_string);
        let probe = Probe(vec![1; 16], tx);
        assert!(release(16, probe).is_none());
        assert_eq!(rx.try_recv().unwrap(), here);
        assert!(take_sent().is_empty());
    }
}
