//! A session thread's provided buffers (`IORING_REGISTER_PBUF_RING`): a receive names the group,
//! not a buffer, and the kernel takes one only when data comes. An idle connection's waiting
//! receive holds no memory; the stream copies what came out and gives the buffer back at once.

use std::alloc::{self, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::IoUring;

/// The buffer group the session threads' receives name.
pub const GROUP: u16 = 0;
/// Buffers in the group (a power of two). A buffer is only out between a receive's completion
/// and its task's next turn, so this bounds the receives completing in one turn of the thread;
/// past it a receive fails with `ENOBUFS` and the stream receives into its own buffer once.
const COUNT: u16 = 64;
/// The size of each buffer: a receive takes at most this much (as the relay's batches, half).
pub const SIZE: usize = 32 * 1024;
/// The ring's entries must start on a page.
const PAGE: usize = 4096;

/// The registered ring of buffer descriptors and the buffers. Its memory is never freed while
/// the ring lives: the kernel may write a buffer until the ring's teardown has ended, which is
/// after its descriptor is closed; dropping this leaks it (once per thread).
pub struct Provided {
    entries: NonNull<BufRingEntry>,
    bufs: NonNull<u8>,
    /// Our copy of the ring's tail (the kernel reads the shared one).
    tail: u16,
    /// Buffers completions handed to us and not yet given back.
    out: usize,
}

impl Provided {
    /// Allocates the buffers, registers them with `ring` as [`GROUP`] and hands them all to the
    /// kernel. Fails where the kernel has no buffer rings (before 5.19).
    pub fn register(ring: &IoUring) -> io::Result<Provided> {
        let (entries_layout, bufs_layout) = layouts()?;
        // SAFETY: both layouts have a non-zero size.
        let entries = NonNull::new(unsafe { alloc::alloc_zeroed(entries_layout) }.cast::<BufRingEntry>());
        let bufs = NonNull::new(unsafe { alloc::alloc(bufs_layout) });
        let (Some(entries), Some(bufs)) = (entries, bufs) else {
            free(entries.map(NonNull::cast), entries_layout);
            free(bufs, bufs_layout);
            return Err(io::ErrorKind::OutOfMemory.into());
        };
        // SAFETY: `entries` is page-aligned, zeroed, holds COUNT entries and is never freed once
        // registered (see the type's documentation).
        let registered =
            unsafe { ring.submitter().register_buf_ring_with_flags(entries.as_ptr() as u64, COUNT, GROUP, 0) };
        if let Err(e) = registered {
            free(Some(entries.cast()), entries_layout);
            free(Some(bufs), bufs_layout);
            return Err(e);
        }
        let mut provided = Provided { entries, bufs, tail: 0, out: usize::from(COUNT) };
        for bid in 0..COUNT {
            provided.recycle(bid);
        }
        Ok(provided)
    }

    /// A completion handed buffer `bid` to us.
    pub fn taken(&mut self, bid: u16) {
        if bid < COUNT {
            self.out += 1;
        }
    }

    /// How many buffers completions handed to us that are not back with the kernel.
    #[cfg(test)]
    pub fn out(&self) -> usize {
        self.out
    }

    /// The first `len` bytes of buffer `bid`, which a completion handed to us.
    pub fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        if bid >= COUNT {
            return &[];
        }
        // SAFETY: buffer `bid` lies within `bufs`; the kernel is done with it (its completion
        // was read) and nothing writes it until it is recycled.
        unsafe { std::slice::from_raw_parts(self.bufs.as_ptr().add(usize::from(bid) * SIZE), len.min(SIZE)) }
    }

    /// Gives buffer `bid` back to the kernel.
    pub fn recycle(&mut self, bid: u16) {
        if bid >= COUNT {
            return;
        }
        self.out = self.out.saturating_sub(1);
        let index = usize::from(self.tail & (COUNT - 1));
        // SAFETY: `index` < COUNT; the kernel reads entries up to the published tail only, and
        // this one is past it. The tail shares the first entry's reserved field, which the
        // entry setters leave alone.
        unsafe {
            let entry = &mut *self.entries.as_ptr().add(index);
            entry.set_addr(self.bufs.as_ptr().add(usize::from(bid) * SIZE) as u64);
            entry.set_len(SIZE as u32);
            entry.set_bid(bid);
            self.tail = self.tail.wrapping_add(1);
            let tail = BufRingEntry::tail(self.entries.as_ptr()).cast_mut();
            // The entry is written before the kernel may see it (it loads the tail with acquire).
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }
}

fn layouts() -> io::Result<(Layout, Layout)> {
    let entries = Layout::from_size_align(usize::from(COUNT) * std::mem::size_of::<BufRingEntry>(), PAGE);
    let bufs = Layout::from_size_align(usize::from(COUNT) * SIZE, PAGE);
    match (entries, bufs) {
        (Ok(e), Ok(b)) => Ok((e, b)),
        _ => Err(io::ErrorKind::InvalidInput.into()),
    }
}

/// Frees memory the kernel never had.
fn free(ptr: Option<NonNull<u8>>, layout: Layout) {
    if let Some(p) = ptr {
        // SAFETY: allocated with `layout` above and not registered.
        unsafe { alloc::dealloc(p.as_ptr(), layout) };
    }
}
