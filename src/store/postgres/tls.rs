//! TLS in pure Rust (rustls with the ring provider), with libpq's meanings: `disable` never
//! encrypts, `allow` tries plain first, `prefer` (the default) tries TLS first, `require`
//! encrypts without checking the certificate (unless a root certificate file is given, when it
//! checks the chain as libpq does), `verify-ca` checks the chain, `verify-full` the chain and the
//! host name. Trusted roots: `sslrootcert` (or `~/.postgresql/root.crt`); verify-full without
//! one uses the platform's store (`sslrootcert=system` asks for it explicitly), verify-ca
//! without one is refused. Client certificates come from `sslcert`/`sslkey` (or
//! `~/.postgresql/postgresql.{crt,key}`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::error::{Error, Result};
use super::libpq::Params;

/// libpq's sslmode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// How a connection's TLS is set up.
#[derive(Clone)]
pub(crate) struct Tls {
    pub mode: SslMode,
    connector: MakeRustlsConnect,
    /// What is trusted, for messages: `sslrootcert "ca.pem"` or the platform's store.
    trusted: String,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("mode", &self.mode)
            .field("trusted", &self.trusted)
            .finish_non_exhaustive()
    }
}

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Nothing,
    Chain,
    ChainAndName,
}

/// libpq's default places for the TLS files, in `~/.postgresql/`.
struct Files {
    dir: Option<PathBuf>,
}

impl Files {
    fn of(params: &Params) -> Files {
        Files {
            dir: params.home().map(|h| h.join(".postgresql")),
        }
    }

    /// `~/.postgresql/name`, if it exists.
    fn existing(&self, name: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(name))
            .filter(|f| f.exists())
    }

    /// The root certificate file: `sslrootcert` (none for `system`), else
    /// `~/.postgresql/root.crt` if it exists. verify-ca without one is refused: it would have
    /// to trust the system's roots without checking the host name, which any certificate from
    /// a public CA, for any name, passes.
    fn root(&self, params: &Params, mode: SslMode) -> Result<Option<PathBuf>> {
        let file = match params.get("sslrootcert") {
            Some("system") => None,
            Some(file) => Some(PathBuf::from(file)),
            None => self.existing("root.crt"),
        };
        if file.is_none() && mode == SslMode::VerifyCa {
            let missing = match &self.dir {
                Some(dir) => format!(
                    "root certificate file \"{}\" does not exist",
                    dir.join("root.crt").display()
                ),
                None => "could not get home directory to locate root certificate file".to_owned(),
            };
            return Err(params.refuse(
                "sslmode",
                &format!(
                    "{missing}; verify-ca trusts only the CA certificates given there. Either \
                     provide the file (sslrootcert=FILE or PGSSLROOTCERT), or use \
                     sslmode=verify-full, which also checks the host name, with the system's \
                     trusted roots (sslrootcert=system)"
                ),
            ));
        }
        Ok(file)
    }
}

