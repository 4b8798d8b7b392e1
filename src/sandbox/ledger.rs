//! Generated account history: deterministic booked and pending transactions and the balances
//! they add up to.
//!
//! Each calendar day's entries are a pure function of (customer, account kind, date), so a
//! booked entry keeps its `transactionId` however the clock moves (interface document,
//! Account data facts: "For booked transactions the transactionId is stable"). Booked entries
//! run from [`history_start`] to yesterday; pending entries are dated today and may change
//! from day to day.

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use uuid::Uuid;

use super::store::{Account, AccountKind, CardAccount, Customer};

/// History starts at this date, or 400 days before today when that is earlier, so there is
/// always more than a year of booked transactions.
pub const HISTORY_ANCHOR: (i32, u32, u32) = (2024, 1, 1);

/// One generated entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Stable for booked entries: UUID v5 of the date and index under the account id.
    pub id: Uuid,
    /// `None` for pending entries.
    pub booking_date: Option<NaiveDate>,
    pub value_date: NaiveDate,
    /// Minor units; negative for debits.
    pub amount: i64,
    /// Creditor name for debits, debtor name for credits.
    pub counterparty: String,
    pub text: String,
    /// Proprietary bank transaction code.
    pub code: &'static str,
}

/// The first day of booked history for `today`.
pub fn history_start(today: NaiveDate) -> NaiveDate {
    let (y, m, d) = HISTORY_ANCHOR;
    let anchor = NaiveDate::from_ymd_opt(y, m, d).unwrap_or(NaiveDate::MIN);
    let back = today
        .checked_sub_signed(Duration::days(400))
        .unwrap_or(NaiveDate::MIN);
    anchor.min(back)
}

/// Booked entries from [`history_start`] to yesterday, newest first.
pub fn booked(account: &Account, owner: &Customer, today: NaiveDate) -> Vec<Entry> {
    let mut out = Vec::new();
    let start = history_start(today);
    let mut day = today.pred_opt().unwrap_or(today);
    while day >= start {
        let mut entries = booked_on(account, owner, day);
        entries.reverse();
        out.extend(entries);
        match day.pred_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    out
}

/// Today's pending entries (valueDate today, no bookingDate).
pub fn pending(account: &Account, owner: &Customer, today: NaiveDate) -> Vec<Entry> {
    let seed = seed_of(owner.id, account.kind) ^ 0x005e_ed0f_9e4d_1e57;
    let mut rng = Rng::for_day(seed, today);
    let raw: Vec<Raw> = match account.kind {
        AccountKind::Current => (0..1 + rng.below(3)).map(|_| purchase(&mut rng)).collect(),
        AccountKind::Savings => Vec::new(),
        AccountKind::Operating => vec![supplier_payment(&mut rng)],
        AccountKind::Settlement => vec![Raw::credit(
            rng.range(250_000, 2_800_000),
            "Kortoppgjør Terminal",
            "Oppgjør bankterminal (foreløpig)",
            "OPPGJØR",
        )],
    };
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| r.into_entry(account.id, None, today, &format!("pending/{today}/{i}")))
        .collect()
}

/// Balances of an account at `today`, minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balances {
    /// Opening balance plus all booked entries (reference date: yesterday).
    pub closing_booked: i64,
    /// Closing booked plus today's pending entries (reference date: today).
    pub expected: i64,
}

/// Computes the balances from the opening balance and the generated entries.
pub fn balances(account: &Account, owner: &Customer, today: NaiveDate) -> Balances {
    let booked: i64 = booked(account, owner, today).iter().map(|e| e.amount).sum();
    let pending: i64 = pending(account, owner, today)
        .iter()
        .map(|e| e.amount)
        .sum();
    let closing_booked = account.opening_balance.saturating_add(booked);
    Balances {
        closing_booked,
        expected: closing_booked.saturating_add(pending),
    }
}

