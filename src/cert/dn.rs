//! Distinguished names: RFC 2253 formatting and parsing, and attribute-by-attribute comparison.
//!
//! The keyId of the interface document (Authentication rule 5) carries the issuer DN "in
//! RFC 2253 form". Libraries print DNs differently (short names, `#hex` values, `\XX` escapes
//! of UTF-8 bytes), so a verifier parses the DN back into attributes and compares those.

use std::fmt;

/// One attribute of a DN: dotted OID of its type and its string value (UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnAttribute {
    /// Dotted OID of the attribute type, e.g. `2.5.4.3` (CN).
    pub oid: String,
    /// The value as text.
    pub value: String,
}

/// A DN as a list of attributes in RFC 2253 order (most specific first, i.e. the reverse of
/// the DER `RDNSequence` order). Multi-valued RDNs are flattened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DistinguishedName {
    /// The attributes, most specific first.
    pub attributes: Vec<DnAttribute>,
}

/// Why an RFC 2253 string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed RFC 2253 distinguished name {input:?}: {reason}")]
pub struct DnParseError {
    /// The string that was parsed.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

/// (dotted OID, name printed) for the attribute types we print by name. The first block is
/// RFC 2253's table; the second follows OpenSSL's `-nameopt RFC2253` long names.
pub(crate) const TYPE_NAMES: &[(&str, &str)] = &[
    ("2.5.4.3", "CN"),
    ("2.5.4.7", "L"),
    ("2.5.4.8", "ST"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.6", "C"),
    ("2.5.4.9", "STREET"),
    ("0.9.2342.19200300.100.1.25", "DC"),
    ("0.9.2342.19200300.100.1.1", "UID"),
    ("2.5.4.97", "organizationIdentifier"),
    ("2.5.4.5", "serialNumber"),
    ("1.2.840.113549.1.9.1", "emailAddress"),
    ("2.5.4.42", "GN"),
    ("2.5.4.4", "SN"),
    ("2.5.4.12", "title"),
    ("2.5.4.17", "postalCode"),
    ("2.5.4.15", "businessCategory"),
    ("1.3.6.1.4.1.311.60.2.1.3", "jurisdictionC"),
];

/// Extra spellings accepted when parsing (case-insensitive).
const TYPE_ALIASES: &[(&str, &str)] = &[
    ("commonName", "2.5.4.3"),
    ("localityName", "2.5.4.7"),
    ("stateOrProvinceName", "2.5.4.8"),
    ("S", "2.5.4.8"),
    ("organizationName", "2.5.4.10"),
    ("organizationalUnitName", "2.5.4.11"),
    ("countryName", "2.5.4.6"),
    ("streetAddress", "2.5.4.9"),
    ("domainComponent", "0.9.2342.19200300.100.1.25"),
    ("userId", "0.9.2342.19200300.100.1.1"),
    ("givenName", "2.5.4.42"),
    ("surname", "2.5.4.4"),
    ("E", "1.2.840.113549.1.9.1"),
    ("OrgId", "2.5.4.97"),
];

fn type_name(oid: &str) -> Option<&'static str> {
    TYPE_NAMES.iter().find(|(o, _)| *o == oid).map(|(_, n)| *n)
}

fn oid_of_type(name: &str) -> Option<String> {
    let trimmed = name.trim();
    let bare = trimmed
        .strip_prefix("OID.")
        .or_else(|| trimmed.strip_prefix("oid."))
        .unwrap_or(trimmed);
    if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Some(bare.to_string());
    }
    TYPE_NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(bare))
        .map(|(o, _)| o.to_string())
        .or_else(|| {
            TYPE_ALIASES
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(bare))
                .map(|(_, o)| o.to_string())
        })
}

