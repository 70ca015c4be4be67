//! The TLS client of a run on rustls: the trust store and the files the options name read once,
//! each user's and each shared connection's copy with a session cache of its own, the handshake.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, HandshakeKind, ProtocolVersion, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::{Cause, Handshake, TlsOptions, TlsSetupError, insecure};

/// A user's or a shared connection's client configuration.
pub(crate) type Config = Arc<ClientConfig>;

/// The server's name, for SNI and the certificate check.
pub(crate) type ServerName = rustls::pki_types::ServerName<'static>;

/// An open TLS session over its TCP connection.
pub(crate) type Session = tokio_rustls::client::TlsStream<TcpStream>;

/// Sessions each virtual user keeps for resumption: one server, and a spare ticket (TLS 1.3
/// servers usually send two, each good for one resumption).
const SESSIONS_PER_USER: usize = 4;

/// The TLS client of a run: one configuration, shared by every worker, from which each virtual
/// user takes its own copy with its own session cache.
#[derive(Debug)]
pub(crate) struct TlsClient {
    config: Config,
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
    pub(crate) fn for_user(&self) -> Config {
        Arc::new(self.own_copy())
    }

    /// A shared connection's configuration (one lane's): a copy with a session cache of its
    /// own, as a user's, whose ALPN offers `h2` before `http/1.1` when `protocol` is HTTP/2, so
    /// that a server that speaks both picks HTTP/2 and one that does not still answers. For
    /// HTTP/3 it offers `h3` alone and allows 0-RTT early data when sessions are resumed: a
    /// reconnect's first requests then go out with its first packet, if the server's ticket
    /// allows it (the report counts them apart).
    pub(crate) fn for_lane(&self, protocol: crate::config::Protocol) -> Config {
        let mut config = self.own_copy();
        match protocol {
            crate::config::Protocol::Http1 => {}
            crate::config::Protocol::Http2 => config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            crate::config::Protocol::Http3 => {
                config.alpn_protocols = vec![b"h3".to_vec()];
                config.enable_early_data = self.resumption;
            }
        }
        Arc::new(config)
    }

    /// `host` (bare, without an IPv6 address's brackets) as the server's name, or why it cannot
    /// be one.
    pub(crate) fn server_name(&self, host: &str) -> Result<ServerName, String> {
        ServerName::try_from(host.to_owned()).map_err(|e| e.to_string())
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

/// Makes the TLS handshake on `tcp` with `name`'s SNI and certificate name.
pub(crate) async fn handshake(
    config: &Config,
    name: &ServerName,
    tcp: TcpStream,
) -> Result<(Session, Handshake), Cause> {
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
