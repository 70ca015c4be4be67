//! The TLS client when the runtime is built without its `tls` feature: none can be made. These
//! types have no values, so every path that would open a TLS session is unreachable, and a run
//! that asks for TLS (an `https://` target, or a TLS option) stops before any load with
//! [`TlsSetupError::NotBuilt`].

use std::io;

use super::{Cause, TlsOptions, TlsSetupError};

/// A user's or a shared connection's client configuration: none exists.
#[derive(Debug, Clone)]
pub(crate) enum Config {}

/// A server's TLS name: none exists.
#[derive(Debug, Clone)]
pub(crate) enum ServerName {}

/// The run's TLS client: none can be made.
#[derive(Debug)]
pub(crate) enum TlsClient {}

impl TlsClient {
    /// Refuses: TLS is not built in.
    pub(crate) fn new(_options: &TlsOptions) -> Result<TlsClient, TlsSetupError> {
        Err(TlsSetupError::NotBuilt)
    }

    pub(crate) fn for_user(&self) -> Config {
        match *self {}
    }

    pub(crate) fn for_lane(&self, _protocol: crate::config::Protocol) -> Config {
        match *self {}
    }

    pub(crate) fn server_name(&self, _host: &str) -> Result<ServerName, String> {
        match *self {}
    }
}

impl Cause {
    /// No TLS session exists whose failure an I/O error could carry.
    pub(crate) fn of_session(_err: &io::Error) -> Option<Cause> {
        None
    }
}