/// Escapes a value as RFC 2253 section 2.4 says; non-ASCII characters are kept as UTF-8.
pub(crate) fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 4);
    let count = value.chars().count();
    for (i, c) in value.chars().enumerate() {
        let needs = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i + 1 == count && c == ' ');
        if needs {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl DistinguishedName {
    /// Reads an X.509 `Name` (x509-parser) into RFC 2253 order. Values that are not one of the
    /// ASN.1 string types are kept as `#<hex of DER value>`.
    pub(crate) fn from_x509(name: &x509_parser::x509::X509Name<'_>) -> Self {
        let mut attributes: Vec<DnAttribute> = name
            .iter_attributes()
            .map(|attr| {
                let oid = attr.attr_type().to_id_string();
                let value = attribute_string(attr.attr_value());
                DnAttribute { oid, value }
            })
            .collect();
        attributes.reverse();
        DistinguishedName { attributes }
    }

    /// The RFC 2253 string, e.g. `CN=Sandbox CA,O=Example Bank,C=NO`.
    pub fn to_rfc2253(&self) -> String {
        let mut out = String::new();
        for (i, a) in self.attributes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match type_name(&a.oid) {
                Some(n) => out.push_str(n),
                None => out.push_str(&a.oid),
            }
            out.push('=');
            out.push_str(&escape_value(&a.value));
        }
        out
    }

    /// Parses an RFC 2253 string: `,` or `;` between RDNs, `+` inside multi-valued RDNs,
    /// `\<special>` and `\XX` (hex byte) escapes, `#hex` BER values, short and long type names
    /// and dotted OIDs.
    pub fn parse_rfc2253(input: &str) -> Result<Self, DnParseError> {
        let err = |reason: &str| DnParseError {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let mut attributes = Vec::new();
        let bytes = input.as_bytes();
        let mut i = 0;
        if input.trim().is_empty() {
            return Ok(DistinguishedName::default());
        }
        loop {
            // type
            let start = i;
            while i < bytes.len() && bytes[i] != b'=' {
                if matches!(bytes[i], b',' | b'+' | b';') {
                    return Err(err("attribute without '='"));
                }
                i += 1;
            }
            if i >= bytes.len() {
                return Err(err("attribute without '='"));
            }
            let type_str = &input[start..i];
            let oid = oid_of_type(type_str)
                .ok_or_else(|| err(&format!("unknown attribute type {:?}", type_str.trim())))?;
            i += 1; // '='
            // value
            let value = if i < bytes.len() && bytes[i] == b'#' {
                let s = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let der = hex::decode(&input[s..i]).map_err(|_| err("bad #hex value"))?;
                ber_string(&der).ok_or_else(|| err("#hex value is not a string"))?
            } else {
                let mut raw: Vec<u8> = Vec::new();
                let mut trailing_unescaped_spaces = 0usize;
                while i < bytes.len() && !matches!(bytes[i], b',' | b'+' | b';') {
                    if bytes[i] == b'\\' {
                        trailing_unescaped_spaces = 0;
                        let n1 = *bytes.get(i + 1).ok_or_else(|| err("dangling '\\'"))?;
                        if n1.is_ascii_hexdigit() {
                            let n2 = *bytes.get(i + 2).ok_or_else(|| err("short \\XX escape"))?;
                            let hex = [n1, n2];
                            let h = std::str::from_utf8(&hex).map_err(|_| err("bad \\XX"))?;
                            let b = u8::from_str_radix(h, 16).map_err(|_| err("bad \\XX"))?;
                            raw.push(b);
                            i += 3;
                        } else {
                            raw.push(n1);
                            i += 2;
                        }
                    } else {
                        if bytes[i] == b' ' {
                            trailing_unescaped_spaces += 1;
                        } else {
                            trailing_unescaped_spaces = 0;
                        }
                        raw.push(bytes[i]);
                        i += 1;
                    }
                }
                raw.truncate(raw.len() - trailing_unescaped_spaces);
                let s = String::from_utf8(raw).map_err(|_| err("value is not UTF-8"))?;
                s.trim_start().to_string()
            };
            attributes.push(DnAttribute { oid, value });
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            if i >= bytes.len() {
                break;
            }
            // Only a #hex value can stop before a separator (tests/it/fuzz_regressions.rs).
            if !matches!(bytes[i], b',' | b'+' | b';') {
                return Err(err("a #hex value must be followed by ',', '+' or ';'"));
            }
            i += 1; // separator
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
        }
        Ok(DistinguishedName { attributes })
    }

    /// Attribute-by-attribute comparison: same types in the same order, values equal ignoring
    /// case and runs of white space (RFC 4518 caseIgnoreMatch, simplified).
    pub fn matches(&self, other: &DistinguishedName) -> bool {
        self.attributes.len() == other.attributes.len()
            && self
                .attributes
                .iter()
                .zip(&other.attributes)
                .all(|(a, b)| a.oid == b.oid && normalize(&a.value) == normalize(&b.value))
    }

    /// Describes the first difference from `other`, for error messages.
    pub(crate) fn difference(&self, other: &DistinguishedName) -> Option<String> {
        if self.attributes.len() != other.attributes.len() {
            return Some(format!(
                "{} attributes vs {}",
                self.attributes.len(),
                other.attributes.len()
            ));
        }
        for (a, b) in self.attributes.iter().zip(&other.attributes) {
            if a.oid != b.oid {
                return Some(format!(
                    "attribute type {} vs {}",
                    type_name(&a.oid).unwrap_or(&a.oid),
                    type_name(&b.oid).unwrap_or(&b.oid)
                ));
            }
            if normalize(&a.value) != normalize(&b.value) {
                return Some(format!(
                    "{} {:?} vs {:?}",
                    type_name(&a.oid).unwrap_or(&a.oid),
                    a.value,
                    b.value
                ));
            }
        }
        None
    }
}

impl fmt::Display for DistinguishedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc2253())
    }
}

