//! Session threads with real loopback sockets: bytes in order both ways, ends, wakes from other
//! threads, tokio's timers, a panicking task.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{on_session_thread, RingStream, SessionThreads};

/// Long enough for a loaded CI machine; only a failure waits this long.
const WAIT: Duration = Duration::from_secs(20);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
}

fn threads(rt: &tokio::runtime::Runtime, n: usize) -> Option<SessionThreads> {
    match SessionThreads::start(n, rt.handle()) {
        Ok(t) => Some(t),
        Err(e) => {
            skip(&format!("io_uring is not available here: {e}"));
            None
        }
    }
}

/// Says why the calling test cannot run, and records it where the test command's summary counts
/// skipped tests (`GATEWAY_SKIP_LOG`, the format of `gateway-tests`' `skip`).
fn skip(reason: &str) {
    let test = std::thread::current().name().unwrap_or("dataplane::ring::tests").to_string();
    eprintln!("SKIP: {test}: {reason}");
    if let Some(path) = std::env::var_os("GATEWAY_SKIP_LOG") {
        let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}

/// A connected pair of loopback sockets.
fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let near = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
    let (far, _) = listener.accept().expect("accept");
    (near, far)
}

/// On a session thread: answers every chunk with the chunk's bytes plus one, until the end,
/// then shuts its side.
async fn plus_one(sock: TcpStream, done: mpsc::Sender<Result<usize, String>>) {
    let result = async {
        let mut s = RingStream::new(sock).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 7000];
        let mut total = 0;
        loop {
            let n = s.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            total += n;
            let out: Vec<u8> = buf[..n].iter().map(|b| b.wrapping_add(1)).collect();
            s.write_all(&out).await.map_err(|e| e.to_string())?;
            s.flush().await.map_err(|e| e.to_string())?;
        }
        s.shutdown().await.map_err(|e| e.to_string())?;
        Ok(total)
    }
    .await;
    let _ = done.send(result);
}

#[test]
fn a_session_thread_moves_bytes_in_order_both_ways_and_passes_the_end_on() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (mut near, far) = pair();
    let (tx, rx) = mpsc::channel();
    threads.spawn(plus_one(far, tx));
    // 4 MiB, more than a socket buffer: the sends must wait for room and come out whole.
    let data: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 251) as u8).collect();
    let mut writer = near.try_clone().expect("clone");
    let sent = data.clone();
    let send = std::thread::spawn(move || {
        writer.write_all(&sent).expect("write");
        writer.shutdown(Shutdown::Write).expect("shutdown");
    });
    near.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut back = Vec::new();
    near.read_to_end(&mut back).expect("read to the end");
    send.join().expect("sender");
    assert_eq!(back.len(), data.len());
    assert!(back.iter().zip(&data).all(|(b, d)| *b == d.wrapping_add(1)), "bytes changed or reordered");
    assert_eq!(rx.recv_timeout(WAIT).expect("task ended"), Ok(data.len()));
}

#[test]
fn many_sessions_on_one_thread_each_get_their_own_answers() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (tx, rx) = mpsc::channel();
    let mut clients = Vec::new();
    for _ in 0..40 {
        let (near, far) = pair();
        threads.spawn(plus_one(far, tx.clone()));
        near.set_read_timeout(Some(WAIT)).expect("timeout");
        clients.push(near);
    }
    for round in 0..50u8 {
        for (i, c) in clients.iter_mut().enumerate() {
            c.write_all(&[i as u8, round]).expect("write");
        }
        for (i, c) in clients.iter_mut().enumerate() {
            let mut got = [0u8; 2];
            c.read_exact(&mut got).expect("answer");
            assert_eq!(got, [i as u8 + 1, round + 1], "session {i} round {round}");
        }
    }
    for c in &clients {
        c.shutdown(Shutdown::Write).expect("shutdown");
    }
    for _ in 0..clients.len() {
        assert_eq!(rx.recv_timeout(WAIT).expect("task ended"), Ok(100));
    }
}

