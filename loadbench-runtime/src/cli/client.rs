//! The flags that say how connections are made, shared by a bench binary, `cargo loadbench` (which
//! passes them on to its bench binaries) and `cargo loadbench url`: one grammar, so the three
//! cannot drift apart. Named as curl names them, since that is what users type.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::http::{ClientOptions, ConnectTo};

/// Where `--help` lists these flags.
const HEADING: &str = "TLS and connections";

/// TLS, address and redirect flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientArgs {
    /// Skip verification of the server's TLS certificate (a self-signed test server); the results
    /// say so
    #[arg(long, short = 'k', global = true, help_heading = HEADING)]
    pub insecure: bool,
    /// Also trust the CA certificates in this PEM file (a private CA), beside the machine's
    #[arg(long, value_name = "FILE", global = true, help_heading = HEADING)]
    pub cacert: Vec<PathBuf>,
    /// Client certificate chain (PEM) for servers that ask for one (mutual TLS); needs --key
    #[arg(long, value_name = "FILE", requires = "key", global = true, help_heading = HEADING)]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert
    #[arg(long, value_name = "FILE", requires = "cert", global = true, help_heading = HEADING)]
    pub key: Option<PathBuf>,
    /// Connect to ADDR:PORT for requests to HOST:PORT, keeping HOST as the name sent and the
    /// certificate name checked (curl's --connect-to; HOST or PORT empty matches any)
    #[arg(long, value_name = "HOST:PORT:ADDR:PORT", global = true, help_heading = HEADING)]
    pub connect_to: Vec<ConnectTo>,
    /// Make a full TLS handshake on every new connection instead of resuming the virtual user's
    /// session
    #[arg(long, global = true, help_heading = HEADING)]
    pub no_tls_resumption: bool,
    /// Follow up to N redirects within the target's origin on every request, over each
    /// scenario's `follow_redirects` (default: none, so that a request is one exchange and its
    /// latency the server's)
    #[arg(long, value_name = "N", global = true, help_heading = HEADING)]
    pub follow_redirects: Option<u32>,
    /// Share N connections among the virtual users instead of one each (over every scenario's
    /// `connections`): HTTP/2 or HTTP/3 streams or pipelined HTTP/1.1 requests on each
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), global = true, help_heading = HEADING)]
    pub connections: Option<u32>,
    /// HTTP/1.1: send up to D requests on a shared connection before their responses (needs
    /// --connections; TechEmpower's plaintext test pipelines 16)
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["http2", "http3"], global = true, help_heading = HEADING)]
    pub pipeline: Option<u32>,
    /// Speak HTTP/2: with prior knowledge on http://, offered first by ALPN on https://
    #[arg(long, global = true, help_heading = HEADING)]
    pub http2: bool,
    /// Speak HTTP/3 over QUIC (https:// targets only)
    #[arg(long, conflicts_with = "http2", global = true, help_heading = HEADING)]
    pub http3: bool,
}

impl ClientArgs {
    /// Applies the flags given to `options`, over what the program set.
    pub fn apply(&self, mut options: ClientOptions) -> ClientOptions {
        let mut tls = options.tls;
        if self.insecure {
            tls = tls.insecure(true);
        }
        for file in &self.cacert {
            tls = tls.ca_file(file);
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            tls = tls.client_cert(cert, key);
        }
        if self.no_tls_resumption {
            tls = tls.resumption(false);
        }
        options.tls = tls;
        options.connect_to.extend(self.connect_to.iter().cloned());
        if self.follow_redirects.is_some() {
            options.follow_redirects = self.follow_redirects;
        }
        if self.connections.is_some() {
            options.connections = self.connections;
        }
        if self.pipeline.is_some() {
            options.pipeline = self.pipeline;
        }
        options.http2 |= self.http2;
        options.http3 |= self.http3;
        options
    }

    /// The same flags with every file made absolute against the current directory: a bench binary
    /// runs in its package's directory, where a relative path would name another file.
    pub fn absolute(&self) -> ClientArgs {
        let absolute = |path: &PathBuf| std::path::absolute(path).unwrap_or_else(|_| path.clone());
        ClientArgs {
            cacert: self.cacert.iter().map(absolute).collect(),
            cert: self.cert.as_ref().map(absolute),
            key: self.key.as_ref().map(absolute),
            ..self.clone()
        }
    }

