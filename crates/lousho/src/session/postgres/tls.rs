//! TLS to PostgreSQL (rustls, as the rest of lousho), as the connection
//! string asks with libpq's `sslmode` and `sslrootcert`.
//!
//! - No `sslmode`, or `disable`: no TLS (as a local socket or a private
//!   network wants).
//! - `prefer`, `require`, `verify-ca`, `verify-full`: TLS, and the server's
//!   certificate is always verified, host name included (what libpq calls
//!   `verify-full`: a certificate nobody checks protects against nobody).
//!   `prefer` still connects without TLS to a server that offers none.
//! - `sslrootcert=FILE` (PEM): the certificate authorities to trust instead
//!   of the system's (a managed database's own CA, say).

use super::{BACKEND, db};
use crate::session::StoreError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_postgres::Config;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Why TLS to the database could not be set up.
#[derive(Debug, thiserror::Error)]
pub(super) enum TlsSetupError {
    /// The `sslrootcert` file could not be read or holds no certificate.
    #[error(
        "sslrootcert {path:?}: {reason}; give it a PEM file with the certificate authority that signed the database server's certificate"
    )]
    RootCertificate { path: PathBuf, reason: String },
    /// rustls refused the setup.
    #[error("setting up TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The server's certificate did not verify.
    #[error(
        "the database server's certificate was refused ({reason}): if a private certificate authority signed it, give its PEM file as sslrootcert=FILE in the connection string (sslmode=disable turns TLS off)"
    )]
    CertificateRefused {
        reason: rustls::CertificateError,
        #[source]
        source: tokio_postgres::Error,
    },
}

/// `e` as the refused certificate it is, if rustls refused the server's
/// certificate; else `e` as it came.
pub(super) fn explain(e: tokio_postgres::Error) -> StoreError {
    let reason = crate::error_chain::sources(&e).find_map(|inner| {
        match inner.downcast_ref::<rustls::Error>() {
            Some(rustls::Error::InvalidCertificate(reason)) => Some(reason.clone()),
            _ => None,
        }
    });
    match reason {
        Some(reason) => StoreError::backend(
            BACKEND,
            TlsSetupError::CertificateRefused { reason, source: e },
        ),
        None => db(e),
    }
}

/// `conn` parsed, with the TLS it asks for.
pub(super) fn parse(conn: &str) -> Result<(Config, MakeRustlsConnect), StoreError> {
    let asked = Asked::read(conn);
    let mut config: Config = asked.rest.parse().map_err(db)?;
    if !asked.sslmode {
        config.ssl_mode(SslMode::Disable);
    }
    let tls = connector(asked.root_certificate).map_err(|e| StoreError::backend(BACKEND, e))?;
    Ok((config, tls))
}

/// What lousho reads of a connection string itself (tokio-postgres knows
/// neither `sslrootcert` nor the `verify-*` modes), and the rest for
/// tokio-postgres.
#[derive(Debug, PartialEq)]
struct Asked {
    rest: String,
    sslmode: bool,
    root_certificate: Option<PathBuf>,
}

impl Asked {
    fn read(conn: &str) -> Self {
        if (conn.starts_with("postgres://") || conn.starts_with("postgresql://"))
            && let Ok(url) = url::Url::parse(conn)
        {
            return Self::from_url(url);
        }
        Self::from_pairs(conn)
    }

    fn from_url(mut url: url::Url) -> Self {
        let mut sslmode = false;
        let mut root_certificate = None;
        let kept: Vec<(String, String)> = url
            .query_pairs()
            .filter_map(|(key, value)| match &*key {
                "sslrootcert" => {
                    root_certificate = Some(PathBuf::from(&*value));
                    None
                }
                "sslmode" => {
                    sslmode = true;
                    Some((key.into_owned(), mode(&value).to_owned()))
                }
                _ => Some((key.into_owned(), value.into_owned())),
            })
            .collect();
        if kept.is_empty() {
            url.set_query(None);
        } else {
            url.query_pairs_mut().clear().extend_pairs(kept);
        }
        Self {
            rest: url.into(),
            sslmode,
            root_certificate,
        }
    }

