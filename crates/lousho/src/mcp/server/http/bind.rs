//! Binding the HTTP listener with a listen backlog sized for bursts.
//!
//! `TcpListener::bind` (std, mio, tokio) asks the kernel for a backlog of
//! 128 connections. A burst of 1000 clients connecting at once overflows
//! it: the kernel drops their handshakes, and they connect only after the
//! SYN is retransmitted 1 s and 3 s later (or get reset when SYN cookies
//! fail) — one slow or failed first call in every eight. The backlog asked
//! for here is [`listen_backlog`]; the kernel caps it at
//! `net.core.somaxconn` (4096 by default on Linux).

use super::super::error::ServeError;
use std::io;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpSocket};

/// The smallest listen backlog asked for.
const MIN_BACKLOG: usize = 1024;
/// The largest listen backlog asked for (`listen` takes an `int`; Linux
/// caps it at `net.core.somaxconn` anyway).
const MAX_BACKLOG: usize = 65_535;

/// How many connections the kernel may hold for us before we accept them:
/// as many as we serve at once, 1024 to 65,535.
pub(super) fn listen_backlog(max_connections: usize) -> u32 {
    let backlog = max_connections.clamp(MIN_BACKLOG, MAX_BACKLOG);
    u32::try_from(backlog).unwrap_or(u32::from(u16::MAX))
}

/// Binds `host:port` (a name is resolved; the first address that binds
/// wins) with a backlog of `backlog`.
pub(super) async fn bind(addr: String, backlog: u32) -> Result<TcpListener, ServeError> {
    let resolved = tokio::net::lookup_host(addr.as_str())
        .await
        .map(Iterator::collect::<Vec<_>>);
    let resolved = match resolved {
        Ok(resolved) => resolved,
        Err(source) => return Err(ServeError::Bind { addr, source }),
    };
    let mut last = io::Error::new(io::ErrorKind::AddrNotAvailable, "the host has no address");
    for socket_addr in resolved {
        match bind_one(socket_addr, backlog) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = e,
        }
    }
    Err(ServeError::Bind { addr, source: last })
}

fn bind_one(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    // As std and mio do: a restarted server can bind again at once.
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_follows_the_connection_cap_within_bounds() {
        assert_eq!(listen_backlog(16), 1024);
        assert_eq!(listen_backlog(15_000), 15_000);
        assert_eq!(listen_backlog(1_000_000), 65_535);
    }

    #[tokio::test]
    async fn a_name_binds_with_the_backlog() {
        let listener = bind("localhost:0".to_owned(), 2048).await.unwrap();
        assert!(listener.local_addr().unwrap().ip().is_loopback());
        let err = bind("no-such-host.invalid:0".to_owned(), 2048)
            .await
            .unwrap_err();
        assert!(matches!(err, ServeError::Bind { .. }), "{err}");
    }
}
