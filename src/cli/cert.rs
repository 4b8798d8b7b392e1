//! `cert new` (a sandbox CA and a TPP QSealC, or a QWAC of the sandbox CA), `cert ca` (the
//! sandbox CA that `sandbox serve --tls` uses) and `cert show` (a certificate's fields and
//! the verdict on it).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::Subcommand;

use psd2_console::cert::generate::{TppCertSpec, WrittenSet, write_set};
use psd2_console::cert::{Certificate, Psd2Role, Validity};
use psd2_console::profile::Paths;

#[derive(Subcommand)]
pub(super) enum CertCommand {
    /// Generate a sandbox CA and a TPP QSealC with PSD2 roles (or, with --qwac, a QWAC
    /// issued by the sandbox CA that `sandbox serve --tls` trusts).
    New {
        /// Directory to write into.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// File name stem: <stem>.pem, <stem>.key, <stem>-ca.pem, <stem>-ca.key (with
        /// --qwac only <stem>.pem and <stem>.key). Default: tpp, or qwac with --qwac.
        #[arg(long)]
        name: Option<String>,
        /// A QWAC (TLS client certificate: extended key usage clientAuth) issued by the
        /// sandbox CA of the data directory (made on first use; `cert ca` prints it), so a
        /// `sandbox serve --tls --client-auth required` on this data directory trusts it.
        /// Give it the organisation and organisationIdentifier of the QSealC.
        #[arg(long)]
        qwac: bool,
        /// Subject organizationIdentifier (2.5.4.97).
        #[arg(long, default_value = "PSDNO-FSA-TEST01")]
        organisation_id: String,
        /// Validity in days from now.
        #[arg(long, default_value_t = 730)]
        days: u32,
        /// Roles, comma-separated: PSP_AI, PSP_PI, PSP_AS, PSP_IC.
        #[arg(long, default_value = "PSP_AI,PSP_PI", value_delimiter = ',')]
        roles: Vec<String>,
        /// Subject organisation.
        #[arg(long, default_value = "psd2-console Test TPP")]
        organisation: String,
        /// Overwrite existing files of the set (without it, existing files are an error).
        #[arg(long)]
        force: bool,
    },
    /// Show a certificate: serial, keyId, issuer, subject, validity, PSD2 roles.
    Show { file: PathBuf },
    /// Print the sandbox CA certificate (PEM) that `sandbox serve --tls` uses (made on first
    /// use in the data directory), or write it to a file: what curl (--cacert), a browser
    /// or a TPP's test suite trusts.
    Ca {
        /// Write the PEM into this file instead of printing it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Overwrite an existing --out file.
        #[arg(long)]
        force: bool,
    },
}

