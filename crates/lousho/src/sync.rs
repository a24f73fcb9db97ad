//! Locks that ignore poisoning: the crate's one way to take a `std::sync` lock.
//!
//! A `Mutex` or `RwLock` is poisoned when a thread panicked while holding it.
//! Every lock in lousho guards plain bookkeeping (maps of pending replies,
//! histories, buffers, remembered approvals) that each critical section leaves
//! whole or not at all, so the data behind a poisoned lock is still valid; and
//! a panic in one tool call or one connection must not turn every later call
//! into a second panic. So the guard is taken either way.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`] that takes the guard even when the mutex is poisoned (see
/// the [module docs](self) for why that is sound here).
pub(crate) trait MutexExt<T: ?Sized> {
    /// Lock, ignoring poisoning.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
    /// The data of a mutex held exclusively, ignoring poisoning.
    #[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
    fn get_mut_unpoisoned(&mut self) -> &mut T;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get_mut_unpoisoned(&mut self) -> &mut T {
        self.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`] that take the guard even when the
/// lock is poisoned (see the [module docs](self) for why that is sound here).
/// (Only the MCP client and server hold `RwLock`s today.)
#[cfg_attr(
    not(any(feature = "mcp-client", feature = "mcp-server")),
    allow(dead_code)
)]
pub(crate) trait RwLockExt<T: ?Sized> {
    /// Lock for reading, ignoring poisoning.
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    /// Lock for writing, ignoring poisoning.
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::{MutexExt, RwLockExt};
    use std::sync::{Mutex, RwLock};

    #[test]
    fn a_poisoned_lock_still_hands_out_its_data() {
        let mutex = Mutex::new(1);
        let rw = RwLock::new(2);
        let _ = std::panic::catch_unwind(|| {
            let _m = mutex.lock();
            let _w = rw.write();
            panic!("poison both");
        });
        assert!(mutex.is_poisoned() && rw.is_poisoned());
        *mutex.lock_unpoisoned() += 1;
        *rw.write_unpoisoned() += 1;
        assert_eq!((*mutex.lock_unpoisoned(), *rw.read_unpoisoned()), (2, 3));
    }
}
