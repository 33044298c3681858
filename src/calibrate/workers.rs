//! Debates reduced on every thread of rayon's pool, each thread taking the next debate when it
//! is done with one. A debate is never left queued as a task of the pool: a thread that waits
//! inside a debate (for the part of a matrix product another thread took) takes up whatever
//! task the pool holds, a whole other debate as well, and returns to the first only once that
//! one is done. Debates then stacked up on one thread, which worked through them alone at the
//! end while the other had nothing left: a quarter of the cores idle over four long debates.
//! Here each thread of the pool runs one loop over the queue (a broadcast: one on every thread,
//! none left to take), so a waiting thread finds only parts of products to take, and the last
//! debates keep both cores busy.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

/// Items handed over one by one (as a database read yields them), each worked on by the first
/// thread of the pool free.
pub(super) struct Queue<T, R> {
    items: Sender<(usize, T)>,
    results: Receiver<(usize, R)>,
}

impl<T: Send + 'static, R: Send + 'static> Queue<T, R> {
    /// Starts a loop on each thread of the pool doing `work` on the items given (no thread
    /// waits for it).
    pub(super) fn start(work: impl Fn(T) -> R + Send + Sync + 'static) -> Queue<T, R> {
        let (items, queued) = mpsc::channel::<(usize, T)>();
        let (done, results) = mpsc::channel();
        let (queued, done) = (Mutex::new(queued), Mutex::new(done));
        rayon::spawn_broadcast(move |_| {
            let done = done.lock().unwrap_or_else(|e| e.into_inner()).clone();
            loop {
                let next = queued.lock().unwrap_or_else(|e| e.into_inner()).recv();
                // Closed and empty: every item given is done.
                let Ok((position, item)) = next else { break };
                // The results are gone only when the reading failed, and that error is
                // returned.
                if done.send((position, work(item))).is_err() {
                    break;
                }
            }
        });
        Queue { items, results }
    }

    /// Queues `item`, whose result comes at `position` among the results.
    pub(super) fn give(&self, position: usize, item: T) {
        // The loops hold the receiver until the sender is dropped: a send cannot fail.
        let _ = self.items.send((position, item));
    }

    /// Every item's result, in the order of their positions, once all are done.
    pub(super) fn finish(self) -> Vec<R> {
        drop(self.items);
        in_order(self.results.iter().collect())
    }
}

/// `work` done on each of `items` by every thread of the pool, each taking the next item when
/// done with one; the results in the items' order.
pub(super) fn each<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(items.len()));
    rayon::broadcast(|_| {
        loop {
            let position = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(position) else {
                break;
            };
            let result = work(item);
            results
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((position, result));
        }
    });
    in_order(results.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Results by position, in order.
fn in_order<R>(mut results: Vec<(usize, R)>) -> Vec<R> {
    results.sort_unstable_by_key(|(position, _)| *position);
    results.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    }

    /// The work of one item: the item doubled, and the pool's thread that did it.
    fn doubled(item: &u32) -> (u32, Option<usize>) {
        std::thread::sleep(Duration::from_millis(5));
        (item * 2, rayon::current_thread_index())
    }

    #[test]
    fn each_item_is_done_once_in_order_by_every_thread_of_the_pool() {
        let items: Vec<u32> = (0..20).collect();
        let results = pool().install(|| each(&items, doubled));
        let values: Vec<u32> = results.iter().map(|(value, _)| *value).collect();
        assert_eq!(values, (0..20).map(|n| n * 2).collect::<Vec<_>>());
        let threads: BTreeSet<Option<usize>> = results.iter().map(|(_, t)| *t).collect();
        assert_eq!(threads, BTreeSet::from([Some(0), Some(1)]));
    }

    #[test]
    fn no_items_no_results() {
        assert!(pool().install(|| each(&[] as &[u32], doubled)).is_empty());
    }

    #[test]
    fn queued_items_come_back_in_the_order_of_their_positions() {
        let pool = pool();
        let queue = pool.install(|| Queue::start(|item: u32| doubled(&item)));
        for position in (0..20).rev() {
            queue.give(position, position as u32);
        }
        let results = queue.finish();
        let values: Vec<u32> = results.iter().map(|(value, _)| *value).collect();
        assert_eq!(values, (0..20).map(|n| n * 2).collect::<Vec<_>>());
        let threads: BTreeSet<Option<usize>> = results.iter().map(|(_, t)| *t).collect();
        assert_eq!(threads, BTreeSet::from([Some(0), Some(1)]));
    }
}
