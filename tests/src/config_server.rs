//! A config server for tests (ODP `obproxy_config_server_url`, docs/routing.md §14): a real HTTP/1.1
//! server on 127.0.0.1 that answers each path with what the test set (JSON, an HTTP error, a
//! non-JSON body, or a closed connection) and counts the requests per path. It runs on its own
//! thread and runtime, so it outlives the runtime of any one `#[tokio::test]`; dropping it stops it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What a path answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `200 OK` with this JSON body.
    Json(String),
    /// This HTTP status with an empty body.
    Status(u16),
    /// `200 OK` with a body that is not JSON.
    Garbage,
    /// The connection is closed without an answer.
    Close,
}

#[derive(Default)]
struct State {
    answers: HashMap<String, Answer>,
    counts: HashMap<String, usize>,
}

/// The running config server.
pub struct ConfigServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ConfigServer {
    /// Starts on a free loopback port; every path answers 404 until [`ConfigServer::set`].
    pub fn start() -> anyhow::Result<ConfigServer> {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let st = Arc::clone(&state);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let thread = std::thread::spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else { return };
                tokio::select! {
                    _ = serve(listener, st) => {}
                    _ = stopped => {}
                }
            })
        });
        Ok(ConfigServer { addr, state, stop: Some(stop), thread: Some(thread) })
    }

    /// `http://127.0.0.1:port{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Sets what `path` answers.
    pub fn set(&self, path: &str, answer: Answer) {
        self.state.lock().unwrap().answers.insert(path.to_string(), answer);
    }

    /// Requests received for `path` so far.
    pub fn count(&self, path: &str) -> usize {
        self.state.lock().unwrap().counts.get(path).copied().unwrap_or(0)
    }
}

impl Drop for ConfigServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(listener: tokio::net::TcpListener, state: Arc<Mutex<State>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let st = Arc::clone(&state);
        tokio::spawn(async move {
            let _ = answer(stream, st).await;
        });
    }
}

/// Reads one request head and answers it (`Connection: close`).
async fn answer(mut stream: tokio::net::TcpStream, state: Arc<Mutex<State>>) -> anyhow::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        anyhow::ensure!(n > 0, "request cut short");
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split_whitespace().nth(1).context("no request path")?.to_string();
    let answer = {
        let mut st = state.lock().unwrap();
        *st.counts.entry(path.clone()).or_default() += 1;
        st.answers.get(&path).cloned().unwrap_or(Answer::Status(404))
    };
    let (status, body) = match answer {
        Answer::Json(body) => (200, body),
        Answer::Status(code) => (code, String::new()),
        Answer::Garbage => (200, "<html><body>maintenance</body></html>".to_string()),
        Answer::Close => return Ok(()),
    };
    let reply = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(())
}

/// ODP's cluster entry JSON: `Data.RsList` with each server's SQL port.
pub fn cluster_json(name: &str, rslist: &[SocketAddr]) -> String {
    let rs: Vec<String> = rslist
        .iter()
        .map(|a| format!(r#"{{"address":"{}:2882","role":"LEADER","sql_port":{}}}"#, a.ip(), a.port()))
        .collect();
    format!(
        r#"{{"Message":"successful","Success":true,"Code":200,"Data":{{"ObRegion":"{name}","ObRegionId":1,"type":"leader","RsList":[{}],"ReadonlyRsList":[]}}}}"#,
        rs.join(",")
    )
}

/// ODP's cluster list JSON: `Data.ObRootServiceInfoUrlList` of `(ObRegion, URL)`.
pub fn list_json(clusters: &[(&str, String)]) -> String {
    let entries: Vec<String> = clusters
        .iter()
        .map(|(name, url)| format!(r#"{{"ObRegion":"{name}","ObRootServiceInfoUrl":"{url}"}}"#))
        .collect();
    format!(
        r#"{{"Message":"successful","Success":true,"Code":200,"Data":{{"ObRootServiceInfoUrlList":[{}]}}}}"#,
        entries.join(",")
    )
}