/// A standing order of an account (Berlin Group `standingOrderDetails`, reported with
/// `bookingStatus=all` as an `information` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingOrder {
    /// Stable: UUID v5 of the order's name under the account id.
    pub id: Uuid,
    pub start_date: NaiveDate,
    /// ISO 20022 `EventFrequency7Code` as Berlin Group spells it (`Monthly`).
    pub frequency: &'static str,
    /// Day of month it runs.
    pub day_of_month: u32,
    /// Minor units, negative (a debit of this account).
    pub amount: i64,
    /// The creditor account (another account of the owner).
    pub creditor_bban: String,
    pub creditor_name: String,
    pub text: String,
}

/// The standing orders behind the recurring transfers of the generated history: a private
/// current account pays 3 000.00 to the owner's savings account on the 26th of every month.
/// Other accounts have none.
pub fn standing_orders(
    account: &Account,
    owner: &Customer,
    owner_accounts: &[Account],
    today: NaiveDate,
) -> Vec<StandingOrder> {
    if account.kind != AccountKind::Current {
        return Vec::new();
    }
    let Some(savings) = owner_accounts
        .iter()
        .find(|a| a.kind == AccountKind::Savings)
    else {
        return Vec::new();
    };
    let start = history_start(today);
    let start = start
        .with_day(26)
        .filter(|d| *d >= start)
        .or_else(|| {
            start
                .checked_add_months(chrono::Months::new(1))
                .and_then(|d| d.with_day(26))
        })
        .unwrap_or(start);
    vec![StandingOrder {
        id: Uuid::new_v5(&account.id, b"standing-order/savings"),
        start_date: start,
        frequency: "Monthly",
        day_of_month: 26,
        amount: -300_000,
        creditor_bban: savings.bban.clone(),
        creditor_name: owner.name.clone(),
        text: "Overføring til Sparekonto".into(),
    }]
}

// ---------------------------------------------------------------------------------------
// Card accounts

/// Credit limit of every seeded card account, minor units (100 000.00).
pub const CARD_CREDIT_LIMIT: i64 = 10_000_000;

/// Day of month the card invoice is paid (moved back to Friday on a weekend).
pub const CARD_INVOICE_DAY: u32 = 20;

/// The amount in the currency the card was used in, for purchases abroad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginalAmount {
    pub currency: &'static str,
    /// Minor units, same sign as the billed amount.
    pub amount: i64,
    /// NOK per unit of `currency`, four decimals (`115230` = 11.5230).
    pub rate_e4: i64,
}

/// Where the card was used (Berlin Group `cardAcceptorId`, `cardAcceptorAddress`,
/// `merchantCategoryCode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acceptor {
    pub name: &'static str,
    /// ≤ 35 characters.
    pub id: String,
    pub town: &'static str,
    /// ISO 3166 alpha-2.
    pub country: &'static str,
    /// ISO 18245, 4 digits.
    pub mcc: &'static str,
    pub terminal: String,
}

/// One card account entry: a purchase (with [`Acceptor`]) or an invoice payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardEntry {
    /// Stable across reads and clock moves: UUID v5 of the day and index under the card id;
    /// the same while pending and after booking.
    pub id: Uuid,
    pub transaction_date: NaiveDate,
    /// `None` while pending.
    pub booking_date: Option<NaiveDate>,
    /// Hour and minute (UTC) of the purchase.
    pub time: (u32, u32),
    /// Billed amount in the card account's currency (NOK), minor units; negative = purchase.
    pub amount: i64,
    /// Set for purchases in another currency.
    pub original: Option<OriginalAmount>,
    /// Set for purchases.
    pub acceptor: Option<Acceptor>,
    pub text: String,
    pub code: &'static str,
}

impl CardEntry {
    /// Whether the purchase is on an issued invoice at `today` (its month has ended).
    pub fn invoiced(&self, today: NaiveDate) -> bool {
        self.acceptor.is_some()
            && (self.transaction_date.year(), self.transaction_date.month())
                < (today.year(), today.month())
    }
}

