//! The known state of an initialized sandbox (interface document, Endpoints: "Sandbox
//! initialization creates private customers (two accounts and a card account each) and
//! corporate customers (two accounts each)").
//!
//! Three private customers, two corporate customers, and two agreements that let a private
//! customer act for a corporate one (CORPORATE context). All ids are UUID v5 of fixed names
//! under [`namespace`], so every initialization gives the same ids.
//!
//! | customerNumber | name            | type      | agreements                         |
//! |----------------|-----------------|-----------|------------------------------------|
//! | 31125461118    | Kari Nordmann   | PRIVATE   | Fjordbris Bakeri AS (both accounts)|
//! | 15038546101    | Ola Nordmann    | PRIVATE   | Nordlys Konsult AS (Driftskonto)   |
//! | 02079146148    | Ingrid Berg     | PRIVATE   | none                               |
//! | 912345602      | Fjordbris Bakeri AS | CORPORATE |                                |
//! | 987654309      | Nordlys Konsult AS  | CORPORATE |                                |
//!
//! Private customerNumbers are mock national identity numbers (11 digits), corporate ones
//! mock organisation numbers (9 digits).

use uuid::Uuid;

use crate::sandbox::model::{Account, AccountKind, Agreement, CardAccount, Customer, SeedData};
use crate::xs2a::check_digits::{BBAN_WEIGHTS, mod11};
use crate::xs2a::model::CustomerType;

/// The namespace of all sandbox UUID v5 ids.
pub fn namespace() -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:psd2-console:sandbox")
}

fn id(name: &str) -> Uuid {
    Uuid::new_v5(&namespace(), name.as_bytes())
}

/// The currency of every seeded account.
pub const CURRENCY: &str = "NOK";

struct PrivateSeed {
    number: &'static str,
    name: &'static str,
    employer: &'static str,
    card_last4: &'static str,
}

struct CorporateSeed {
    number: &'static str,
    name: &'static str,
}

const PRIVATE: [PrivateSeed; 3] = [
    PrivateSeed {
        number: "31125461118",
        name: "Kari Nordmann",
        employer: "Vestlandet Sykehus HF",
        card_last4: "4471",
    },
    PrivateSeed {
        number: "15038546101",
        name: "Ola Nordmann",
        employer: "Statens Veivesen Region Nord",
        card_last4: "9012",
    },
    PrivateSeed {
        number: "02079146148",
        name: "Ingrid Berg",
        employer: "Havbris Energi AS",
        card_last4: "2388",
    },
];

const CORPORATE: [CorporateSeed; 2] = [
    CorporateSeed {
        number: "912345602",
        name: "Fjordbris Bakeri AS",
    },
    CorporateSeed {
        number: "987654309",
        name: "Nordlys Konsult AS",
    },
];

/// A Norwegian BBAN (11 digits, MOD11 check digit) for the `n`th seeded account.
fn bban(n: u32) -> String {
    let mut body = 120_000 + n * 7919;
    loop {
        let digits = format!("1503{:06}", body % 1_000_000);
        if let Some(check) = mod11(&digits, &BBAN_WEIGHTS) {
            return format!("{digits}{check}");
        }
        body += 1;
    }
}

/// A Norwegian BBAN (bank prefix `1503`, MOD11 check digit) from any number, for accounts
/// created through sandbox management: the six digits after the prefix come from `r`, moved
/// on until the check digit exists.
pub fn bban_from(r: u64) -> String {
    let mut body = r % 1_000_000;
    loop {
        let digits = format!("1503{body:06}");
        if let Some(check) = mod11(&digits, &BBAN_WEIGHTS) {
            return format!("{digits}{check}");
        }
        body = (body + 1) % 1_000_000;
    }
}

/// A mock Norwegian national identity number (11 digits: birth date `DDMMYY`, individual
/// number, two valid MOD11 check digits) from any number: the customerNumber of created
/// private customers (interface document, Authentication 14: sandbox SCA needs "a mocked
/// national identification number or the customerNumber").
pub fn national_id(r: u64) -> String {
    let day = r % 28 + 1;
    let month = (r / 28) % 12 + 1;
    let year = (r / 336) % 100;
    let mut individual = (r / 33_600) % 500;
    loop {
        let base = format!("{day:02}{month:02}{year:02}{individual:03}");
        if let Some(k1) = mod11(&base, &[3, 7, 6, 1, 8, 9, 4, 5, 2]) {
            let with_k1 = format!("{base}{k1}");
            if let Some(k2) = mod11(&with_k1, &BBAN_WEIGHTS) {
                return format!("{with_k1}{k2}");
            }
        }
        individual = (individual + 1) % 500;
    }
}