impl Tls {
    /// The TLS settings of `params`. Every value is checked now; the files (root certificates,
    /// revocation lists, the client certificate and key) are read now too, so a bad one is
    /// reported before any connection is tried, but only when `over_tcp` (some host is reached
    /// over TCP) and the sslmode may encrypt: libpq never reads them for a socket or `disable`.
    pub(crate) fn from_params(params: &Params, over_tcp: bool) -> Result<Tls> {
        let mode = params
            .typed(
                "sslmode",
                "disable, allow, prefer, require, verify-ca or verify-full",
                |v| match v {
                    "disable" => Some(SslMode::Disable),
                    "allow" => Some(SslMode::Allow),
                    "prefer" => Some(SslMode::Prefer),
                    "require" => Some(SslMode::Require),
                    "verify-ca" => Some(SslMode::VerifyCa),
                    "verify-full" => Some(SslMode::VerifyFull),
                    _ => None,
                },
            )?
            // libpq: sslrootcert=system without an sslmode means verify-full.
            .unwrap_or(if params.get("sslrootcert") == Some("system") {
                SslMode::VerifyFull
            } else {
                SslMode::Prefer
            });
        if params.get("sslrootcert") == Some("system") && mode != SslMode::VerifyFull {
            return Err(params.refuse(
                "sslrootcert",
                &format!(
                    "weak sslmode \"{}\" may not be used with sslrootcert=system (use \
                     \"verify-full\")",
                    params.get("sslmode").unwrap_or("prefer")
                ),
            ));
        }
        let versions = versions(params)?;
        let send_certificate = params
            .either("sslcertmode", "disable", "allow")?
            .unwrap_or(true);
        let sni = params.flag("sslsni")?.unwrap_or(true);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (check, root_file, client) = if over_tcp && mode != SslMode::Disable {
            let files = Files::of(params);
            let root_file = files.root(params, mode)?;
            let check = match mode {
                SslMode::Disable | SslMode::Allow | SslMode::Prefer => Check::Nothing,
                SslMode::Require if root_file.is_none() => Check::Nothing,
                SslMode::Require | SslMode::VerifyCa => Check::Chain,
                SslMode::VerifyFull => Check::ChainAndName,
            };
            let client = if send_certificate {
                client_certificate(params, &files)?
            } else {
                None
            };
            (check, root_file, client)
        } else {
            (Check::Nothing, None, None)
        };
        let (verifier, trusted) = verifier(params, check, root_file.as_deref(), &provider)?;
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .map_err(|e| Error::Setting(format!("cannot use these TLS versions: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match client {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| params.refuse("sslkey", &format!("does not suit sslcert: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        config.enable_sni = sni;
        Ok(Tls {
            mode,
            connector: MakeRustlsConnect::new(config),
            trusted,
        })
    }

    /// The connector tokio-postgres is given.
    pub(crate) fn connector(&self) -> MakeRustlsConnect {
        self.connector.clone()
    }

    /// What went wrong with the server's certificate, in words an operator can act on, when
    /// `error` is a certificate failure.
    pub(crate) fn explain(
        &self,
        error: &(dyn std::error::Error + 'static),
        host: &str,
    ) -> Option<String> {
        std::iter::successors(Some(error), |error| error.source())
            .find_map(|error| {
                error.downcast_ref::<rustls::Error>().or_else(|| {
                    error
                        .downcast_ref::<std::io::Error>()
                        .and_then(|io| io.get_ref())
                        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                })
            })
            .map(|tls| self.explain_tls(tls, host))
    }

    fn explain_tls(&self, error: &rustls::Error, host: &str) -> String {
        use rustls::AlertDescription as Alert;
        match error {
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
                "the server's certificate is not signed by a trusted certificate authority \
                 (trusted: {}); give the CA's certificate with sslrootcert=FILE or PGSSLROOTCERT",
                self.trusted
            ),
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            ) => format!(
                "the server's certificate does not name the host \"{host}\" \
                 (sslmode=verify-full checks the host name; verify-ca does not)"
            ),
            rustls::Error::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. },
            ) => "the server's certificate has expired".to_owned(),
            rustls::Error::InvalidCertificate(CertificateError::Revoked) => {
                "the server's certificate is revoked (sslcrl, sslcrldir)".to_owned()
            }
            rustls::Error::AlertReceived(Alert::CertificateRequired) => {
                "the server wants a client certificate: give one with sslcert and sslkey".to_owned()
            }
            rustls::Error::AlertReceived(
                Alert::BadCertificate | Alert::UnknownCA | Alert::CertificateUnknown,
            ) => "the server refused the client certificate (sslcert)".to_owned(),
            other => format!("TLS: {other}"),
        }
    }
}

