//! The flow screen (`5`) after a full AIS flow on the embedded sandbox: consent, SCA
//! completed in the sandbox's pages (the browser's steps from its event stream), the
//! callback, List accounts 200; and `psd2-console flow --format mermaid` of the same flow.

use psd2_console::flow::Lane;
use psd2_console::tui::{Action, Screen};

use crate::common::cli::run_headless;
use crate::common::console::{Console, KARI};
use crate::common::tui::Drive;

#[tokio::test]
async fn the_flow_screen_draws_a_full_ais_flow_with_the_browser_steps_and_the_mermaid_export_matches()
 {
    let mut c = Console::start().await;
    c.watch_steps().await;
    assert!(c.app.select_operation("consents.bank-offered"));
    assert_eq!(c.send().await, 201, "{}", c.body());
    c.complete_sca(KARI, "PRIVATE").await;
    let steps = c.take_steps().await;
    assert_eq!(
        steps.iter().map(|s| s.step.as_str()).collect::<Vec<_>>(),
        ["opened", "login", "context", "consent"],
        "{steps:?}"
    );
    assert!(c.app.select_operation("accounts.list"));
    assert_eq!(c.send().await, 200, "{}", c.body());

    assert_eq!(c.app.press("5"), Action::LoadFlow);
    assert_eq!(c.app.screen(), Screen::Flow);
    c.app.set_flow(c.flow_data());
    let flow = c.app.flow_view().flow().clone();
    // The browser's steps replace the one SCA arrow; the callback comes after the consent.
    let routes: Vec<(Lane, Lane)> = flow.arrows.iter().map(|a| (a.from, a.to)).collect();
    assert_eq!(routes.first(), Some(&(Lane::Tpp, Lane::Aspsp)));
    assert_eq!(routes.last(), Some(&(Lane::Aspsp, Lane::Tpp)));
    assert!(
        flow.arrows
            .iter()
            .all(|a| a.label != "SCA: login, context, consent")
    );
    assert_eq!(flow.arrows.last().unwrap().label, "200");
    // The status line says how long the answer took: a fixed message keeps the snapshots
    // stable (the screen is what is checked).
    c.app
        .set_message(psd2_console::tui::Level::Info, "List accounts answered");
    let text = c.normalize(&c.app.screen_text(120, 36));
    insta::assert_snapshot!("flow_screen_full_ais_flow", text);
    // The clocks count from the session state: an hour of SCA session, 180 days of consent.
    c.app.mask_volatile = false;
    let clocks = c.app.screen_text(120, 36);
    assert!(clocks.contains("left of 1h"), "{clocks}");
    assert!(clocks.contains("left of 180d"), "{clocks}");
    c.app.mask_volatile = true;
    let narrow = c.normalize(&c.app.screen_text(80, 24));
    // At 80×24 the newest arrows stay in view.
    assert!(narrow.contains("GET /v1/accounts + PSU-ID"), "{narrow}");
    assert!(narrow.contains("SCA session: <time>"), "{narrow}");
    insta::assert_snapshot!("flow_screen_full_ais_flow_80x24", narrow);
    assert!(
        !narrow.contains("1. POST /v1/bank-offered-consents"),
        "{narrow}"
    );
    // Home shows the first arrows, ↓ scrolls, End follows the newest again.
    c.app.press("Home");
    let top = c.app.screen_text(80, 24);
    assert!(top.contains("1. POST /v1/bank-offered-consents"), "{top}");
    assert!(top.contains("1–6 of 14"), "{top}");
    c.app.press("Down");
    assert!(c.app.screen_text(80, 24).contains("2–7 of 14"));
    c.app.press("End");
    assert_eq!(c.normalize(&c.app.screen_text(80, 24)), narrow);

    let (code, mermaid, err) = run_headless(c.home.path(), &["flow", "--format", "mermaid"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        mermaid.contains("Browser->>ASPSP: POST login (customerNumber) → 200"),
        "{mermaid}"
    );
    // The consent's status read after its SCA names the consent id.
    insta::assert_snapshot!("flow_mermaid_full_ais_flow", c.normalize(&mermaid));
    c.shutdown().await;
}