/// A mock Norwegian organisation number (9 digits starting with 8 or 9, MOD11 check digit)
/// from any number: the customerNumber of created corporate customers.
pub fn organisation_number(r: u64) -> String {
    let mut body = 80_000_000 + r % 20_000_000;
    loop {
        let digits = body.to_string();
        if let Some(check) = mod11(&digits, &[3, 2, 7, 6, 5, 4, 3, 2]) {
            return format!("{digits}{check}");
        }
        body = 80_000_000 + (body + 1 - 80_000_000) % 20_000_000;
    }
}

/// A masked card number like the seed's (`516812******` and four digits from `r`).
pub fn masked_pan(r: u64) -> String {
    format!("516812******{:04}", r % 10_000)
}

/// Employers named on the salary payments of created private customers.
pub const EMPLOYERS: [&str; 4] = [
    "Fjellheim Kommune",
    "Nordkyst Sjømat AS",
    "Bergen Byggservice AS",
    "Trøndelag Fylkeskommune",
];

/// The accounts every customer gets by default, like the seed's: PRIVATE a current account
/// (`Brukskonto`, CACC) and a savings account (`Sparekonto`, SVGS); CORPORATE an operating
/// (`Driftskonto`, CACC) and a settlement account (`Oppgjørskonto`, CACC). Each item:
/// (kind, name prefix, product, cashAccountType, opening balance in minor units).
pub fn default_accounts(
    kind: CustomerType,
) -> [(AccountKind, &'static str, &'static str, &'static str, i64); 2] {
    match kind {
        CustomerType::Private => [
            (
                AccountKind::Current,
                "Brukskonto",
                "Brukskonto",
                "CACC",
                1_800_000,
            ),
            (
                AccountKind::Savings,
                "Sparekonto",
                "Sparekonto Pluss",
                "SVGS",
                8_500_000,
            ),
        ],
        CustomerType::Corporate => [
            (
                AccountKind::Operating,
                "Driftskonto",
                "Bedriftskonto",
                "CACC",
                35_000_000,
            ),
            (
                AccountKind::Settlement,
                "Oppgjørskonto",
                "Bedriftskonto Oppgjør",
                "CACC",
                6_000_000,
            ),
        ],
    }
}

/// A seed customer, its id derived from its `number` (`customer:{number}`).
fn seed_customer(number: &str, kind: CustomerType, name: &str, employer: &str) -> Customer {
    Customer {
        id: id(&format!("customer:{number}")),
        number: number.to_string(),
        kind,
        name: name.to_string(),
        employer: employer.to_string(),
    }
}

/// Adds the [`default_accounts`] of `customer` to `data`, numbered by `next_bban`, each
/// opening balance raised by the matching `raise` (minor units).
fn push_default_accounts(
    data: &mut SeedData,
    customer: &Customer,
    next_bban: &mut impl FnMut() -> String,
    raise: [i64; 2],
) {
    for ((kind, name, product, cat, opening), raise) in
        default_accounts(customer.kind).into_iter().zip(raise)
    {
        let bban = next_bban();
        let account_id = id(&format!("account:{bban}"));
        let spec = (kind, name, product, cat, opening + raise);
        data.accounts
            .push(default_account(customer, spec, account_id, bban));
    }
}

/// The account of `customer` that `spec` (an item of [`default_accounts`]) describes, with
/// `id` and `bban`: named `{name prefix} {customer name}`, in [`CURRENCY`], with generated
/// history (the seed's accounts, and those of a customer created without `accounts`).
pub fn default_account(
    customer: &Customer,
    spec: (AccountKind, &str, &str, &str, i64),
    id: Uuid,
    bban: String,
) -> Account {
    let (kind, name, product, cat, opening) = spec;
    Account {
        id,
        owner: customer.id,
        kind,
        bban,
        currency: CURRENCY.into(),
        name: format!("{name} {}", customer.name),
        product: product.into(),
        cash_account_type: cat.into(),
        opening_balance: opening,
        generated: true,
    }
}

/// Builds the seed: customers, accounts, card accounts and agreements.
pub fn seed() -> SeedData {
    let mut data = SeedData::default();
    let mut n = 0;
    let mut next_bban = || {
        n += 1;
        bban(n)
    };
    for (i, p) in PRIVATE.iter().enumerate() {
        let customer = seed_customer(p.number, CustomerType::Private, p.name, p.employer);
        // Each private customer's opening balances rise by a step: 3 500 NOK on the current
        // account, 12 000 NOK on the savings account.
        let step = i64::try_from(i).unwrap_or(0);
        push_default_accounts(
            &mut data,
            &customer,
            &mut next_bban,
            [350_000 * step, 1_200_000 * step],
        );
        let masked_pan = format!("516812******{}", p.card_last4);
        data.card_accounts.push(CardAccount {
            id: id(&format!("card:{masked_pan}")),
            owner: customer.id,
            masked_pan,
            currency: CURRENCY.into(),
            name: format!("Mastercard Gold {}", p.name),
            product: "Kredittkort".into(),
            status: "enabled".into(),
        });
        data.customers.push(customer);
    }
    for c in &CORPORATE {
        let customer = seed_customer(c.number, CustomerType::Corporate, c.name, "");
        push_default_accounts(&mut data, &customer, &mut next_bban, [0, 0]);
        data.customers.push(customer);
    }
    // Kari acts for Fjordbris Bakeri on both its accounts; Ola for Nordlys Konsult on its
    // operating account only.
    for (holder, corporate, only_first) in [(0, 0, false), (1, 1, true)] {
        let holder = &data.customers[holder];
        let corporate = &data.customers[PRIVATE.len() + corporate];
        let mut accounts: Vec<Uuid> = data
            .accounts
            .iter()
            .filter(|a| a.owner == corporate.id)
            .map(|a| a.id)
            .collect();
        if only_first {
            accounts.truncate(1);
        }
        data.agreements.push(Agreement {
            id: id(&format!("agreement:{}:{}", corporate.number, holder.number)),
            name: format!("{} – fullmakt for {}", corporate.name, holder.name),
            corporate: corporate.id,
            holder: holder.id,
            accounts,
        });
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_is_deterministic_and_well_formed() {
        let a = seed();
        let b = seed();
        assert_eq!(a.customers, b.customers);
        assert_eq!(a.accounts, b.accounts);
        assert_eq!(a.customers.len(), 5);
        for c in &a.customers {
            let n = a.accounts.iter().filter(|x| x.owner == c.id).count();
            assert_eq!(n, 2, "{} has two accounts", c.name);
            let cards = a.card_accounts.iter().filter(|x| x.owner == c.id).count();
            let expected = usize::from(c.kind == CustomerType::Private);
            assert_eq!(cards, expected);
        }
        let mut bbans: Vec<&str> = a.accounts.iter().map(|x| x.bban.as_str()).collect();
        bbans.sort();
        bbans.dedup();
        assert_eq!(bbans.len(), a.accounts.len());
        assert!(bbans.iter().all(|b| b.len() == 11));
        assert!(a.accounts.iter().all(|x| x.name.chars().count() <= 70));
        assert_eq!(bban(1), bban(1));
    }

    #[test]
    fn generated_numbers_are_valid() {
        for r in [0u64, 1, 7, 99_999, 123_456_789, u64::MAX] {
            let b = bban_from(r);
            assert_eq!(b.len(), 11);
            assert!(mod11(&b[..10], &[5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) == b[10..].parse().ok());
            let n = national_id(r);
            assert_eq!(n.len(), 11, "{n}");
            assert!(n.bytes().all(|c| c.is_ascii_digit()));
            let o = organisation_number(r);
            assert_eq!(o.len(), 9, "{o}");
            assert!(o.starts_with('8') || o.starts_with('9'));
            assert_eq!(masked_pan(r).len(), 16);
        }
        // A real-format example: 01010012356 is a valid test number.
        assert_eq!(mod11("010100123", &[3, 7, 6, 1, 8, 9, 4, 5, 2]), Some(5));
    }
}
