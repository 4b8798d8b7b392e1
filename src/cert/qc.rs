//! The qcStatements extension (RFC 3739, OID 1.3.6.1.5.5.7.1.3) and its PSD2 statement
//! (ETSI TS 119 495 section 5.1, OID 0.4.0.19495.2):
//!
//! ```text
//! PSD2QcType ::= SEQUENCE { rolesOfPSP RolesOfPSP, nCAName NCAName, nCAId NCAId }
//! RolesOfPSP ::= SEQUENCE OF RoleOfPSP
//! RoleOfPSP  ::= SEQUENCE { roleOfPspOid OBJECT IDENTIFIER, roleOfPspName UTF8String }
//! ```

use std::fmt;
use std::str::FromStr;

use x509_parser::der_parser::ber::BerObject;

/// OID of the qcStatements certificate extension.
pub(crate) const QC_STATEMENTS_OID: &str = "1.3.6.1.5.5.7.1.3";
/// OID of the ETSI TS 119 495 PSD2 QC statement.
pub(crate) const PSD2_STATEMENT_OID: &str = "0.4.0.19495.2";
/// QcCompliance (ETSI EN 319 412-5).
pub(crate) const QC_COMPLIANCE_OID: &str = "0.4.0.1862.1.1";
/// QcType (ETSI EN 319 412-5).
pub(crate) const QC_TYPE_OID: &str = "0.4.0.1862.1.6";
/// QcType eseal: a QSealC.
pub(crate) const QC_TYPE_ESEAL_OID: &str = "0.4.0.1862.1.6.2";

/// A PSD2 role (ETSI TS 119 495 section 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Psd2Role {
    /// Account servicing (ASPSP), 0.4.0.19495.1.1.
    PspAs,
    /// Payment initiation (PISP), 0.4.0.19495.1.2.
    PspPi,
    /// Account information (AISP), 0.4.0.19495.1.3.
    PspAi,
    /// Issuing of card-based payment instruments, 0.4.0.19495.1.4.
    PspIc,
}

impl Psd2Role {
    /// Every role, in ETSI TS 119 495 order.
    pub const ALL: [Psd2Role; 4] = [
        Psd2Role::PspAs,
        Psd2Role::PspPi,
        Psd2Role::PspAi,
        Psd2Role::PspIc,
    ];

    /// The role name, e.g. `PSP_AI`.
    pub fn name(self) -> &'static str {
        match self {
            Psd2Role::PspAs => "PSP_AS",
            Psd2Role::PspPi => "PSP_PI",
            Psd2Role::PspAi => "PSP_AI",
            Psd2Role::PspIc => "PSP_IC",
        }
    }

    /// The role OID.
    pub(crate) fn oid(self) -> &'static str {
        match self {
            Psd2Role::PspAs => "0.4.0.19495.1.1",
            Psd2Role::PspPi => "0.4.0.19495.1.2",
            Psd2Role::PspAi => "0.4.0.19495.1.3",
            Psd2Role::PspIc => "0.4.0.19495.1.4",
        }
    }

    fn from_oid(oid: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.oid() == oid)
    }
}

impl fmt::Display for Psd2Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Psd2Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let up = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|r| r.name() == up || r.name().trim_start_matches("PSP_") == up)
            .ok_or_else(|| {
                format!("unknown PSD2 role {s:?} (expected PSP_AS, PSP_PI, PSP_AI or PSP_IC)")
            })
    }
}

impl serde::Serialize for Psd2Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Psd2Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The PSD2 statement: roles, the competent authority's name and id (e.g. `NO-FSA`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Psd2Statement {
    /// The roles the TPP is authorised for.
    pub roles: Vec<Psd2Role>,
    /// The competent authority's name.
    pub nca_name: String,
    /// The competent authority's id, e.g. `NO-FSA`.
    pub nca_id: String,
}

/// A malformed qcStatements extension (ETSI EN 319 412-5; PSD2 statement: ETSI TS 119 495
/// section 5.1): what is wrong, in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QcStatementsError(String);

/// Reads the PSD2 statement out of a qcStatements extension value (DER). `Ok(None)` when the
/// extension has no PSD2 statement.
///
/// Errors: [`QcStatementsError`] when it is malformed (not DER, a part of the wrong ASN.1
/// type, a missing part, an unknown role).
pub fn parse_qc_statements(der: &[u8]) -> Result<Option<Psd2Statement>, QcStatementsError> {
    parse_statements(der).map_err(QcStatementsError)
}