const CARD_SHOPS: [(&str, &str, &str, i64, i64); 10] = [
    ("REMA 1000 Grünerløkka", "Oslo", "5411", 4_900, 89_000),
    ("Coop Extra Sentrum", "Bergen", "5411", 5_900, 112_000),
    ("Circle K Sandvika", "Sandvika", "5541", 25_000, 98_000),
    ("Vinmonopolet Bogstadveien", "Oslo", "5921", 16_900, 74_000),
    ("Elkjøp Lagunen", "Bergen", "5732", 19_900, 899_000),
    ("Peppes Pizza Aker Brygge", "Oslo", "5812", 24_900, 79_900),
    ("Narvesen Oslo S", "Oslo", "5994", 2_900, 18_900),
    ("Apotek 1 Storo", "Oslo", "5912", 4_900, 64_900),
    ("XXL Alnabru", "Oslo", "5941", 29_900, 249_900),
    ("Norwegian Air Shuttle", "Fornebu", "4511", 59_900, 289_900),
];

/// (name, town, country, currency, MCC, low, high in minor units of the currency).
const CARD_SHOPS_ABROAD: [(&str, &str, &str, &str, &str, i64, i64); 6] = [
    ("Café de Flore", "Paris", "FR", "EUR", "5812", 800, 4_500),
    (
        "El Corte Inglés",
        "Madrid",
        "ES",
        "EUR",
        "5311",
        2_500,
        18_000,
    ),
    (
        "ICA Maxi Haninge",
        "Haninge",
        "SE",
        "SEK",
        "5411",
        8_900,
        120_000,
    ),
    ("Tivoli", "København", "DK", "DKK", "7996", 9_500, 65_000),
    (
        "Amazon Marketplace",
        "Seattle",
        "US",
        "USD",
        "5942",
        999,
        8_999,
    ),
    ("Pret A Manger", "London", "GB", "GBP", "5814", 450, 1_500),
];

/// NOK per unit, four decimals.
fn rate_e4(currency: &str) -> i64 {
    match currency {
        "EUR" => 115_230,
        "SEK" => 10_120,
        "DKK" => 15_450,
        "USD" => 106_120,
        "GBP" => 134_210,
        _ => 10_000,
    }
}

fn card_seed(owner: Uuid) -> u64 {
    seed_of(owner, AccountKind::Current) ^ 0x00ca_4d00_ca4d_0001
}

fn acceptor_id(name: &str) -> String {
    let u = Uuid::new_v5(
        &super::seed::namespace(),
        format!("acceptor:{name}").as_bytes(),
    );
    format!("{:015}", u.as_u128() % 1_000_000_000_000_000)
}