/// The verifier for `check`, and what it trusts in words.
fn verifier(
    params: &Params,
    check: Check,
    root_file: Option<&Path>,
    provider: &Arc<CryptoProvider>,
) -> Result<(Arc<dyn ServerCertVerifier>, String)> {
    let algorithms = provider.signature_verification_algorithms;
    if check == Check::Nothing {
        let trusted = "anything (this sslmode checks no certificate)".to_owned();
        let verifier = Verifier {
            check,
            webpki: None,
            algorithms,
        };
        return Ok((Arc::new(verifier), trusted));
    }
    let mut roots = RootCertStore::empty();
    let trusted = match root_file {
        Some(file) => roots_from_file(params, file, &mut roots)?,
        None => {
            // Only verify-full comes here (see `Files::root`): the host name is checked too.
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            let asked = match params.get("sslrootcert") {
                Some(_) => "sslrootcert=system",
                None => "no sslrootcert given",
            };
            if roots.is_empty() {
                // Nothing can be trusted: every certificate is refused, and the refusal says why.
                let trusted = format!(
                    "the system's roots, which are none (install ca-certificates); {asked}"
                );
                let verifier = Verifier {
                    check,
                    webpki: None,
                    algorithms,
                };
                return Ok((Arc::new(verifier), trusted));
            }
            format!("the system's roots; {asked}")
        }
    };
    let mut builder =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone());
    let crls = revocation_lists(params)?;
    if !crls.is_empty() {
        builder = builder.with_crls(crls);
    }
    let webpki = builder
        .build()
        .map_err(|e| Error::Setting(format!("cannot set up certificate checking: {e}")))?;
    let verifier = Verifier {
        check,
        webpki: Some(webpki),
        algorithms,
    };
    Ok((Arc::new(verifier), trusted))
}

/// Adds the certificates of `file` (`sslrootcert`, PEM) to `roots`; says what is trusted.
fn roots_from_file(params: &Params, file: &Path, roots: &mut RootCertStore) -> Result<String> {
    let read = |e: &dyn std::fmt::Display| {
        params.refuse(
            "sslrootcert",
            &format!(
                "could not read root certificate file \"{}\": {e}",
                file.display()
            ),
        )
    };
    if !file.exists() {
        return Err(params.refuse(
            "sslrootcert",
            &format!(
                "root certificate file \"{}\" does not exist",
                file.display()
            ),
        ));
    }
    for cert in CertificateDer::pem_file_iter(file).map_err(|e| read(&e))? {
        roots
            .add(cert.map_err(|e| read(&e))?)
            .map_err(|e| read(&e))?;
    }
    if roots.is_empty() {
        return Err(read(&"no certificate in it"));
    }
    Ok(format!("sslrootcert \"{}\"", file.display()))
}

/// The revocation lists of `sslcrl` (a PEM file) and `sslcrldir` (a directory of them).
fn revocation_lists(params: &Params) -> Result<Vec<CertificateRevocationListDer<'static>>> {
    let mut files = Vec::new();
    if let Some(file) = params.get("sslcrl") {
        files.push(("sslcrl", PathBuf::from(file)));
    }
    if let Some(dir) = params.get("sslcrldir") {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| params.refuse("sslcrldir", &format!("cannot read \"{dir}\": {e}")))?;
        for entry in entries.flatten() {
            files.push(("sslcrldir", entry.path()));
        }
    }
    let mut crls = Vec::new();
    for (key, file) in files {
        let refuse = |e: &dyn std::fmt::Display| {
            params.refuse(
                key,
                &format!("could not read revocation list \"{}\": {e}", file.display()),
            )
        };
        for crl in CertificateRevocationListDer::pem_file_iter(&file).map_err(|e| refuse(&e))? {
            crls.push(crl.map_err(|e| refuse(&e))?);
        }
    }
    Ok(crls)
}