#[test]
fn a_dropped_stream_closes_its_socket_though_a_receive_was_waiting() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (mut near, far) = pair();
    let (tx, rx) = mpsc::channel();
    threads.spawn(async move {
        let mut s = match RingStream::new(far) {
            Ok(s) => s,
            Err(e) => return drop(tx.send(Err(e.to_string()))),
        };
        let mut buf = [0u8; 16];
        // The receive waits in the kernel; the timeout drops the read, then the stream.
        let read = tokio::time::timeout(Duration::from_millis(50), s.read(&mut buf)).await;
        let _ = tx.send(Ok(read.is_err()));
    });
    assert_eq!(rx.recv_timeout(WAIT).expect("task ended"), Ok(true), "the read should have been waiting");
    near.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut rest = Vec::new();
    assert_eq!(near.read_to_end(&mut rest).expect("the close reaches the peer"), 0);
}

#[test]
fn tasks_are_woken_from_other_threads_and_by_tokios_timers() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 2) else { return };
    let (tx, rx) = mpsc::channel();
    let (go_tx, go_rx) = tokio::sync::oneshot::channel::<u32>();
    let done = tx.clone();
    threads.spawn(async move {
        let on_ring = on_session_thread();
        let got = go_rx.await.unwrap_or(0);
        let _ = done.send((on_ring, got));
    });
    threads.spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let _ = tx.send((on_session_thread(), 7));
    });
    assert_eq!(rx.recv_timeout(WAIT).expect("the timer's task"), (true, 7));
    go_tx.send(42).expect("send");
    assert_eq!(rx.recv_timeout(WAIT).expect("the woken task"), (true, 42));
    assert!(!on_session_thread(), "the test's thread has no ring");
}

/// A task that is woken once more each time it is polled, `n` times, then done.
struct Yields(u32);