    /// libpq `key=value` pairs, left as written unless they hold one of the
    /// two keys (with an unquoted value): then the words are joined by single
    /// spaces.
    fn from_pairs(conn: &str) -> Self {
        let ours = |w: &str| w.starts_with("sslrootcert=") || w.starts_with("sslmode=");
        if !conn.split_whitespace().any(ours) {
            return Self {
                rest: conn.to_owned(),
                sslmode: false,
                root_certificate: None,
            };
        }
        let mut sslmode = false;
        let mut root_certificate = None;
        let words: Vec<&str> = conn.split_whitespace().collect();
        let mut kept = Vec::with_capacity(words.len());
        for word in words {
            if let Some(path) = word.strip_prefix("sslrootcert=") {
                root_certificate = Some(PathBuf::from(path));
            } else if let Some(value) = word.strip_prefix("sslmode=") {
                sslmode = true;
                kept.push(format!("sslmode={}", mode(value)));
            } else {
                kept.push(word.to_owned());
            }
        }
        Self {
            rest: kept.join(" "),
            sslmode,
            root_certificate,
        }
    }
}

/// libpq's verifying modes as tokio-postgres's `require` (which lousho
/// verifies in every mode).
fn mode(value: &str) -> &str {
    match value {
        "verify-ca" | "verify-full" => "require",
        other => other,
    }
}

/// A connector verifying servers against `root_certificate`'s authorities,
/// or the system's.
fn connector(root_certificate: Option<PathBuf>) -> Result<MakeRustlsConnect, TlsSetupError> {
    use rustls_platform_verifier::BuilderVerifierExt;
    // The provider reqwest uses too: explicit, so another crate enabling a
    // second provider cannot leave rustls without a default.
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?;
    let config = match root_certificate {
        None => builder.with_platform_verifier()?.with_no_client_auth(),
        Some(path) => {
            let refused = |reason: String| TlsSetupError::RootCertificate {
                path: path.clone(),
                reason,
            };
            let certs = CertificateDer::pem_file_iter(&path)
                .map_err(|e| refused(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| refused(e.to_string()))?;
            let mut roots = rustls::RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(refused("no certificate in it".into()));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lousho_reads_sslrootcert_and_the_verify_modes_and_leaves_the_rest() {
        let cases = [
            (
                "postgres://u:p@db.example.com:5432/app?sslmode=verify-full&sslrootcert=/etc/ca.pem&application_name=x",
                "postgres://u:p@db.example.com:5432/app?sslmode=require&application_name=x",
                true,
                Some("/etc/ca.pem"),
            ),
            (
                "postgresql://u@h/app?sslrootcert=%2Ftmp%2Fca%20bundle.pem",
                "postgresql://u@h/app",
                false,
                Some("/tmp/ca bundle.pem"),
            ),
            ("postgres://u@h/app", "postgres://u@h/app", false, None),
            (
                "host=h dbname=app sslmode=verify-ca sslrootcert=/ca.pem",
                "host=h dbname=app sslmode=require",
                true,
                Some("/ca.pem"),
            ),
            (
                "host=/run/postgresql  user=u password='a  b'",
                "host=/run/postgresql  user=u password='a  b'",
                false,
                None,
            ),
        ];
        for (conn, rest, sslmode, root) in cases {
            assert_eq!(
                Asked::read(conn),
                Asked {
                    rest: rest.to_owned(),
                    sslmode,
                    root_certificate: root.map(PathBuf::from),
                },
                "{conn}"
            );
        }
    }

    #[test]
    fn a_missing_or_empty_root_certificate_file_says_what_to_give() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        for path in [dir.path().join("missing.pem"), empty] {
            let Err(e) = connector(Some(path.clone())) else {
                panic!("{path:?} was accepted");
            };
            let text = e.to_string();
            assert!(
                text.contains(&format!("{path:?}")) && text.contains("PEM file"),
                "{text}"
            );
        }
    }
}