/// The purchases made with the card on `day` (without booking date).
fn card_purchases_on(card: &CardAccount, owner: &Customer, day: NaiveDate) -> Vec<CardEntry> {
    let mut rng = Rng::for_day(card_seed(owner.id), day);
    let n = match rng.below(100) {
        0..=54 => 0,
        55..=89 => 1,
        _ => 2,
    };
    (0..n)
        .map(|i| {
            let time = (
                u32::try_from(8 + rng.below(14)).unwrap_or(12),
                u32::try_from(rng.below(60)).unwrap_or(0),
            );
            let id = Uuid::new_v5(&card.id, format!("card/{day}/{i}").as_bytes());
            let terminal = format!("T{:07}", rng.below(10_000_000));
            if rng.chance(12) {
                let k = usize::try_from(rng.below(CARD_SHOPS_ABROAD.len() as u64)).unwrap_or(0);
                let (name, town, country, currency, mcc, lo, hi) = CARD_SHOPS_ABROAD
                    .get(k)
                    .copied()
                    .unwrap_or(CARD_SHOPS_ABROAD[0]);
                let original = rng.range(lo, hi);
                let rate = rate_e4(currency);
                let nok = (original.saturating_mul(rate) + 5_000) / 10_000;
                CardEntry {
                    id,
                    transaction_date: day,
                    booking_date: None,
                    time,
                    amount: -nok,
                    original: Some(OriginalAmount {
                        currency,
                        amount: -original,
                        rate_e4: rate,
                    }),
                    acceptor: Some(Acceptor {
                        name,
                        id: acceptor_id(name),
                        town,
                        country,
                        mcc,
                        terminal,
                    }),
                    text: format!("Varekjøp {name} {town}"),
                    code: "VARER UTLAND",
                }
            } else {
                let k = usize::try_from(rng.below(CARD_SHOPS.len() as u64)).unwrap_or(0);
                let (name, town, mcc, lo, hi) = CARD_SHOPS.get(k).copied().unwrap_or(CARD_SHOPS[0]);
                CardEntry {
                    id,
                    transaction_date: day,
                    booking_date: None,
                    time,
                    amount: -rng.range(lo, hi),
                    original: None,
                    acceptor: Some(Acceptor {
                        name,
                        id: acceptor_id(name),
                        town,
                        country: "NO",
                        mcc,
                        terminal,
                    }),
                    text: format!("Varekjøp {name}"),
                    code: "VARER",
                }
            }
        })
        .collect()
}

/// The invoice payment booked on `day`, if it is the invoice day: it pays the previous
/// month's purchases made since [`history_start`].
fn card_payment_on(
    card: &CardAccount,
    owner: &Customer,
    day: NaiveDate,
    start: NaiveDate,
) -> Option<CardEntry> {
    if !is_business_day_for(day, CARD_INVOICE_DAY) {
        return None;
    }
    let this_month = day.with_day(1)?;
    let prev_month = this_month.checked_sub_months(chrono::Months::new(1))?;
    let mut d = prev_month.max(start);
    let mut total = 0i64;
    while d < this_month {
        total = total.saturating_add(
            card_purchases_on(card, owner, d)
                .iter()
                .map(|e| e.amount)
                .sum::<i64>(),
        );
        d = d.succ_opt()?;
    }
    if total == 0 {
        return None;
    }
    Some(CardEntry {
        id: Uuid::new_v5(&card.id, format!("card-payment/{day}").as_bytes()),
        transaction_date: day,
        booking_date: Some(day),
        time: (6, 0),
        amount: -total,
        original: None,
        acceptor: None,
        text: format!("Innbetaling kredittkortfaktura {}", month_name(prev_month)),
        code: "INNBETALING",
    })
}

/// Booked card entries, newest first: a purchase made on day d is booked on d + 1; booked
/// means booked up to yesterday (as for accounts). History starts at [`history_start`].
pub fn card_booked(card: &CardAccount, owner: &Customer, today: NaiveDate) -> Vec<CardEntry> {
    let start = history_start(today);
    let mut out = Vec::new();
    let mut day = today.pred_opt().unwrap_or(today);
    while day > start {
        let mut entries: Vec<CardEntry> = Vec::new();
        if let Some(p) = card_payment_on(card, owner, day, start) {
            entries.push(p);
        }
        if let Some(made) = day.pred_opt() {
            entries.extend(
                card_purchases_on(card, owner, made)
                    .into_iter()
                    .map(|mut e| {
                        e.booking_date = Some(day);
                        e
                    }),
            );
        }
        entries.reverse();
        out.extend(entries);
        match day.pred_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    out
}

/// Pending card entries, newest first: purchases of yesterday and today (not booked yet).
pub fn card_pending(card: &CardAccount, owner: &Customer, today: NaiveDate) -> Vec<CardEntry> {
    let mut out = card_purchases_on(card, owner, today);
    out.reverse();
    if let Some(y) = today.pred_opt() {
        let mut e = card_purchases_on(card, owner, y);
        e.reverse();
        out.extend(e);
    }
    out
}

/// Card balances at `today`, minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardBalances {
    /// Sum of booked entries (negative: owed to the bank).
    pub interim_booked: i64,
    /// Credit limit plus booked plus pending.
    pub interim_available: i64,
}

