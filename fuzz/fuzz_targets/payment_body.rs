//! Payment initiation body validation (interface document, Resources "Payment initiation
//! body"). Input: one byte choosing the service and product, then the body.
#![no_main]

use std::time::{Duration, SystemTime};

use libfuzzer_sys::fuzz_target;
use psd2_console::sandbox::http::payments::body::{Service, parse, product_for};
use psd2_console::sandbox::{App, Clock, SandboxConfig};

const PRODUCTS: [&str; 6] = [
    "norwegian-domestic-credit-transfers",
    "instant-norwegian-domestic-credit-transfers-straks",
    "norwegian-domestic-payment-to-self",
    "norwegian-cross-border-credit-transfers",
    "sepa-credit-transfers",
    "cross-border-credit-transfers",
];

thread_local! {
    // 2026-09-01, after the structured-address enforcement date.
    static APP: App = App::new(SandboxConfig {
        clock: Clock::fixed(SystemTime::UNIX_EPOCH + Duration::from_secs(1_788_220_800)),
        ..SandboxConfig::default()
    })
    .expect("in-memory sandbox");
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, body)) = data.split_first() else {
        return;
    };
    let service = match choice % 3 {
        0 => Service::Payments,
        1 => Service::BulkPayments,
        _ => Service::PeriodicPayments,
    };
    let segment = PRODUCTS[usize::from(choice / 3) % PRODUCTS.len()];
    let Ok(product) = product_for(service, segment) else {
        return;
    };
    APP.with(|app| {
        let _ = parse(app, service, &product, body);
    });
});