impl std::future::Future for Yields {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 == 0 {
            return std::task::Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

#[test]
fn tasks_on_one_thread_wake_each_other_and_themselves() {
    const ROUNDS: u32 = 10_000;
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (tx, rx) = mpsc::channel();
    let (ping_tx, mut ping_rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
    let (pong_tx, mut pong_rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
    let done = tx.clone();
    // Each message wakes the other task, on the same thread.
    threads.spawn(async move {
        let mut got = 0;
        while let Some(n) = ping_rx.recv().await {
            got = n;
            if n == ROUNDS || pong_tx.send(n).is_err() {
                break;
            }
        }
        let _ = done.send(("echo", got));
    });
    let done = tx.clone();
    threads.spawn(async move {
        let mut last = 0;
        for n in 1..=ROUNDS {
            if ping_tx.send(n).is_err() {
                break;
            }
            if n < ROUNDS {
                last = pong_rx.recv().await.unwrap_or(0);
            }
        }
        let _ = done.send(("ping", last));
    });
    threads.spawn(async move {
        Yields(ROUNDS).await;
        let _ = tx.send(("yields", ROUNDS));
    });
    let mut seen: Vec<(&str, u32)> = (0..3).map(|_| rx.recv_timeout(WAIT).expect("every task ends")).collect();
    seen.sort();
    assert_eq!(seen, [("echo", ROUNDS), ("ping", ROUNDS - 1), ("yields", ROUNDS)]);
}

#[test]
fn a_panicking_task_leaves_the_thread_serving_the_others() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (tx, rx) = mpsc::channel();
    threads.spawn(async { panic!("a session's bug") });
    threads.spawn(async move {
        let _ = tx.send(on_session_thread());
    });
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
}

#[test]
fn a_ring_stream_used_off_a_session_thread_fails_cleanly() {
    let (_near, far) = pair();
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let err = rt.block_on(async {
        let mut s = RingStream::new(far).expect("stream");
        s.read(&mut [0u8; 4]).await.expect_err("no ring on this thread")
    });
    assert!(err.to_string().contains("session thread"), "{err}");
}

/// On a session thread: how many provided buffers are out (see [`super::ops::provided_out`]);
/// `None` (after a printed skip) where the thread has none.
fn provided_out(threads: &SessionThreads) -> Option<usize> {
    let (tx, rx) = mpsc::channel();
    threads.spawn(async move {
        let _ = tx.send(super::ops::provided_out());
    });
    let out = rx.recv_timeout(WAIT).expect("the counting task");
    if out.is_none() {
        skip("this kernel has no io_uring buffer rings (5.19+): receives use their own buffers");
    }
    out
}

/// Blocks the session thread (a task that waits on `gate`): what comes meanwhile completes in
/// one turn of its ring.
fn hold(threads: &SessionThreads) -> mpsc::Sender<()> {
    let (gate, held) = mpsc::channel::<()>();
    threads.spawn(async move {
        let _ = held.recv_timeout(WAIT);
    });
    gate
}

#[test]
fn more_receives_completing_at_once_than_provided_buffers_all_get_their_bytes_and_give_them_back() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    if provided_out(&threads).is_none() {
        return;
    }
    let (tx, rx) = mpsc::channel();
    let mut clients = Vec::new();
    // Three times the provided buffers: most find none (ENOBUFS) and receive into their own.
    for _ in 0..200 {
        let (near, far) = pair();
        threads.spawn(plus_one(far, tx.clone()));
        near.set_read_timeout(Some(WAIT)).expect("timeout");
        clients.push(near);
    }
    for round in 0..3u8 {
        let gate = hold(&threads);
        for (i, c) in clients.iter_mut().enumerate() {
            c.write_all(&[i as u8, round, 9]).expect("write");
        }
        drop(gate);
        for (i, c) in clients.iter_mut().enumerate() {
            let mut got = [0u8; 3];
            c.read_exact(&mut got).expect("answer");
            assert_eq!(got, [i as u8 + 1, round + 1, 10], "session {i} round {round}");
        }
    }
    for c in &clients {
        c.shutdown(Shutdown::Write).expect("shutdown");
    }
    for _ in 0..clients.len() {
        assert_eq!(rx.recv_timeout(WAIT).expect("task ended"), Ok(9));
    }
    assert_eq!(provided_out(&threads), Some(0), "every provided buffer is back with the kernel");
}

#[test]
fn a_receive_completed_but_never_read_gives_its_buffer_back_when_its_stream_is_dropped() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    if provided_out(&threads).is_none() {
        return;
    }
    let (mut near1, far1) = pair();
    let (mut near2, far2) = pair();
    let (tx, rx) = mpsc::channel();
    let gate = hold(&threads);
    threads.spawn(async move {
        let result = async {
            let mut a = RingStream::new(far1).map_err(|e| e.to_string())?;
            let mut b = RingStream::new(far2).map_err(|e| e.to_string())?;
            let (mut x, mut y) = ([0u8; 8], [0u8; 8]);
            // Both complete in the same turn: one read wins, the other's completion is left.
            let n = tokio::select! {
                biased;
                n = a.read(&mut x) => n,
                n = b.read(&mut y) => n,
            }
            .map_err(|e| e.to_string())?;
            Ok::<_, String>(n)
        }
        .await;
        let _ = tx.send(result);
    });
    near1.write_all(b"one").expect("write");
    near2.write_all(b"two").expect("write");
    drop(gate);
    assert_eq!(rx.recv_timeout(WAIT).expect("task ended"), Ok(3));
    for near in [&mut near1, &mut near2] {
        near.set_read_timeout(Some(WAIT)).expect("timeout");
        assert_eq!(near.read(&mut [0u8; 4]).expect("the close reaches the peer"), 0);
    }
    assert_eq!(provided_out(&threads), Some(0), "the unread completion's buffer went back");
}

/// A pooled server connection parked on a ring: not settled while its send is in the ring (any
/// thread may take a settled one), quiet until the peer speaks, and its socket, taken out, still
/// holds what the peer sent.
#[test]
fn a_stream_settles_once_its_send_is_done_and_gives_back_its_socket_with_unread_bytes() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (mut near, far) = pair();
    let (spoke_tx, spoke_rx) = tokio::sync::oneshot::channel::<()>();
    let (first_tx, first_rx) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    threads.spawn(async move {
        let result = async {
            let mut s = RingStream::new(far).map_err(|e| e.to_string())?;
            s.write_all(b"ping").await.map_err(|e| e.to_string())?;
            // Queued, not yet submitted: the ring has the send.
            let queued = (s.settle(), s.quiet());
            std::future::poll_fn(|cx| s.poll_sends_done(cx)).await.map_err(|e| e.to_string())?;
            let _ = first_tx.send((queued, (s.settle(), s.quiet())));
            spoke_rx.await.map_err(|e| e.to_string())?;
            let spoken = s.quiet();
            let mut sock = s.into_std().map_err(|_| "not settled".to_string())?;
            let mut byte = [0u8; 1];
            let read = sock.read(&mut byte).map_err(|e| e.to_string())?;
            Ok::<_, String>((spoken, (read, byte[0])))
        }
        .await;
        let _ = tx.send(result);
    });
    let (queued, done) = first_rx.recv_timeout(WAIT).expect("the task's first looks");
    assert_eq!(queued, (false, true), "a send in the ring: unsettled, yet quiet");
    assert_eq!(done, (true, true), "the send done: settled and quiet");
    near.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut ping = [0u8; 4];
    near.read_exact(&mut ping).expect("the send reached the peer");
    assert_eq!(&ping, b"ping");
    // On loopback the byte is in the far socket's queue when the write returns.
    near.write_all(b"x").expect("write");
    spoke_tx.send(()).expect("task alive");
    let (spoken, read) = rx.recv_timeout(WAIT).expect("task ended").expect("task failed");
    assert!(!spoken, "a byte from the peer is not quiet");
    assert_eq!(read, (1, b'x'), "the socket taken out still holds the peer's byte");
}