/// Computes the card balances from the generated entries.
pub fn card_balances(card: &CardAccount, owner: &Customer, today: NaiveDate) -> CardBalances {
    let booked: i64 = card_booked(card, owner, today)
        .iter()
        .map(|e| e.amount)
        .sum();
    let pending: i64 = card_pending(card, owner, today)
        .iter()
        .map(|e| e.amount)
        .sum();
    CardBalances {
        interim_booked: booked,
        interim_available: CARD_CREDIT_LIMIT
            .saturating_add(booked)
            .saturating_add(pending),
    }
}

// ---------------------------------------------------------------------------------------
// Generation

/// splitmix64: small, deterministic on every platform.
struct Rng(u64);

impl Rng {
    fn for_day(seed: u64, day: NaiveDate) -> Self {
        let d = u64::from(day.num_days_from_ce().unsigned_abs());
        let mut r = Rng(seed ^ d.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.saturating_sub(lo).max(0).unsigned_abs() + 1;
        lo + i64::try_from(self.below(span)).unwrap_or(0)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        let i = usize::try_from(self.below(items.len() as u64)).unwrap_or(0);
        items.get(i).copied().unwrap_or("")
    }
}

fn seed_of(customer: Uuid, kind: AccountKind) -> u64 {
    let b = customer.as_bytes();
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate() {
        v ^= u64::from(*byte) << ((i % 8) * 8);
    }
    let k = match kind {
        AccountKind::Current => 0x1111,
        AccountKind::Savings => 0x2222,
        AccountKind::Operating => 0x3333,
        AccountKind::Settlement => 0x4444,
    };
    v ^ k
}

/// An entry before it gets its id and dates.
struct Raw {
    amount: i64,
    counterparty: String,
    text: String,
    code: &'static str,
}

impl Raw {
    fn debit(amount: i64, counterparty: &str, text: impl Into<String>, code: &'static str) -> Self {
        Raw {
            amount: -amount.abs(),
            counterparty: counterparty.to_string(),
            text: text.into(),
            code,
        }
    }

    fn credit(
        amount: i64,
        counterparty: &str,
        text: impl Into<String>,
        code: &'static str,
    ) -> Self {
        Raw {
            amount: amount.abs(),
            counterparty: counterparty.to_string(),
            text: text.into(),
            code,
        }
    }

    fn into_entry(
        self,
        account: Uuid,
        booking_date: Option<NaiveDate>,
        value_date: NaiveDate,
        name: &str,
    ) -> Entry {
        Entry {
            id: Uuid::new_v5(&account, name.as_bytes()),
            booking_date,
            value_date,
            amount: self.amount,
            counterparty: self.counterparty,
            text: self.text,
            code: self.code,
        }
    }
}

const MONTHS: [&str; 12] = [
    "januar",
    "februar",
    "mars",
    "april",
    "mai",
    "juni",
    "juli",
    "august",
    "september",
    "oktober",
    "november",
    "desember",
];

fn month_name(d: NaiveDate) -> &'static str {
    MONTHS
        .get(usize::try_from(d.month0()).unwrap_or(0))
        .copied()
        .unwrap_or("")
}

fn is_weekend(d: NaiveDate) -> bool {
    matches!(d.weekday(), Weekday::Sat | Weekday::Sun)
}

/// Whether `d` is the business day used for day-of-month `dom` (moved back to Friday when
/// it falls on a weekend).
fn is_business_day_for(d: NaiveDate, dom: u32) -> bool {
    if is_weekend(d) {
        return false;
    }
    let Some(nominal) = d.with_day(dom) else {
        return false;
    };
    let actual = match nominal.weekday() {
        Weekday::Sat => nominal.pred_opt().unwrap_or(nominal),
        Weekday::Sun => nominal
            .pred_opt()
            .and_then(|x| x.pred_opt())
            .unwrap_or(nominal),
        _ => nominal,
    };
    actual == d
}

