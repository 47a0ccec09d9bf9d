//! The metrics endpoint: a minimal HTTP/1.x server answering `GET /metrics` with Prometheus text
//! — the data-plane page of [`DataplaneStatus`] on `[dataplane] metrics_address`, or the full
//! gateway page (`crate::metrics`) on `[metrics] address` — and the matching blocking client
//! used by `gateway dataplane status`. One request per connection, bounded header size and time.

use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::super::status::DataplaneStatus;
use super::super::DataplaneError;

/// Produces the status at scrape time.
pub type StatusFn = Arc<dyn Fn() -> DataplaneStatus + Send + Sync>;

/// Produces the page (Prometheus text) at scrape time.
pub type RenderFn = Arc<dyn Fn() -> String + Send + Sync>;

/// Largest request head accepted.
const MAX_REQUEST: usize = 8 * 1024;
/// Time a client gets to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Binds the endpoint.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, DataplaneError> {
    TcpListener::bind(addr).await.map_err(|source| DataplaneError::Metrics { addr, source })
}

/// Serves the data-plane status on `listener` until the returned task is aborted.
pub fn serve(listener: TcpListener, status: StatusFn) -> JoinHandle<()> {
    serve_text(listener, Arc::new(move || status().to_prometheus()))
}

/// Serves the page `render` produces on `listener` until the returned task is aborted.
pub fn serve_text(listener: TcpListener, render: RenderFn) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let render = render.clone();
                    tokio::spawn(async move {
                        if let Err(e) = answer(stream, &render).await {
                            tracing::debug!(error = %e, "metrics request failed");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metrics accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    })
}

async fn answer(mut stream: TcpStream, render: &RenderFn) -> std::io::Result<()> {
    let head = match tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await {
        Ok(head) => head?,
        Err(_) => return Ok(()),
    };
    let request_line = head.lines().next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let path = path.split('?').next().unwrap_or_default();
    let (code, body) = match (method, path) {
        ("GET", "/metrics") => ("200 OK", render()),
        ("GET", _) => ("404 Not Found", "only /metrics is served here\n".to_owned()),
        _ => ("405 Method Not Allowed", "GET /metrics\n".to_owned()),
    };
    let response = format!(
        "HTTP/1.1 {code}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// Reads up to the blank line that ends the request head.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 512];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Fetches `http://addr/metrics` (blocking) and returns the body of a 200 answer.
pub fn fetch(addr: SocketAddr, timeout: Duration) -> Result<String, DataplaneError> {
    let err = |e: std::io::Error| DataplaneError::Metrics { addr, source: e };
    let mut s = std::net::TcpStream::connect_timeout(&addr, timeout).map_err(err)?;
    s.set_read_timeout(Some(timeout)).map_err(err)?;
    s.set_write_timeout(Some(timeout)).map_err(err)?;
    s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes()).map_err(err)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(err)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) =
        text.split_once("\r\n\r\n").ok_or_else(|| DataplaneError::Status(format!("{addr}: answer is not HTTP")))?;
    let status_line = head.lines().next().unwrap_or_default();
    if status_line.split_whitespace().nth(1) != Some("200") {
        return Err(DataplaneError::Status(format!("{addr}: {status_line}")));
    }
    Ok(body.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_metrics_and_rejects_other_paths() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let status: StatusFn = Arc::new(|| DataplaneStatus { pid: 7, mode: "router".into(), ..Default::default() });
        let task = serve(listener, status);
        let body = tokio::task::spawn_blocking(move || fetch(addr, Duration::from_secs(5))).await.unwrap().unwrap();
        let st = DataplaneStatus::from_prometheus(&body).unwrap();
        assert_eq!((st.pid, st.mode.as_str()), (7, "router"));
        let other = tokio::task::spawn_blocking(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        })
        .await
        .unwrap();
        assert!(other.starts_with("HTTP/1.1 404"), "{other}");
        task.abort();
    }
}