/// The TLS versions allowed by `ssl_min_protocol_version` (default TLSv1.2) and
/// `ssl_max_protocol_version`; rustls speaks TLSv1.2 and TLSv1.3.
fn versions(params: &Params) -> Result<&'static [&'static rustls::SupportedProtocolVersion]> {
    let read = |key| {
        params.typed(key, "TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3", |v| match v {
            "TLSv1" => Some(10),
            "TLSv1.1" => Some(11),
            "TLSv1.2" => Some(12),
            "TLSv1.3" => Some(13),
            _ => None,
        })
    };
    let min = read("ssl_min_protocol_version")?.unwrap_or(12);
    let max = read("ssl_max_protocol_version")?.unwrap_or(13);
    if min > max {
        return Err(Error::Setting(
            "invalid SSL protocol version range (ssl_min_protocol_version, \
             ssl_max_protocol_version)"
                .to_owned(),
        ));
    }
    static TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];
    static TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
    Ok(match (min <= 12, max >= 13) {
        (true, true) => rustls::DEFAULT_VERSIONS,
        (true, false) if max == 12 => TLS12,
        (false, true) => TLS13,
        _ => {
            return Err(params.refuse(
                "ssl_max_protocol_version",
                "gavel speaks TLSv1.2 and TLSv1.3 only",
            ));
        }
    })
}

type ClientCertificate = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The client certificate chain and key, when there is a certificate to send: `sslcert` (an
/// explicit file must exist), else `~/.postgresql/postgresql.crt` if present.
fn client_certificate(params: &Params, files: &Files) -> Result<Option<ClientCertificate>> {
    let Some(cert_file) = params
        .get("sslcert")
        .map(PathBuf::from)
        .or_else(|| files.existing("postgresql.crt"))
    else {
        return Ok(None);
    };
    let refuse = |key: &str, file: &Path, e: &dyn std::fmt::Display| {
        params.refuse(key, &format!("could not read \"{}\": {e}", file.display()))
    };
    let chain = CertificateDer::pem_file_iter(&cert_file)
        .map_err(|e| refuse("sslcert", &cert_file, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refuse("sslcert", &cert_file, &e))?;
    if chain.is_empty() {
        return Err(refuse("sslcert", &cert_file, &"no certificate in it"));
    }
    let key_file = params
        .get("sslkey")
        .map(PathBuf::from)
        .or_else(|| files.existing("postgresql.key"))
        .ok_or_else(|| {
            params.refuse(
                "sslkey",
                &format!(
                    "certificate present, but not private key file (sslcert \"{}\")",
                    cert_file.display()
                ),
            )
        })?;
    let metadata = std::fs::metadata(&key_file).map_err(|e| {
        params.refuse(
            "sslkey",
            &format!(
                "certificate present, but not private key file \"{}\" ({e})",
                key_file.display()
            ),
        )
    })?;
    let (mode, owner) = (
        std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()),
        std::os::unix::fs::MetadataExt::uid(&metadata),
    );
    let loose = if owner == 0 {
        mode & 0o037
    } else {
        mode & 0o077
    };
    if loose != 0 {
        return Err(params.refuse(
            "sslkey",
            &format!(
                "private key file \"{}\" has group or world access; file must have permissions \
                 u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r \
                 (0640) or less if owned by root",
                key_file.display()
            ),
        ));
    }
    let key =
        PrivateKeyDer::from_pem_file(&key_file).map_err(|e| refuse("sslkey", &key_file, &e))?;
    Ok(Some((chain, key)))
}

/// The check an sslmode asks for. The handshake's signatures are always verified (the
/// connection is encrypted to whoever holds the certificate's key); the certificate itself only
/// as far as `check` says. webpki checks the name last, so for verify-ca a name mismatch means
/// the chain was good.
#[derive(Debug)]
struct Verifier {
    check: Check,
    /// The chain (and name) check; `None` for [`Check::Nothing`], or when there are no roots
    /// to trust.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return match self.check {
                Check::Nothing => Ok(ServerCertVerified::assertion()),
                _ => Err(CertificateError::UnknownIssuer.into()),
            };
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