fn booked_on(account: &Account, owner: &Customer, day: NaiveDate) -> Vec<Entry> {
    let raw = match account.kind {
        AccountKind::Current => current_day(owner, day),
        AccountKind::Savings => savings_day(owner, day),
        AccountKind::Operating => operating_day(owner, day),
        AccountKind::Settlement => settlement_day(owner, day),
    };
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| r.into_entry(account.id, Some(day), day, &format!("booked/{day}/{i}")))
        .collect()
}

const MERCHANTS: [(&str, i64, i64); 16] = [
    ("REMA 1000", 4_900, 89_000),
    ("KIWI", 3_500, 76_000),
    ("Coop Extra", 5_900, 112_000),
    ("Meny", 8_900, 145_000),
    ("Vinmonopolet", 16_900, 74_000),
    ("Ruter", 4_200, 89_900),
    ("Vy", 9_900, 129_000),
    ("Narvesen", 2_900, 18_900),
    ("Apotek 1", 4_900, 64_900),
    ("XXL Sport", 29_900, 249_900),
    ("Clas Ohlson", 4_990, 89_900),
    ("Circle K", 25_000, 98_000),
    ("Espresso House", 4_900, 15_800),
    ("Peppes Pizza", 24_900, 79_900),
    ("IKEA Furuset", 9_900, 349_900),
    ("Elkjøp", 19_900, 899_000),
];

fn purchase(rng: &mut Rng) -> Raw {
    let i = usize::try_from(rng.below(MERCHANTS.len() as u64)).unwrap_or(0);
    let (name, lo, hi) = MERCHANTS.get(i).copied().unwrap_or(MERCHANTS[0]);
    Raw::debit(rng.range(lo, hi), name, format!("Varekjøp {name}"), "VARER")
}

fn current_day(owner: &Customer, day: NaiveDate) -> Vec<Raw> {
    let seed = seed_of(owner.id, AccountKind::Current);
    let mut fixed = Rng(seed);
    let salary = fixed.range(3_800_000, 5_200_000) / 5_000 * 5_000;
    let mortgage = fixed.range(980_000, 1_650_000);
    let mut rng = Rng::for_day(seed, day);
    let mut out = Vec::new();
    let month = month_name(day);
    let year = day.year();
    if is_business_day_for(day, 25) {
        out.push(Raw::credit(
            salary,
            &owner.employer,
            format!("Lønn {month} {year}"),
            "LØNN",
        ));
        if day.month() == 6 {
            out.push(Raw::credit(
                salary / 2,
                &owner.employer,
                format!("Feriepenger {year}"),
                "LØNN",
            ));
        }
    }
    if is_business_day_for(day, 1) {
        out.push(Raw::debit(
            mortgage,
            "Nordbank Boliglån",
            format!("Terminbeløp boliglån {month}"),
            "AVTALEGIRO",
        ));
    }
    match day.day() {
        5 => out.push(Raw::debit(
            12_900,
            "Strømmetjenesten AB",
            "Abonnement",
            "VARER",
        )),
        12 => {
            let winter = matches!(day.month(), 11 | 12 | 1 | 2 | 3);
            let (lo, hi) = if winter {
                (140_000, 320_000)
            } else {
                (45_000, 110_000)
            };
            out.push(Raw::debit(
                rng.range(lo, hi),
                "Nordavind Strøm AS",
                format!("Strøm {month}"),
                "EFAKTURA",
            ));
        }
        20 => out.push(Raw::debit(
            39_900,
            "Fjellnett Mobil AS",
            format!("Mobilabonnement {month}"),
            "AVTALEGIRO",
        )),
        26 => out.push(Raw::debit(
            300_000,
            &owner.name,
            "Overføring til Sparekonto",
            "OVERFØRSEL",
        )),
        _ => {}
    }
    let n = match rng.below(100) {
        0..=24 => 0,
        25..=59 => 1,
        60..=84 => 2,
        _ => 3,
    };
    for _ in 0..n {
        out.push(purchase(&mut rng));
    }
    out
}