/// [`parse_qc_statements`] with the reason as text.
fn parse_statements(der: &[u8]) -> Result<Option<Psd2Statement>, String> {
    let (_, obj) = x509_parser::der_parser::parse_der(der)
        .map_err(|e| format!("qcStatements is not DER: {e}"))?;
    let statements = obj
        .as_sequence()
        .map_err(|_| "qcStatements is not a SEQUENCE".to_string())?;
    for st in statements {
        let parts = st
            .as_sequence()
            .map_err(|_| "QCStatement is not a SEQUENCE".to_string())?;
        let Some(id) = parts.first() else {
            return Err("empty QCStatement".into());
        };
        let id = id
            .as_oid()
            .map_err(|_| "QCStatement without statementId".to_string())?
            .to_id_string();
        if id != PSD2_STATEMENT_OID {
            continue;
        }
        let info = parts
            .get(1)
            .ok_or("PSD2 statement without PSD2QcType")?
            .as_sequence()
            .map_err(|_| "PSD2QcType is not a SEQUENCE".to_string())?;
        if info.len() < 3 {
            return Err("PSD2QcType needs rolesOfPSP, nCAName and nCAId".into());
        }
        let mut roles = Vec::new();
        for role in info[0]
            .as_sequence()
            .map_err(|_| "rolesOfPSP is not a SEQUENCE".to_string())?
        {
            let r = role
                .as_sequence()
                .map_err(|_| "RoleOfPSP is not a SEQUENCE".to_string())?;
            let oid = r
                .first()
                .and_then(|o| o.as_oid().ok())
                .map(|o| o.to_id_string())
                .ok_or("RoleOfPSP without roleOfPspOid")?;
            let name = r.get(1).map(ber_text).unwrap_or_default();
            let parsed = Psd2Role::from_oid(&oid).or_else(|| name.parse().ok());
            match parsed {
                Some(p) => roles.push(p),
                None => return Err(format!("unknown PSD2 role {oid} ({name})")),
            }
        }
        return Ok(Some(Psd2Statement {
            roles,
            nca_name: ber_text(&info[1]),
            nca_id: ber_text(&info[2]),
        }));
    }
    Ok(None)
}

fn ber_text(o: &BerObject<'_>) -> String {
    o.as_str()
        .map(str::to_string)
        .or_else(|_| {
            o.as_slice()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        })
        .unwrap_or_default()
}

fn oid(dotted: &str) -> yasna::models::ObjectIdentifier {
    let parts: Vec<u64> = dotted.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    yasna::models::ObjectIdentifier::from_slice(&parts)
}

/// Encodes a qcStatements extension value with QcCompliance, QcType eseal and the PSD2
/// statement for `statement`.
pub fn encode_qc_statements(statement: &Psd2Statement) -> Vec<u8> {
    yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(QC_COMPLIANCE_OID));
            });
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(QC_TYPE_OID));
                w.next().write_sequence(|w| {
                    w.next().write_oid(&oid(QC_TYPE_ESEAL_OID));
                });
            });
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(PSD2_STATEMENT_OID));
                w.next().write_sequence(|w| {
                    w.next().write_sequence(|w| {
                        for role in &statement.roles {
                            w.next().write_sequence(|w| {
                                w.next().write_oid(&oid(role.oid()));
                                w.next().write_utf8_string(role.name());
                            });
                        }
                    });
                    w.next().write_utf8_string(&statement.nca_name);
                    w.next().write_utf8_string(&statement.nca_id);
                });
            });
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_then_parse_round_trips() {
        let st = Psd2Statement {
            roles: vec![Psd2Role::PspAi, Psd2Role::PspPi],
            nca_name: "Finanstilsynet".into(),
            nca_id: "NO-FSA".into(),
        };
        let der = encode_qc_statements(&st);
        assert_eq!(parse_qc_statements(&der).unwrap(), Some(st));
    }

    #[test]
    fn malformed_is_an_error() {
        assert!(parse_qc_statements(&[0x30, 0x03, 0x02]).is_err());
    }

    #[test]
    fn role_names_parse() {
        assert_eq!("psp_ai".parse::<Psd2Role>().unwrap(), Psd2Role::PspAi);
        assert_eq!("PI".parse::<Psd2Role>().unwrap(), Psd2Role::PspPi);
        assert!("XX".parse::<Psd2Role>().is_err());
    }
}
