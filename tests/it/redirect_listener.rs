//! The SCA callback listener over real HTTP on loopback.

use psd2_console::redirect::{ListenerError, RedirectListener};
use psd2_console::xs2a::redirect::{PsuContext, ScaCallback};

async fn get(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn accepts_known_sessions_and_rejects_others() {
    let mut l = RedirectListener::start(None).await.unwrap();
    assert!(l.addr.ip().is_loopback());
    assert!(l.redirect_uri.starts_with("http://127.0.0.1:"));
    assert!(l.redirect_uri.ends_with("/callback"));
    l.await_callback("sess-1");
    l.await_callback("sess-1");
    let psu = uuid::Uuid::new_v4().to_string();

    // Wrong tpp-session-id: refused, not handed on.
    let (status, page) = get(&format!(
        "{}?psu-id={psu}&tpp-session-id=forged&context=PRIVATE",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 400);
    assert!(page.contains("forged"), "{page}");
    assert!(l.try_next().is_none());

    // Not a callback at all.
    let (status, _) = get(&format!("{}?hello=1", l.redirect_uri)).await;
    assert_eq!(status, 400);
    // Another path.
    let (status, _) = get(&format!("http://{}/elsewhere", l.addr)).await;
    assert_eq!(status, 404);

    // The real one.
    let (status, page) = get(&format!(
        "{}?psu-id={psu}&tpp-session-id=sess-1&context=PRIVATE",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 200);
    assert!(page.contains("SCA complete"), "{page}");
    match l.next().await.unwrap() {
        ScaCallback::Success(s) => {
            assert_eq!(s.psu_id, psu);
            assert_eq!(s.tpp_session_id, "sess-1");
            assert_eq!(s.context, PsuContext::Private);
        }
        other => panic!("{other:?}"),
    }

    // A failure redirect.
    let (status, page) = get(&format!(
        "{}?system=sca&status=401&code=PSU_CREDENTIALS_INVALID&message=cancelled%20by%20PSU&tpp-session-id=sess-1",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 200);
    assert!(page.contains("cancelled by PSU"), "{page}");
    assert!(matches!(l.next().await.unwrap(), ScaCallback::Failure(f) if f.status == 401));
}

#[tokio::test]
async fn uses_the_profile_port_and_path_and_refuses_non_loopback() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("http://localhost:{port}/tpp/return");
    let mut l = RedirectListener::start(Some(&uri)).await.unwrap();
    assert_eq!(l.addr.port(), port);
    assert_eq!(l.redirect_uri, uri);
    l.await_callback("s");
    let (status, _) = get(&format!(
        "http://127.0.0.1:{port}/tpp/return?psu-id={}&tpp-session-id=s",
        uuid::Uuid::new_v4()
    ))
    .await;
    assert_eq!(status, 200);
    assert!(l.next().await.is_some());

    for bad in [
        "https://tpp.example/cb",
        "http://10.0.0.1:80/cb",
        "not a url",
    ] {
        assert!(matches!(
            RedirectListener::start(Some(bad)).await,
            Err(ListenerError::NotLoopback(_))
        ));
    }
}

/// Issue 8 item 4: only a flow the console started and waits for, with its tpp-session-id,
/// once; forged, replayed, unarmed and session-less failure callbacks get a 400 page and
/// change nothing.
#[tokio::test]
async fn callbacks_are_taken_once_per_waiting_flow_and_nothing_else() {
    let mut l = RedirectListener::start(None).await.unwrap();
    let psu = uuid::Uuid::new_v4().to_string();
    let ok = format!(
        "{}?psu-id={psu}&tpp-session-id=sess-1&context=PRIVATE",
        l.redirect_uri
    );
    // No flow is waiting yet: even the right session id is refused.
    let (status, page) = get(&ok).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("No SCA this console started"), "{page}");
    assert!(l.try_next().is_none());

    l.await_callback("sess-1");
    assert_eq!(l.waiting(), 1);
    // A failure callback without tpp-session-id does not abort the waiting flow.
    let (status, page) = get(&format!(
        "{}?system=evil&status=500&code=PAYMENT_FAILED&message=x",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("no tpp-session-id"), "{page}");
    // A forged corporate callback with another session id is refused.
    let (status, _) = get(&format!(
        "{}?psu-id={psu}&tpp-session-id=other&context=CORPORATE&psu-corporate-id=2222",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 400);
    assert!(l.try_next().is_none());
    assert_eq!(l.waiting(), 1, "the waiting flow is still armed");

    // The real one is taken once...
    let (status, _) = get(&ok).await;
    assert_eq!(status, 200);
    assert!(matches!(l.next().await.unwrap(), ScaCallback::Success(_)));
    assert_eq!(l.waiting(), 0);
    // ... and a replay (even a corporate one with the same session id) is refused.
    let (status, page) = get(&format!(
        "{}?psu-id={psu}&tpp-session-id=sess-1&context=CORPORATE&psu-corporate-id=2222",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(l.try_next().is_none());

    // Giving up disarms.
    l.await_callback("sess-2");
    assert!(l.forget_callback("sess-2"));
    let (status, _) = get(&format!(
        "{}?psu-id={psu}&tpp-session-id=sess-2",
        l.redirect_uri
    ))
    .await;
    assert_eq!(status, 400);
}

/// Issue 18 defect 1: flows of one session are told apart by the `sca-ref` of their
/// TPP-Redirect-URI. A callback goes to the flow it answers, not to the oldest flow of the
/// session, and the callback of a flow given up (Esc) is refused even while another flow of
/// the same session waits.
#[tokio::test]
async fn a_callback_goes_to_the_flow_its_sca_ref_names_and_a_given_up_flow_is_refused() {
    use psd2_console::redirect::{SCA_REF_PARAM, sca_ref_of, with_sca_ref};
    let mut l = RedirectListener::start(None).await.unwrap();
    let payment_uri = with_sca_ref(&l.redirect_uri, "pay-ref");
    let consent_uri = with_sca_ref(&l.redirect_uri, "consent-ref");
    assert_eq!(sca_ref_of(&payment_uri).as_deref(), Some("pay-ref"));
    assert!(payment_uri.starts_with(&l.redirect_uri), "{payment_uri}");
    assert!(payment_uri.contains(&format!("{SCA_REF_PARAM}=pay-ref")));
    l.await_flow("sess-1", Some("pay-ref"));
    l.await_flow("sess-1", Some("consent-ref"));
    // Esc on the payment's prompt.
    assert!(l.forget_flow("sess-1", Some("pay-ref")));
    assert_eq!(l.waiting(), 1);

    let psu = uuid::Uuid::new_v4().to_string();
    let corporate = uuid::Uuid::new_v4().to_string();
    // The payment's SCA approved anyway: refused, the consent still waits.
    let (status, page) = get(&format!(
        "{payment_uri}&psu-id={psu}&tpp-session-id=sess-1&context=PRIVATE"
    ))
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("pay-ref"), "{page}");
    assert!(l.try_next().is_none());
    assert_eq!(l.waiting(), 1);

    // The consent's callback is taken for the consent, with its corporate id.
    let (status, page) = get(&format!(
        "{consent_uri}&psu-id={psu}&psu-corporate-id={corporate}&tpp-session-id=sess-1&context=CORPORATE"
    ))
    .await;
    assert_eq!(status, 200, "{page}");
    let cb = l.next().await.unwrap();
    let ScaCallback::Success(ok) = &cb else {
        panic!("{cb:?}");
    };
    assert_eq!(ok.psu_corporate_id.as_deref(), Some(corporate.as_str()));
    assert_eq!(l.route_of(&cb), Some(Some("consent-ref".to_string())));
    assert_eq!(l.route_of(&cb), None, "asked once");
    assert_eq!(l.waiting(), 0);

    // Two flows still waiting, the newer one answered first: it is the newer one's.
    l.await_flow("sess-2", Some("first"));
    l.await_flow("sess-2", Some("second"));
    let second = with_sca_ref(&l.redirect_uri, "second");
    let (status, _) = get(&format!(
        "{second}&psu-id={psu}&tpp-session-id=sess-2&context=PRIVATE"
    ))
    .await;
    assert_eq!(status, 200);
    let cb = l.next().await.unwrap();
    assert_eq!(l.route_of(&cb), Some(Some("second".to_string())));
    assert_eq!(l.waiting(), 1, "the first flow still waits");
}