/// Runs `command`.
///
/// Errors: `new` over existing files without `--force`, an unknown role, writing;
/// `show` of a file that is not a certificate.
pub(super) fn run(command: CertCommand, paths: &Paths) -> Result<ExitCode> {
    match command {
        CertCommand::New {
            dir,
            name,
            qwac,
            organisation_id,
            days,
            roles,
            organisation,
            force,
        } if qwac => {
            let name = name.unwrap_or_else(|| "qwac".into());
            let roles = roles
                .iter()
                .map(|r| r.parse::<Psd2Role>().map_err(|e| anyhow!(e)))
                .collect::<Result<Vec<_>>>()?;
            let (cert_path, key_path) = (
                dir.join(format!("{name}.pem")),
                dir.join(format!("{name}.key")),
            );
            if !force {
                let existing: Vec<String> = [&cert_path, &key_path]
                    .iter()
                    .filter(|p| p.exists())
                    .map(|p| p.display().to_string())
                    .collect();
                if !existing.is_empty() {
                    bail!(
                        "not overwriting {} (give --force to replace them, or another --name or --dir)",
                        existing.join(", ")
                    );
                }
            }
            let ca = psd2_console::cert::ca::SandboxCa::load_or_create(&paths.data)?;
            let (cert_pem, key_pem) = ca.issue_tpp(&TppCertSpec {
                organisation,
                organisation_id,
                roles,
                days,
                qwac: true,
                ..TppCertSpec::default()
            })?;
            psd2_console::fsutil::write_atomic(&key_path, key_pem.as_bytes(), true)?;
            psd2_console::fsutil::write_atomic(&cert_path, cert_pem.as_bytes(), false)?;
            let (ca_file, _) = psd2_console::cert::ca::ca_files(&paths.data);
            out!("QWAC:        {}", cert_path.display());
            out!("key:         {}", key_path.display());
            out!("issuer:      the sandbox CA {}", ca_file.display());
            Ok(ExitCode::SUCCESS)
        }
        CertCommand::New {
            dir,
            name,
            organisation_id,
            days,
            roles,
            organisation,
            force,
            ..
        } => {
            let name = name.unwrap_or_else(|| "tpp".into());
            let existing: Vec<String> = WrittenSet::paths(&dir, &name)
                .existing()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            if !force && !existing.is_empty() {
                bail!(
                    "not overwriting {} (give --force to replace them, or another --name or --dir)",
                    existing.join(", ")
                );
            }
            let roles = roles
                .iter()
                .map(|r| r.parse::<Psd2Role>().map_err(|e| anyhow!(e)))
                .collect::<Result<Vec<_>>>()?;
            let written = write_set(
                &dir,
                &name,
                &TppCertSpec {
                    organisation,
                    organisation_id,
                    roles,
                    days,
                    ..TppCertSpec::default()
                },
            )?;
            out!("certificate: {}", written.tpp_cert.display());
            out!("key:         {}", written.tpp_key.display());
            out!("CA:          {}", written.ca_cert.display());
            out!("CA key:      {}", written.ca_key.display());
            let c = Certificate::load(&written.tpp_cert)?;
            out!("keyId:       {}", c.key_id());
            Ok(ExitCode::SUCCESS)
        }
        CertCommand::Ca { out, force } => {
            let ca = psd2_console::cert::ca::SandboxCa::load_or_create(&paths.data)?;
            match out {
                None => out!("{}", ca.cert_pem().trim_end()),
                Some(file) => {
                    if file.exists() && !force {
                        bail!(
                            "not overwriting {} (give --force to replace it)",
                            file.display()
                        );
                    }
                    psd2_console::fsutil::write_atomic(&file, ca.cert_pem().as_bytes(), false)?;
                    out!("sandbox CA written to {}", file.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        CertCommand::Show { file } => {
            let c = Certificate::load(&file)?;
            let now = psd2_console::cert::unix_seconds(std::time::SystemTime::now());
            let text = describe_certificate(&c, now);
            out!("{}", text.trim_end());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Roles `cert show` checks for: account information and payment initiation, the roles the
/// console's operations need (a certificate without them gets `ROLE_INVALID`).
const EXPECTED_ROLES: [Psd2Role; 2] = [Psd2Role::PspAi, Psd2Role::PspPi];

/// `cert show`: the fields, then the verdict on validity at `now` (Unix seconds) and the
/// missing PSD2 roles, from the same functions as the console's profile inspector
/// ([`Certificate::validity_at`], [`Certificate::missing_roles`]).
fn describe_certificate(c: &Certificate, now: i64) -> String {
    let fmt_time = |t| psd2_console::signing::imf_fixdate(t);
    let roles: Vec<&str> = c.roles().iter().map(|r| r.name()).collect();
    let mut s = String::new();
    s.push_str(&format!("serial:   {}\n", c.serial_hex()));
    s.push_str(&format!("keyId:    {}\n", c.key_id()));
    s.push_str(&format!("issuer:   {}\n", c.issuer));
    s.push_str(&format!("subject:  {}\n", c.subject));
    s.push_str(&format!(
        "valid:    {} .. {}\n",
        fmt_time(c.not_before_time()),
        fmt_time(c.not_after_time())
    ));
    s.push_str(&format!(
        "roles:    {}\n",
        if roles.is_empty() {
            "(no PSD2 statement)".to_string()
        } else {
            roles.join(", ")
        }
    ));
    if let Some(p) = &c.psd2 {
        s.push_str(&format!("NCA:      {} ({})\n", p.nca_name, p.nca_id));
    }
    let days = |secs: i64| secs.div_euclid(86_400);
    let verdict = match c.validity_at(now) {
        Validity::NotYetValid { starts_in } => format!(
            "not yet valid (starts in {} days; a bank refuses it until then)",
            days(starts_in)
        ),
        Validity::Expired { ago } => format!(
            "expired {} days ago (a bank refuses it: make a new one with `cert new`)",
            days(ago)
        ),
        Validity::ExpiresSoon { days } => format!("valid, expires in {days} days"),
        Validity::Valid { days_left } => format!("valid ({days_left} days left)"),
    };
    s.push_str(&format!("verdict:  {verdict}\n"));
    let missing: Vec<&str> = c
        .missing_roles(&EXPECTED_ROLES)
        .iter()
        .map(|r| r.name())
        .collect();
    if !missing.is_empty() {
        s.push_str(&format!(
            "missing:  {} (operations needing {} are refused with ROLE_INVALID)\n",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ));
    }
    s
}