    /// The flags again, as a bench binary takes them: how `cargo loadbench` passes them on.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut flag = |name: &str, value: Option<OsString>| {
            args.push(name.into());
            args.extend(value);
        };
        if self.insecure {
            flag("--insecure", None);
        }
        for file in &self.cacert {
            flag("--cacert", Some(file.into()));
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            flag("--cert", Some(cert.into()));
            flag("--key", Some(key.into()));
        }
        for rule in &self.connect_to {
            flag("--connect-to", Some(rule.to_string().into()));
        }
        if self.no_tls_resumption {
            flag("--no-tls-resumption", None);
        }
        if let Some(hops) = self.follow_redirects {
            flag("--follow-redirects", Some(hops.to_string().into()));
        }
        if let Some(n) = self.connections {
            flag("--connections", Some(n.to_string().into()));
        }
        if let Some(depth) = self.pipeline {
            flag("--pipeline", Some(depth.to_string().into()));
        }
        if self.http2 {
            flag("--http2", None);
        }
        if self.http3 {
            flag("--http3", None);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        client: ClientArgs,
    }

    #[test]
    fn flags_read_back_from_what_they_pass_on() {
        let given = [
            "x",
            "-k",
            "--cacert",
            "a.pem",
            "--cacert",
            "b.pem",
            "--cert",
            "c.pem",
            "--key",
            "c.key",
            "--connect-to",
            "h:443:127.0.0.1:8443",
            "--no-tls-resumption",
            "--follow-redirects",
            "3",
            "--connections",
            "16",
            "--pipeline",
            "16",
        ];
        let first = Cli::try_parse_from(given).unwrap().client;
        let again = Cli::try_parse_from(std::iter::once(OsString::from("x")).chain(first.to_args())).unwrap().client;
        assert_eq!(format!("{first:?}"), format!("{again:?}"));
        assert!(Cli::try_parse_from(["x", "--cert", "c.pem"]).is_err(), "--cert needs --key");
        assert!(Cli::try_parse_from(["x", "--connect-to", "h:443"]).is_err());
        let h2 = Cli::try_parse_from(["x", "--http2", "--connections", "10"]).unwrap().client;
        assert!(h2.to_args().contains(&OsString::from("--http2")));
        assert!(Cli::try_parse_from(["x", "--http2", "--pipeline", "4"]).is_err(), "pipelining is HTTP/1.1's");
        let h3 = Cli::try_parse_from(["x", "--http3", "--connections", "10"]).unwrap().client;
        assert!(h3.to_args().contains(&OsString::from("--http3")));
        let again = Cli::try_parse_from(std::iter::once(OsString::from("x")).chain(h3.to_args())).unwrap().client;
        assert_eq!(format!("{h3:?}"), format!("{again:?}"));
        let transport = h3.apply(ClientOptions::default()).transport(crate::config::Transport::DEFAULT);
        assert_eq!(
            transport,
            crate::config::Transport {
                connections: Some(10),
                pipeline: None,
                protocol: crate::config::Protocol::Http3
            }
        );
        let refused = |argv: &[&str]| Cli::try_parse_from(argv).map(|cli| format!("{cli:?}")).unwrap_err().to_string();
        let pipelined = refused(&["x", "--connections", "4", "--pipeline", "4", "--http3"]);
        assert!(pipelined.contains("'--pipeline <D>' cannot be used with '--http3'"), "{pipelined}");
        let pipelined = refused(&["x", "--connections", "4", "--pipeline", "4", "--http2"]);
        assert!(pipelined.contains("'--pipeline <D>' cannot be used with '--http2'"), "{pipelined}");
        let both = refused(&["x", "--http2", "--http3"]);
        assert!(both.contains("'--http2' cannot be used with '--http3'"), "{both}");
        assert!(Cli::try_parse_from(["x", "--connections", "0"]).is_err());
        let options = first.apply(ClientOptions::default());
        let transport = options.transport(crate::config::Transport::DEFAULT);
        assert_eq!(
            transport,
            crate::config::Transport {
                connections: Some(16),
                pipeline: Some(16),
                protocol: crate::config::Protocol::Http1
            }
        );
    }
}
