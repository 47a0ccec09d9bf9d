//! The wait for the next command: a kill wins over a command ready at the same moment, a
//! command over the session's own end. Each case runs many times: `select!` without a fixed
//! order would pick at random.

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::*;
use crate::config::testing;

/// The gateway's end of a loopback connection whose client has sent a COM_QUERY (`sent`), and
/// the client's end (kept open).
async fn connection(sent: bool) -> (Wire<Stream>, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    if sent {
        let payload = b"\x03SELECT 1";
        let mut packet = vec![payload.len() as u8, 0, 0, 0];
        packet.extend_from_slice(payload);
        client.write_all(&packet).await.unwrap();
        server.readable().await.unwrap();
    }
    (Wire::new(Stream::Plain(server)), client)
}

async fn wait(sent: bool, killed: bool, ended: bool) -> Waited<()> {
    let shared = Shared::new(testing::config(&testing::user("app")), None);
    let (mut wire, _client) = connection(sent).await;
    let switch = crate::session::kill_switch::KillSwitch::new();
    if killed {
        switch.fire();
    }
    let mut kill: KillSignal = Some(switch);
    let mut front = ClientSide {
        wire: &mut wire,
        id: 1,
        peer: "127.0.0.1:1".parse().unwrap(),
        dialled: None,
        caps: 0,
        ext: 0,
        salt: Vec::new(),
        stop: crate::session::kill_switch::KillSwitch::new(),
        config: crate::live_config::ConfigCopy::of(&shared.live),
    };
    let end = async move {
        if !ended {
            std::future::pending::<()>().await;
        }
    };
    let waited = front.next_command(&shared, &mut kill, end).await.unwrap();
    waited
}

#[tokio::test]
async fn a_kill_wins_over_a_command_sent_after_it() {
    for _ in 0..32 {
        assert!(matches!(wait(true, true, false).await, Waited::Killed));
    }
}

#[tokio::test]
async fn a_command_wins_over_the_sessions_end() {
    for _ in 0..32 {
        assert!(matches!(wait(true, false, true).await, Waited::Command(c) if c.payload[..] == b"\x03SELECT 1"[..]));
    }
}

#[tokio::test]
async fn an_idle_client_waits_for_the_end() {
    assert!(matches!(wait(false, false, true).await, Waited::Ended(())));
}
