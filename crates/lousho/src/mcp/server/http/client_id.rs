//! Who a request counts against for the per-client shares of the call
//! limits ([`super::admission`]): the peer's IP address, unless a layer in
//! front of the screen knows better.
//!
//! This is the seam for authentication: a layer that knows the caller (the
//! subject of an OAuth access token, say) inserts a [`ClientId::Caller`]
//! into the request's extensions before the screen runs, and the shares are
//! then per caller. Behind a reverse proxy, where every request comes from
//! the proxy's address, that is what keeps one caller from taking every
//! slot.

use super::listen::ClientAddr;
use axum::extract::Request;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// Who a request counts against for the per-client shares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientId {
    /// The peer's IP address (the default).
    Address(IpAddr),
    /// A caller an authentication layer vouched for (its stable id: the
    /// OAuth token's issuer and subject, see `http/oauth`).
    Caller(Arc<str>),
}

impl ClientId {
    /// A stable name of the client, for the per-caller limits
    /// (`ip:<address>` or `caller:<issuer>#<subject>`).
    pub(crate) fn name(&self) -> String {
        match self {
            ClientId::Address(ip) => format!("ip:{ip}"),
            ClientId::Caller(key) => format!("caller:{key}"),
        }
    }

    /// The id a layer put in `req`'s extensions, else the peer's address.
    pub(crate) fn of(req: &Request) -> ClientId {
        if let Some(id) = req.extensions().get::<ClientId>() {
            return id.clone();
        }
        let addr = req
            .extensions()
            .get::<ClientAddr>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.0);
        ClientId::Address(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_named_by_a_layer_wins_over_the_address() {
        let ip = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
        let mut req = Request::new(axum::body::Body::empty());
        req.extensions_mut().insert(ClientAddr(ip));
        assert_eq!(ClientId::of(&req), ClientId::Address(ip));
        req.extensions_mut()
            .insert(ClientId::Caller("https://issuer.example#alice".into()));
        assert_eq!(
            ClientId::of(&req),
            ClientId::Caller("https://issuer.example#alice".into())
        );
    }
}
