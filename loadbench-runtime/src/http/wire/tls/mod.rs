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

mod cause;
mod insecure;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, HandshakeKind, ProtocolVersion, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

pub(crate) use cause::{Cause, Unverified};

/// Sessions each virtual user keeps for resumption: one server, and a spare ticket (TLS 1.3
/// servers usually send two, each good for one resumption).
const SESSIONS_PER_USER: usize = 4;

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

/// The TLS client of a run: one configuration, shared by every worker, from which each virtual
/// user takes its own copy with its own session cache.
#[derive(Debug)]
pub(crate) struct TlsClient {
    config: Arc<ClientConfig>,
    resumption: bool,
}

impl TlsClient {
    /// Reads the trust store and the files `options` name. Costs a few milliseconds (the
    /// machine's CA bundle is parsed), so it is done once per run, before any load.
    pub(crate) fn new(options: &TlsOptions) -> Result<TlsClient, TlsSetupError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError::Provider(e.to_string()))?;
        let builder = if options.insecure {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(insecure::AnyCertificate::new(provider)))
        } else {
            builder.with_root_certificates(roots(&options.ca_files)?)
        };
        let mut config = match &options.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = read_certs("--cert", cert)?;
                let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsSetupError::File {
                    what: "--key",
                    path: key.display().to_string(),
                    reason: pem_reason(&e, "private key"),
                })?;
                builder.with_client_auth_cert(chain, key_der).map_err(|e| TlsSetupError::ClientCert {
                    cert: cert.display().to_string(),
                    key: key.display().to_string(),
                    reason: match e {
                        rustls::Error::InconsistentKeys(_) => "the key is not the certificate's".to_owned(),
                        other => other.to_string(),
                    },
                })?
            }
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsClient { config: Arc::new(config), resumption: options.resumption })
    }

    /// A virtual user's own configuration: the run's configuration with a session cache of the
    /// user's own, so that its reconnects resume its own session, as a browser's do, and users
    /// never compete for each other's tickets.
    pub(crate) fn for_user(&self) -> Arc<ClientConfig> {
        Arc::new(self.own_copy())
    }

    /// A shared connection's configuration (one lane's): a copy with a session cache of its
    /// own, as a user's, whose ALPN offers `h2` before `http/1.1` when `protocol` is HTTP/2, so
    /// that a server that speaks both picks HTTP/2 and one that does not still answers.
    pub(crate) fn for_lane(&self, protocol: crate::config::Protocol) -> Arc<ClientConfig> {
        let mut config = self.own_copy();
        if protocol.is_http2() {
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        }
        Arc::new(config)
    }

    fn own_copy(&self) -> ClientConfig {
        let mut config = ClientConfig::clone(&self.config);
        config.resumption =
            if self.resumption { Resumption::in_memory_sessions(SESSIONS_PER_USER) } else { Resumption::disabled() };
        config
    }
}

/// The machine's trust store and the `--cacert` files.
fn roots(ca_files: &[PathBuf]) -> Result<RootCertStore, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    // Unreadable entries of the system bundle are skipped, as curl skips them; a machine with
    // none at all fails each handshake with "unknown issuer", whose hint names --cacert.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for path in ca_files {
        let certs = read_certs("--cacert", path)?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(TlsSetupError::File {
                what: "--cacert",
                path: path.display().to_string(),
                reason: "holds no usable CA certificate".to_owned(),
            });
        }
    }
    Ok(roots)
}

/// Every certificate of a PEM file, at least one.
fn read_certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let file_error = |reason: String| TlsSetupError::File { what, path: path.display().to_string(), reason };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(pem_reason(&e, "certificate")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(pem_reason(&e, "certificate")))?;
    if certs.is_empty() {
        return Err(file_error("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned()));
    }
    Ok(certs)
}

/// A PEM reading error in a user's words.
fn pem_reason(err: &rustls::pki_types::pem::Error, what: &str) -> String {
    use rustls::pki_types::pem::Error as Pem;
    match err {
        Pem::Io(io) => io.to_string(),
        Pem::NoItemsFound => format!("holds no PEM {what}"),
        other => format!("is not a valid PEM file: {other:?}"),
    }
}

/// A completed handshake, for the report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Handshake {
    pub(crate) elapsed: Duration,
    pub(crate) resumed: bool,
    /// TLS 1.3 (else 1.2).
    pub(crate) tls13: bool,
}

/// Makes the TLS handshake on `tcp` with `name`'s SNI and certificate name.
pub(crate) async fn handshake(
    config: &Arc<ClientConfig>,
    name: &ServerName<'static>,
    tcp: TcpStream,
) -> Result<(TlsStream<TcpStream>, Handshake), Cause> {
    let start = Instant::now();
    let connector = TlsConnector::from(Arc::clone(config));
    let stream = connector.connect(name.clone(), tcp).await.map_err(|e| Cause::of(&e))?;
    let (_, session) = stream.get_ref();
    let handshake = Handshake {
        elapsed: start.elapsed(),
        resumed: session.handshake_kind() == Some(HandshakeKind::Resumed),
        tls13: session.protocol_version() == Some(ProtocolVersion::TLSv1_3),
    };
    Ok((stream, handshake))
}

#[cfg(test)]
mod tests;
