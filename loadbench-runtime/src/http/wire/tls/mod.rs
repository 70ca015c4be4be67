//! TLS for `https://` targets: the client configuration of a run, each virtual user's own session
//! cache, the handshake, and what a failed handshake means in plain words.
//!
//! rustls (on ring) rather than OpenSSL: no system library to match, the same behaviour on every
//! machine, and the CPU's AES and SHA instructions where a keep-alive connection spends its time.
//! Certificates are checked by default against the machine's own trust store, read once per run
//! with rustls-native-certs: it is what curl and wrk trust, it works offline, it honours
//! `SSL_CERT_FILE`, and it includes the private CAs an administrator installed. The alternatives
//! were webpki-roots (Mozilla's list compiled in: blind to a company's own CA, and stale with the
//! binary) and rustls-platform-verifier (the OS's own verifier: on Linux the same bundle through
//! more machinery, and elsewhere a call into the OS for every handshake, which a load tool that
//! makes thousands a second has no use for).

// Without the `tls` feature, `absent.rs` stands in for `client.rs`: its types have no values,
// so no handshake is ever reached, and a run that asks for TLS stops before any load.
#[cfg(feature = "tls")]
mod cause;
#[cfg(feature = "tls")]
mod client;
#[cfg(not(feature = "tls"))]
#[path = "absent.rs"]
mod client;
#[cfg(feature = "tls")]
mod insecure;

pub(crate) use client::{Config, ServerName, TlsClient};
#[cfg(feature = "tls")]
pub(crate) use client::{Session, handshake};

use std::path::PathBuf;
use std::time::Duration;

/// How connections to `https://` targets are made: whom to trust, and which certificate to show.
/// The default verifies the server's certificate against the machine's trust store, as a browser
/// does.
///
/// ```
/// use loadbench::http::TlsOptions;
/// let staging = TlsOptions::default().ca_file("certs/staging-ca.pem");
/// let mtls = TlsOptions::default().client_cert("client.pem", "client.key");
/// let local = TlsOptions::default().insecure(true); // self-signed, and said so in the report
/// # let _ = (staging, mtls, local);
/// ```
#[derive(Debug, Clone)]
pub struct TlsOptions {
    insecure: bool,
    ca_files: Vec<PathBuf>,
    client_cert: Option<(PathBuf, PathBuf)>,
    resumption: bool,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions { insecure: false, ca_files: Vec::new(), client_cert: None, resumption: true }
    }
}

impl TlsOptions {
    /// Skips the check of the server's certificate (`--insecure`): for a test server with a
    /// self-signed certificate. The handshake's signatures are still checked, so the cost per
    /// handshake stays that of a real client; reports say the certificate was not verified.
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Also trusts the CA certificates in this PEM file (`--cacert`), beside the machine's.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_files.push(path.into());
        self
    }

    /// Shows this client certificate chain (PEM) with its private key (PEM: PKCS#8, PKCS#1 or
    /// SEC1) to servers that ask for one (`--cert`, `--key`): mutual TLS.
    pub fn client_cert(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_cert = Some((cert.into(), key.into()));
        self
    }

    /// Whether a virtual user's new connection resumes its last session with a ticket instead of
    /// a full handshake, as a browser's does (default: yes). `--no-tls-resumption` turns it off,
    /// to measure full handshakes.
    pub fn resumption(mut self, resume: bool) -> Self {
        self.resumption = resume;
        self
    }

    /// Reads the files these options name (and the machine's trust store), as a run would, and
    /// says what is wrong with them: how `cargo loadbench` refuses a bad file before it builds
    /// and runs anything.
    pub fn check(&self) -> Result<(), TlsSetupError> {
        TlsClient::new(self).map(drop)
    }

    /// Whether any option differs from the default.
    pub(crate) fn is_default(&self) -> bool {
        !self.insecure && self.ca_files.is_empty() && self.client_cert.is_none() && self.resumption
    }

    /// What the report records of these options.
    pub(crate) fn summary(&self) -> crate::report::TlsConfigReport {
        crate::report::TlsConfigReport {
            insecure: self.insecure,
            cacert: self.ca_files.iter().map(|p| p.display().to_string()).collect(),
            client_cert: self.client_cert.as_ref().map(|(cert, _)| cert.display().to_string()),
            resumption: self.resumption,
        }
    }
}

/// Why the TLS configuration cannot be built: a file named on the command line.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A file could not be read or holds nothing usable.
    #[error("{what} `{path}`: {reason}")]
    File {
        /// What the file was given as (`--cacert`, `--cert`, `--key`).
        what: &'static str,
        /// The path given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The crypto provider cannot make a configuration (not expected with ring).
    #[error("TLS cannot be set up: {0}")]
    Provider(String),
    /// TLS was asked for (an `https://` target, or a TLS option) of a bench built without the
    /// runtime's `tls` feature.
    #[error(
        "TLS is not built into this bench: an https:// target and the TLS options need loadbench-runtime's \
         `tls` feature (`features = [\"tls\"]` on its line in Cargo.toml)"
    )]
    NotBuilt,
    /// The client certificate and key do not make a usable pair.
    #[error("--cert `{cert}` with --key `{key}`: {reason}")]
    ClientCert {
        /// The certificate's path.
        cert: String,
        /// The key's path.
        key: String,
        /// rustls' reason.
        reason: String,
    },
}

/// Why a handshake failed.
#[derive(Debug, Clone)]
pub(crate) struct Cause {
    /// The cause in plain words: what happened, short enough for a line of the table. What to do
    /// about it is the hint's, after the table, by [`Cause::certificate`].
    pub(crate) text: String,
    /// How the server's certificate failed verification, when it did.
    pub(crate) certificate: Option<Unverified>,
}

/// How a server's certificate failed verification: each answered by a different fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) enum Unverified {
    /// Not valid for the host name the target names: the right name, with `--connect-to` to reach
    /// this server under it.
    WrongName,
    /// Self-signed and marked as a CA, which is never accepted as a server's own certificate,
    /// even trusted with `--cacert`: `--insecure`, or a certificate issued by a CA.
    CaAsServer,
    /// Any other reason (an unknown issuer, expired, revoked): `--cacert` or `--insecure`.
    Other,
}

/// A completed handshake, for the report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Handshake {
    pub(crate) elapsed: Duration,
    pub(crate) resumed: bool,
    /// TLS 1.3 (else 1.2).
    pub(crate) tls13: bool,
}

#[cfg(all(test, feature = "tls"))]
mod tests;