fn normalize(v: &str) -> String {
    v.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn attribute_string(any: &x509_parser::der_parser::asn1_rs::Any<'_>) -> String {
    use x509_parser::der_parser::asn1_rs::Tag;
    let data = any.data;
    match any.tag() {
        Tag::Utf8String
        | Tag::PrintableString
        | Tag::Ia5String
        | Tag::NumericString
        | Tag::VisibleString => String::from_utf8_lossy(data).into_owned(),
        // TeletexString in practice carries Latin-1.
        Tag::T61String => data.iter().map(|&b| b as char).collect(),
        Tag::BmpString => {
            let units: Vec<u16> = data
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => format!("#{}", hex::encode_upper(any.as_bytes())),
    }
}

/// Decodes a BER TLV holding a string type into its text (for `#hex` RFC 2253 values).
fn ber_string(der: &[u8]) -> Option<String> {
    use x509_parser::der_parser::asn1_rs::{Any, FromDer};
    let (_, any) = Any::from_der(der).ok()?;
    Some(attribute_string(&any))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_specials_and_keeps_utf8() {
        let cases = [
            ("Bank, Ærø & Co AS", "Bank\\, Ærø & Co AS"),
            ("#x ", "\\#x\\ "),
            ("a+b", "a\\+b"),
        ];
        for (value, escaped) in cases {
            assert_eq!(escape_value(value), escaped, "{value:?}");
        }
    }

    #[test]
    fn parses_openssl_form_with_hex_escapes() {
        let dn = DistinguishedName::parse_rfc2253(
            "CN=Sandbox CA #2,organizationIdentifier=NTRNO-123456789,O=Bank\\, \\C3\\86r\\C3\\B8 & Co AS,C=NO",
        )
        .unwrap();
        assert_eq!(dn.attributes.len(), 4);
        assert_eq!(dn.attributes[2].value, "Bank, Ærø & Co AS");
        assert_eq!(dn.attributes[1].oid, "2.5.4.97");
        let again = DistinguishedName::parse_rfc2253(&dn.to_rfc2253()).unwrap();
        assert!(dn.matches(&again));
    }

    #[test]
    fn parses_hash_values_and_oids() {
        // 0C 03 "abc" is a UTF8String.
        let dn = DistinguishedName::parse_rfc2253("2.5.4.3=#0C03616263,C=NO").unwrap();
        assert_eq!(dn.attributes[0].value, "abc");
        assert_eq!(dn.attributes[0].oid, "2.5.4.3");
        let other = DistinguishedName::parse_rfc2253("CN=ABC, C=no").unwrap();
        assert!(dn.matches(&other));
        let different = DistinguishedName::parse_rfc2253("CN=abd,C=NO").unwrap();
        assert!(!dn.matches(&different));
        assert!(dn.difference(&different).unwrap().contains("abd"));
    }

    #[test]
    fn rejects_garbage() {
        assert!(DistinguishedName::parse_rfc2253("no equals here").is_err());
        assert!(DistinguishedName::parse_rfc2253("XYZ=1").is_err());
        assert!(DistinguishedName::parse_rfc2253("CN=a\\").is_err());
    }
}
