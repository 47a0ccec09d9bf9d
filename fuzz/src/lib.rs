//! Shared pieces of the fuzz targets: an in-memory stream that hands out its bytes in
//! fuzzer-chosen chunks, a runtime to drive the async readers, and input splitting helpers.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A socket stand-in: reads return `data` in chunks whose sizes cycle through `chunks` (so
/// frames arrive split at every possible place); writes are counted and dropped.
#[derive(Debug, Default)]
pub struct ChunkedStream {
    data: Vec<u8>,
    pos: usize,
    chunks: Vec<usize>,
    turn: usize,
    /// Bytes written to the stream.
    pub written: usize,
}

impl ChunkedStream {
    /// A stream yielding `data`; chunk sizes are `1 + b % 64` for each byte of `chunk_seed`
    /// (one read of everything when empty).
    pub fn new(data: &[u8], chunk_seed: &[u8]) -> Self {
        let chunks = chunk_seed.iter().map(|b| 1 + usize::from(*b % 64)).collect();
        ChunkedStream { data: data.to_vec(), pos: 0, chunks, turn: 0, written: 0 }
    }

    /// Bytes read from the stream so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl AsyncRead for ChunkedStream {
    fn poll_read(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let left = this.data.len() - this.pos;
        let chunk = match this.chunks.get(this.turn % this.chunks.len().max(1)) {
            Some(c) => *c,
            None => left,
        };
        this.turn += 1;
        let n = chunk.min(left).min(buf.remaining());
        buf.put_slice(&this.data[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for ChunkedStream {
    fn poll_write(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.written += buf.len();
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("fuzz harness: no tokio runtime: {e}"));
}

/// Runs a future to completion on the harness's current-thread runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    RUNTIME.with(|rt| rt.block_on(f))
}

/// Splits `data` at the first `0xFF` byte (absent: everything is the first part).
pub fn split_ff(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// Splits `data` into lines on `\n` (at most `max` of them), as lossy UTF-8.
pub fn lines(data: &[u8], max: usize) -> Vec<String> {
    data.split(|b| *b == b'\n').take(max).map(|l| String::from_utf8_lossy(l).into_owned()).collect()
}

/// The header of a framing target's input: a flags byte, then a count `n` (mod 16) and `n` bytes
/// of chunk sizes for [`ChunkedStream`]; returns (flags, chunk seed, rest), `None` when too short.
pub fn framing_header(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&flags, rest) = data.split_first()?;
    let (&n, rest) = rest.split_first()?;
    let (chunks, rest) = rest.split_at(usize::from(n % 16).min(rest.len()));
    Some((flags, chunks, rest))
}