fn savings_day(owner: &Customer, day: NaiveDate) -> Vec<Raw> {
    let seed = seed_of(owner.id, AccountKind::Savings);
    let mut rng = Rng::for_day(seed, day);
    let mut out = Vec::new();
    if day.day() == 26 {
        out.push(Raw::credit(
            300_000,
            &owner.name,
            "Overføring fra Brukskonto",
            "OVERFØRSEL",
        ));
    }
    if rng.chance(45) {
        out.push(Raw::credit(
            rng.range(100, 999),
            &owner.name,
            "Roundup-sparing",
            "OVERFØRSEL",
        ));
    }
    if day.month() == 12 && day.day() == 31 {
        out.push(Raw::credit(
            rng.range(150_000, 420_000),
            "Nordbank",
            format!("Renter {}", day.year()),
            "RENTER",
        ));
    }
    out
}

const B2B_CUSTOMERS: [&str; 8] = [
    "Kaffebrenneriet Torget AS",
    "Hotell Bryggen AS",
    "Storkiosken Sentrum",
    "Kantine Nord AS",
    "Bergen Catering AS",
    "Fjordhotellet AS",
    "Skolekantina Vest",
    "Havnekafeen DA",
];

const SUPPLIERS: [&str; 6] = [
    "Mølla Kornvarer AS",
    "Meieriet Vest SA",
    "Pakk & Emballasje AS",
    "Varmekraft Energi AS",
    "Transportsentralen Vest AS",
    "Kontorpartner AS",
];

fn supplier_payment(rng: &mut Rng) -> Raw {
    let name = rng.pick(&SUPPLIERS);
    let invoice = rng.range(100_000, 999_999);
    Raw::debit(
        rng.range(80_000, 6_500_000),
        name,
        format!("Faktura {invoice}"),
        "GIRO",
    )
}

fn settlement_credit(owner: &Customer, day: NaiveDate) -> Option<i64> {
    if day.weekday() == Weekday::Sun {
        return None;
    }
    let seed = seed_of(owner.id, AccountKind::Settlement);
    let mut rng = Rng::for_day(seed, day);
    Some(rng.range(250_000, 2_800_000))
}

/// Sum of last week's (Monday to Sunday before `monday`) settlement credits.
fn last_week_settlements(owner: &Customer, monday: NaiveDate) -> i64 {
    (1..=7)
        .filter_map(|back| monday.checked_sub_signed(Duration::days(back)))
        .filter_map(|d| settlement_credit(owner, d))
        .sum()
}

fn operating_day(owner: &Customer, day: NaiveDate) -> Vec<Raw> {
    let seed = seed_of(owner.id, AccountKind::Operating);
    let mut fixed = Rng(seed);
    let payroll = fixed.range(16_000_000, 42_000_000) / 10_000 * 10_000;
    let mut rng = Rng::for_day(seed, day);
    let mut out = Vec::new();
    let month = month_name(day);
    if day.weekday() == Weekday::Mon {
        out.push(Raw::credit(
            last_week_settlements(owner, day),
            &owner.name,
            "Overføring fra Oppgjørskonto",
            "OVERFØRSEL",
        ));
    }
    if !is_weekend(day) {
        for _ in 0..1 + rng.below(4) {
            let payer = rng.pick(&B2B_CUSTOMERS);
            let invoice = rng.range(20_000, 29_999);
            out.push(Raw::credit(
                rng.range(150_000, 4_800_000),
                payer,
                format!("Faktura {invoice}"),
                "GIRO",
            ));
        }
        for _ in 0..rng.below(3) {
            out.push(supplier_payment(&mut rng));
        }
    }
    if is_business_day_for(day, 20) {
        out.push(Raw::debit(
            payroll,
            "Ansatte – lønnsutbetaling",
            format!("Lønn {month}"),
            "LØNN",
        ));
    }
    if is_business_day_for(day, 15) && !day.month().is_multiple_of(2) {
        out.push(Raw::debit(
            payroll * 6 / 10,
            "Skatteetaten",
            format!("Forskuddstrekk og arbeidsgiveravgift {month}"),
            "SKATT",
        ));
    }
    if is_business_day_for(day, 10) && day.month().is_multiple_of(2) {
        out.push(Raw::debit(
            rng.range(4_000_000, 12_000_000),
            "Skatteetaten",
            format!("Merverdiavgift termin {}", day.month() / 2),
            "SKATT",
        ));
    }
    out
}

