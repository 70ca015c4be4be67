//! What a failed handshake means, in the words of someone reading a load test's results rather
//! than rustls' enum names: each cause a user can act on has its own sentence.

use rustls::{AlertDescription, CertificateError, Error as Tls, PeerIncompatible};

use super::{Cause, Unverified};

impl Cause {
    /// The cause of a failed `TlsConnector::connect`, which reports rustls' errors inside an
    /// `io::Error`.
    pub(crate) fn of(err: &std::io::Error) -> Cause {
        match err.get_ref().and_then(|inner| inner.downcast_ref::<Tls>()) {
            Some(tls) => Cause::of_tls(tls),
            None => Cause::plain(match err.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    "the server closed the connection during the handshake (is it a TLS server?)".to_owned()
                }
                _ => format!("the connection failed during the handshake: {err}"),
            }),
        }
    }

    /// The cause of a failed read or write on a TLS connection, when the session (not the
    /// socket) failed: an alert the server sent after the handshake, such as a TLS 1.3 server's
    /// refusal of the client's certificate.
    pub(crate) fn of_session(err: &std::io::Error) -> Option<Cause> {
        let tls = err.get_ref()?.downcast_ref::<Tls>()?;
        Some(Cause::of_tls(tls))
    }

    fn plain(text: String) -> Cause {
        Cause { text, certificate: None }
    }

    fn of_tls(err: &Tls) -> Cause {
        let text = match err {
            Tls::InvalidCertificate(cert) => {
                return Cause { text: certificate(cert), certificate: Some(unverified(cert)) };
            }
            Tls::NoCertificatesPresented => "the server presented no certificate".to_owned(),
            Tls::AlertReceived(alert) => received(*alert),
            Tls::PeerIncompatible(why) => incompatible(why),
            Tls::InvalidMessage(_) => {
                "the server's answer is not TLS (is it a plain http:// server on this port?)".to_owned()
            }
            other => other.to_string(),
        };
        Cause::plain(text)
    }
}

/// Which fix a certificate's failure calls for.
fn unverified(err: &CertificateError) -> Unverified {
    match err {
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => Unverified::WrongName,
        CertificateError::Other(other) if ca_used_as_end_entity(other) => Unverified::CaAsServer,
        _ => Unverified::Other,
    }
}

/// webpki's `CaUsedAsEndEntity`, which rustls passes on only as an opaque error.
fn ca_used_as_end_entity(other: &rustls::OtherError) -> bool {
    format!("{other:?}").contains("CaUsedAsEndEntity")
}

/// The server's certificate failed verification.
fn certificate(err: &CertificateError) -> String {
    use CertificateError as C;
    match err {
        C::UnknownIssuer => {
            "the server's certificate was issued by an unknown issuer (a private CA, or self-signed)".to_owned()
        }
        C::ExpiredContext { not_after, .. } => {
            format!("the server's certificate expired (valid until {})", unix_time(not_after.as_secs()))
        }
        C::Expired => "the server's certificate expired".to_owned(),
        C::NotValidYet | C::NotValidYetContext { .. } => "the server's certificate is not valid yet".to_owned(),
        C::NotValidForName => "the server's certificate is not valid for the target's host name".to_owned(),
        C::NotValidForNameContext { expected, presented } => {
            // rustls writes them as `DnsName("a.example")` and `IpAddress(127.0.0.1)`.
            let bare = |name: &String| {
                let inner = name.split_once('(').map_or(name.as_str(), |(_, rest)| rest.trim_end_matches(')'));
                inner.trim_matches('"').to_owned()
            };
            let names = if presented.is_empty() {
                "none".to_owned()
            } else {
                presented.iter().map(bare).collect::<Vec<_>>().join(", ")
            };
            format!("the server's certificate is not valid for `{}` (it names: {names})", expected.to_str())
        }
        C::Revoked => "the server's certificate is revoked".to_owned(),
        C::BadSignature => "the server's certificate has a bad signature".to_owned(),
        C::BadEncoding => "the server's certificate is malformed".to_owned(),
        C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            // webpki found a trusted certificate with the issuer's name but another kind of
            // key: the server's certificate was not issued by it.
            "the server's certificate was issued by an unknown issuer (a trusted CA has its issuer's name, \
             but did not sign it: a self-signed certificate?)"
                .to_owned()
        }
        C::Other(other) if ca_used_as_end_entity(other) => {
            "the server's certificate is self-signed and marked as a CA, which is never a server's own".to_owned()
        }
        other => format!("the server's certificate was refused: {other:?}"),
    }
}

/// The server ended the handshake with `alert`.
fn received(alert: AlertDescription) -> String {
    use AlertDescription as A;
    match alert {
        A::ProtocolVersion => "no TLS version in common with the server (we offer 1.2 and 1.3)".to_owned(),
        A::HandshakeFailure => {
            "the server refused the handshake (no cipher suite, group or signature scheme in common)".to_owned()
        }
        A::CertificateRequired => {
            "the server requires a client certificate (give one with --cert and --key)".to_owned()
        }
        A::BadCertificate | A::UnknownCA | A::CertificateUnknown | A::AccessDenied | A::UnsupportedCertificate => {
            format!("the server rejected the client certificate ({alert:?} alert)")
        }
        A::CertificateExpired => "the server rejected the client certificate: it has expired".to_owned(),
        A::UnrecognisedName => "the server does not serve this host name (unrecognised_name alert)".to_owned(),
        A::NoApplicationProtocol => {
            "the server speaks no protocol we offer by ALPN (http/1.1, and h2 with --http2)".to_owned()
        }
        other => format!("the server ended the handshake with a {other:?} alert"),
    }
}

/// What we and the server could not agree on.
fn incompatible(why: &PeerIncompatible) -> String {
    use PeerIncompatible as P;
    match why {
        P::ServerDoesNotSupportTls12Or13 | P::SupportedVersionsExtensionRequired => {
            "no TLS version in common with the server (we offer 1.2 and 1.3)".to_owned()
        }
        P::NoCipherSuitesInCommon => "no cipher suite in common with the server".to_owned(),
        P::NoKxGroupsInCommon => "no key exchange group in common with the server".to_owned(),
        P::NoSignatureSchemesInCommon => "no signature scheme in common with the server".to_owned(),
        other => format!("the server's handshake is incompatible: {other:?}"),
    }
}

/// Seconds since the Unix epoch, as an RFC 3339 date.
fn unix_time(secs: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(time).to_string()
}