/// A checked send ([`RingStream::check_on_send`], no system call of its own) on a quiet
/// connection reads the answer; on one the peer closed (FIN, or RST as MariaDB's `wait_timeout`
/// close), or spoke on unasked, before the send, every read fails and the stream says it was
/// stale (the request ran nowhere).
#[test]
fn a_checked_send_finds_a_connection_closed_or_spoken_on_before_it() {
    let rt = runtime();
    let Some(threads) = threads(&rt, 1) else { return };
    let (mut live, live_far) = pair();
    let (closed, closed_far) = pair();
    let (reset, reset_far) = pair();
    let (mut chatty, chatty_far) = pair();
    // On loopback the end, the reset and the byte are in the far sockets' queues when these
    // return.
    drop(closed);
    abort(reset);
    chatty.write_all(b"x").expect("write");
    let (tx, rx) = mpsc::channel();
    threads.spawn(async move {
        let result = async {
            let mut seen = Vec::new();
            for sock in [live_far, closed_far, reset_far, chatty_far] {
                let mut s = RingStream::new(sock).map_err(|e| e.to_string())?;
                let checked = s.check_on_send();
                s.write_all(b"q").await.map_err(|e| e.to_string())?;
                let mut answer = [0u8; 1];
                let read = s.read(&mut answer).await.map(|n| answer[..n].to_vec()).map_err(|e| e.kind());
                seen.push((checked, read, s.stale(), s.settle()));
            }
            Ok::<_, String>(seen)
        }
        .await;
        let _ = tx.send(result);
    });
    live.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut q = [0u8; 1];
    live.read_exact(&mut q).expect("the checked send reached the live peer");
    assert_eq!(&q, b"q");
    live.write_all(b"a").expect("answer");
    let seen = rx.recv_timeout(WAIT).expect("task ended").expect("task failed");
    let aborted = Err(std::io::ErrorKind::ConnectionAborted);
    assert_eq!(seen[0], (true, Ok(b"a".to_vec()), false, true), "quiet: the answer, settled after");
    assert_eq!(seen[1], (true, aborted.clone(), true, false), "closed before the send: stale, not an end");
    assert_eq!(seen[2], (true, aborted.clone(), true, false), "reset before the send: stale");
    assert_eq!(seen[3], (true, aborted, true, false), "spoken on before: stale, not an answer");
}

/// Closes `sock` with a reset (SO_LINGER 0) instead of a FIN.
fn abort(sock: TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: a valid socket and a valid `linger` for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_LINGER");
    drop(sock);
}