fn settlement_day(owner: &Customer, day: NaiveDate) -> Vec<Raw> {
    let mut out = Vec::new();
    if day.weekday() == Weekday::Mon {
        out.push(Raw::debit(
            last_week_settlements(owner, day),
            &owner.name,
            "Overføring til Driftskonto",
            "OVERFØRSEL",
        ));
    }
    if let Some(amount) = settlement_credit(owner, day) {
        out.push(Raw::credit(
            amount,
            "Kortoppgjør Terminal",
            format!("Oppgjør bankterminal {}", day.format("%d.%m")),
            "OPPGJØR",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::seed::seed;

    #[test]
    fn history_is_long_stable_and_adds_up() {
        let data = seed();
        let today = NaiveDate::from_ymd_opt(2026, 3, 15).unwrap();
        for account in &data.accounts {
            let owner = data
                .customers
                .iter()
                .find(|c| c.id == account.owner)
                .unwrap();
            let a = booked(account, owner, today);
            assert!(a.len() > 300, "{} has {} booked", account.name, a.len());
            let oldest = a.last().unwrap().booking_date.unwrap();
            assert!((today - oldest).num_days() > 365);
            assert!(a.windows(2).all(|w| w[0].booking_date >= w[1].booking_date));
            let later = booked(account, owner, today + Duration::days(3));
            // every booked id of today's view survives a later view with the same content
            for e in a.iter().take(50) {
                assert!(later.contains(e));
            }
            let mut ids: Vec<Uuid> = a.iter().map(|e| e.id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), a.len());
            let b = balances(account, owner, today);
            let sum: i64 = a.iter().map(|e| e.amount).sum();
            assert_eq!(b.closing_booked, account.opening_balance + sum);
            assert!(
                pending(account, owner, today)
                    .iter()
                    .all(|p| p.booking_date.is_none())
            );
        }
    }

    #[test]
    fn card_history_is_stable_and_bounded() {
        let data = seed();
        let today = NaiveDate::from_ymd_opt(2026, 3, 15).unwrap();
        for card in &data.card_accounts {
            let owner = data.customers.iter().find(|c| c.id == card.owner).unwrap();
            let a = card_booked(card, owner, today);
            assert!(a.len() > 100, "{} booked", a.len());
            assert!(a.iter().any(|e| e.original.is_some()), "purchases abroad");
            assert!(a.iter().any(|e| e.acceptor.is_none()), "invoice payments");
            let later = card_booked(card, owner, today + Duration::days(5));
            for e in a.iter().take(40) {
                assert!(later.iter().any(|x| x.id == e.id && x.amount == e.amount));
            }
            let b = card_balances(card, owner, today);
            assert!(b.interim_booked <= 0 && b.interim_booked > -CARD_CREDIT_LIMIT);
            for e in &a {
                if let Some(o) = &e.original {
                    assert_ne!(o.currency, card.currency);
                    assert_eq!(o.amount.signum(), e.amount.signum());
                }
            }
        }
    }
}
