//! Notifications end to end: a real mail server (aiosmtpd, `tests/mail/`) receives what the
//! request journey causes, in each recipient's language, and a local HTTP receiver gets the
//! webhook's signed JSON; a mail server that is down loses nothing and gets nothing twice.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use hmac::{Hmac, Mac};
use secrecy::SecretString;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::helpers::*;
use crate::mail::{MailSink, Received, free_port};
use crate::requests::wait_for_state;

const HOOK_SECRET: &str = "hook-secret-for-the-test";

fn workspace(name: &str) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "purpose": "thesis"}
    })
}

/// A database in the namespace of Rui's workspace `nlp` (merged first): no GPU, approval.
fn database(name: &str) -> Value {
    json!({
        "template": "postgres-cnpg",
        "values": {"cluster": "gpu-sp-01", "name": name, "namespace": "ws-nlp", "databases": ["results"]}
    })
}

/// A client signed in as the demo user `user`, sending the UI's language cookie `lang` with
/// every request, as a browser whose reader picked that language.
async fn signed_in(app: &TestApp, user: &str, lang: Option<&str>) -> reqwest::Client {
    let mut cookie = app.dev_cookie(user).await;
    if let Some(lang) = lang {
        cookie.push_str(&format!("; mirante_lang={lang}"));
    }
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::COOKIE, cookie.parse().unwrap());
    headers.insert(reqwest::header::ORIGIN, app.address.parse().unwrap());
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Every call a webhook receiver got: its signature header and body.
type Calls = Arc<Mutex<Vec<(Option<String>, Vec<u8>)>>>;

/// A webhook receiver on a free port.
struct Hook {
    url: String,
    calls: Calls,
}

async fn hook() -> Hook {
    use axum::{Router, body::Bytes, extract::State, http::HeaderMap, routing::post};
    async fn receive(State(calls): State<Calls>, headers: HeaderMap, body: Bytes) -> &'static str {
        let signature = headers
            .get("x-mirante-signature")
            .map(|v| v.to_str().unwrap().to_owned());
        calls.lock().unwrap().push((signature, body.to_vec()));
        "ok"
    }
    let calls: Calls = Arc::default();
    let router = Router::new()
        .route("/hooks/mirante", post(receive))
        .with_state(Arc::clone(&calls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/mirante", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    Hook { url, calls }
}

impl Hook {
    /// The events received so far, after checking each call's signature.
    fn events(&self) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(signature, body)| {
                let mut mac = Hmac::<Sha256>::new_from_slice(HOOK_SECRET.as_bytes()).unwrap();
                mac.update(body);
                let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
                assert_eq!(
                    signature.as_deref(),
                    Some(expected.as_str()),
                    "a signed body"
                );
                serde_json::from_slice(body).unwrap()
            })
            .collect()
    }

    async fn wait_for(&self, kind: &str, request: i64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(event) = self
                .events()
                .into_iter()
                .find(|e| e["event"]["kind"] == kind && e["event"]["request_id"] == request)
            {
                return event;
            }
            assert!(
                Instant::now() < deadline,
                "no {kind} webhook call for request {request}: {:#?}",
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Waits until no message of the outbox is pending.
async fn wait_until_delivered(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pending = app
            .get_json("/api/v1/notifications?state=pending", 200)
            .await;
        if pending["notifications"].as_array().unwrap().is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "still pending: {pending}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn find<'a>(mails: &'a [Received], to: &str, subject_part: &str) -> &'a Received {
    let found: Vec<&Received> = mails
        .iter()
        .filter(|m| m.rcpt_to == [to] && m.subject.contains(subject_part))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "exactly one mail to {to} about {subject_part:?}: {mails:#?}"
    );
    found[0]
}

on_both_databases! {
    async fn the_request_journey_emails_the_admins_and_the_requester_in_their_language_and_calls_the_signed_webhook(backend: Backend) {
        let sink = MailSink::start(false);
        let hook = hook().await;
        let hook_url = hook.url.clone();
        let app = spawn_with_mail(backend, sink.url(), move |c, _| {
            c.notify_webhook_url = Some(SecretString::from(hook_url));
            c.notify_webhook_secret = Some(SecretString::from(HOOK_SECRET));
        })
        .await;
        // Ada is an admin who reads English; Rui picked Portuguese in the UI.
        let ada = signed_in(&app, "ada", Some("en")).await;
        let rui = signed_in(&app, "rui", Some("pt-BR")).await;
        let me = app.get_json_as(&rui, "/api/v1/me", 200).await;
        assert_eq!(me["notifications"], json!({"email": true, "language": "pt-BR"}), "{me}");

        // Approved, proposed and merged.
        let first = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{first}/approve"), &json!({"comment": "fine"}), 200).await;
        wait_for_state(&app, &rui, first, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{first}/merge"), &json!({}), 200).await;
        // Rejected with a comment.
        let second = app.post_json(&rui, "/api/v1/requests", &database("analytics"), 201).await["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{second}/reject"), &json!({"comment": "no GPUs left this month"}), 200).await;

        sink.wait_for(6, Duration::from_secs(30)).await;
        wait_until_delivered(&app).await;
        let mails = sink.messages();
        assert_eq!(mails.len(), 6, "{mails:#?}");

        let waiting = find(&mails, "ada@example.org", &format!("#{first} awaits your approval"));
        assert_eq!(waiting.language, "en");
        assert!(waiting.text.contains("Rui Researcher asks for \"GPU workspace\""), "{}", waiting.text);
        assert!(waiting.text.contains(&format!("{}/requests/{first}", app.address)), "{}", waiting.text);
        find(&mails, "ada@example.org", &format!("#{second} awaits your approval"));

        let approved = find(&mails, "rui@example.org", &format!("Pedido #{first} aprovado"));
        assert_eq!(approved.language, "pt-BR");
        assert!(approved.from.contains("portal@mirante.test"), "{}", approved.from);
        assert!(approved.text.contains("test-admin aprovou seu pedido"), "{}", approved.text);
        assert!(approved.text.contains("Comentário: fine"), "{}", approved.text);
        assert!(approved.html.contains("<html lang=\"pt-BR\">"), "{}", approved.html);
        let proposed = find(&mails, "rui@example.org", &format!("Pedido #{first} proposto"));
        assert!(proposed.text.contains(&format!("Pull request: {}/requests/{first}", app.address)), "{}", proposed.text);
        find(&mails, "rui@example.org", &format!("Pedido #{first} mesclado"));
        let rejected = find(&mails, "rui@example.org", &format!("Pedido #{second} recusado"));
        assert!(rejected.text.contains("Comentário: no GPUs left this month"), "{}", rejected.text);

        // Each e-mail's Message-ID names its outbox row, so a receiver can drop a copy.
        let rows = app.db.notifications(None, 100).await.unwrap();
        for mail in &mails {
            let id: i64 = mail
                .message_id
                .strip_prefix("<mirante.notification.")
                .and_then(|rest| rest.split('.').next())
                .and_then(|id| id.parse().ok())
                .unwrap_or_else(|| panic!("Message-ID {}", mail.message_id));
            let row = rows.iter().find(|r| r.id == id).expect("a row per mail");
            assert_eq!(row.recipient.as_deref(), Some(mail.rcpt_to[0].as_str()));
            assert_eq!(
                mail.message_id,
                format!("<mirante.notification.{id}.{}@mirante.test>", row.created_at.timestamp_millis())
            );
        }

        // The webhook: one signed call per event, whoever was mailed.
        let rejected_call = hook.wait_for("rejected", second).await;
        assert_eq!(rejected_call["event"]["comment"], "no GPUs left this month");
        assert_eq!(rejected_call["event"]["url"], format!("{}/requests/{second}", app.address));
        assert!(rejected_call["text"].as_str().unwrap().contains("rejected"), "{rejected_call}");
        let proposed_call = hook.wait_for("proposed", first).await;
        assert_eq!(proposed_call["event"]["pull_request_url"], format!("{}/requests/{first}/change", app.address));
        for kind in ["awaits_approval", "approved", "merged"] {
            hook.wait_for(kind, first).await;
        }

        // Ada turns e-mail off: the next request waiting for approval reaches the webhook,
        // and her no more.
        let off = app.post_json(&ada, "/api/v1/me/notifications", &json!({"email": false}), 200).await;
        assert_eq!(off["email"], false);
        let third = app.post_json(&rui, "/api/v1/requests", &database("reports"), 201).await["id"].as_i64().unwrap();
        hook.wait_for("awaits_approval", third).await;
        wait_until_delivered(&app).await;
        let rows = app.db.notifications(None, 100).await.unwrap();
        assert!(
            !rows.iter().any(|r| r.request_id == Some(third) && r.recipient.is_some()),
            "no e-mail queued for request {third}: {rows:#?}"
        );
        assert_eq!(sink.messages().len(), 6, "no new e-mail");
    }

    async fn a_mail_server_that_is_down_keeps_messages_pending_with_the_error_and_delivers_each_once_when_back(backend: Backend) {
        let port = free_port();
        let app = spawn_with_mail(backend, format!("smtp://127.0.0.1:{port}"), |c, _| {
            c.worker_retry_secs = 1;
            c.worker_retry_max_secs = 1;
        })
        .await;
        let _ada = signed_in(&app, "ada", None).await;
        let rui = signed_in(&app, "rui", None).await;
        let id = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();

        // Tried and tried again while nothing listens; the error shows to admins.
        let deadline = Instant::now() + Duration::from_secs(30);
        let pending = loop {
            let pending = app.get_json("/api/v1/notifications?state=pending", 200).await;
            let first = pending["notifications"][0].clone();
            if first["attempts"].as_i64().unwrap_or(0) >= 2 {
                break first;
            }
            assert!(Instant::now() < deadline, "never retried: {pending}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(pending["request_id"], id);
        assert_eq!(pending["recipient"], "ada@example.org");
        assert!(pending["last_error"].as_str().is_some_and(|e| !e.is_empty()), "{pending}");
        assert!(pending["next_attempt_at"].is_string(), "{pending}");
        let researcher = rui.get(format!("{}/api/v1/notifications", app.address)).send().await.unwrap();
        assert_eq!(researcher.status().as_u16(), 403);
        let bad = app.get("/api/v1/notifications?state=lost").await;
        assert_eq!(bad.status().as_u16(), 400);

        // The server comes up: the message arrives, once.
        let sink = MailSink::start_on(port, false);
        let mails = sink.wait_for(1, Duration::from_secs(30)).await;
        assert_eq!(mails[0].rcpt_to, ["ada@example.org"]);
        wait_until_delivered(&app).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(sink.messages().len(), 1, "sent once");
        let sent = app.get_json("/api/v1/notifications?state=sent", 200).await;
        assert_eq!(sent["notifications"].as_array().unwrap().len(), 1, "{sent}");
        assert_eq!(sent["notifications"][0]["last_error"], Value::Null);
    }

    async fn a_message_the_mail_server_never_takes_is_given_up_after_its_last_attempt_and_listed_as_failed(backend: Backend) {
        let port = free_port();
        let app = spawn_with_mail(backend, format!("smtp://127.0.0.1:{port}"), |c, _| {
            c.worker_retry_secs = 1;
            c.worker_retry_max_secs = 1;
            c.notify_max_attempts = 2;
        })
        .await;
        let _ada = signed_in(&app, "ada", None).await;
        let rui = signed_in(&app, "rui", None).await;
        app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await;

        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let failed = app.get_json("/api/v1/notifications?state=failed", 200).await;
            if let Some(row) = failed["notifications"].as_array().unwrap().first() {
                assert_eq!(row["attempts"], 2, "{row}");
                assert!(row["last_error"].as_str().is_some_and(|e| !e.is_empty()), "{row}");
                assert_eq!(row["next_attempt_at"], Value::Null);
                break;
            }
            assert!(Instant::now() < deadline, "never given up: {failed}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The profile page's `csrf_token`, read as a browser would.
async fn profile_page(app: &TestApp, browser: &reqwest::Client, lang: &str) -> String {
    let page = browser
        .get(format!("{}/profile", app.address))
        .header(reqwest::header::ACCEPT_LANGUAGE, lang)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    page.text().await.unwrap()
}

fn csrf_token(html: &str) -> String {
    const FIELD: &str = r#"name="csrf_token" value=""#;
    let at = html.find(FIELD).expect("no csrf_token field") + FIELD.len();
    html[at..].split('"').next().unwrap().to_owned()
}

on_both_databases! {
    async fn a_person_turns_email_off_and_on_again_on_the_profile_page_in_either_language(backend: Backend) {
        let app = spawn_app(backend).await;
        let browser = app.dev_browser("rui").await;

        let page = profile_page(&app, &browser, "en").await;
        assert!(page.contains("E-mail is on."), "{page}");
        assert!(page.contains(r#"id="notify-email" checked"#), "{page}");
        // An unticked box sends no `email` field: e-mail off.
        let off = browser
            .post(format!("{}/profile/notifications", app.address))
            .form(&[("csrf_token", csrf_token(&page).as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(off.status().as_u16(), 303);
        let page = profile_page(&app, &browser, "pt-BR").await;
        assert!(page.contains("E-mail desligado."), "{page}");
        assert!(!page.contains(r#"id="notify-email" checked"#), "{page}");
        let me = app.get_json_as(&browser, "/api/v1/me", 200).await;
        assert_eq!(me["notifications"]["email"], false, "{me}");
        let malformed = app.post_json(&browser, "/api/v1/me/notifications", &json!({"email": "no"}), 400).await;
        assert!(malformed["error"].as_str().unwrap().contains("invalid JSON body"), "{malformed}");

        // Without the form's token nothing changes; with it, e-mail is on again.
        let forged = browser
            .post(format!("{}/profile/notifications", app.address))
            .form(&[("email", "on")])
            .send()
            .await
            .unwrap();
        assert_eq!(forged.status().as_u16(), 403);
        let on = browser
            .post(format!("{}/profile/notifications", app.address))
            .form(&[("csrf_token", csrf_token(&page).as_str()), ("email", "on")])
            .send()
            .await
            .unwrap();
        assert_eq!(on.status().as_u16(), 303);
        let me = app.get_json_as(&browser, "/api/v1/me", 200).await;
        assert_eq!(me["notifications"]["email"], true, "{me}");
        let audit = app.db.list_audit(10).await.unwrap();
        assert_eq!(
            audit.iter().filter(|e| e.action == "profile.notifications").count(),
            2,
            "{audit:?}"
        );
    }
}

on_both_databases! {
    async fn argo_cd_reporting_a_merged_workspace_degraded_then_live_is_told_to_its_requester(backend: Backend) {
        use mirante_tests::argocd::{AppStatus, FakeArgo, TOKEN, application};
        let sink = MailSink::start(false);
        let argocd = FakeArgo::up().await;
        let argocd_url = argocd.base.clone();
        let app = spawn_with_mail(backend, sink.url(), move |c, _| {
            c.argocd_url = Some(argocd_url);
            c.argocd_token = Some(SecretString::from(TOKEN.to_owned()));
            c.argocd_poll_secs = 1;
            c.argocd_poll_max_secs = 2;
            c.probe_timeout_secs = 2;
        })
        .await;
        let rui = signed_in(&app, "rui", Some("en")).await;
        app.get_json_as(&rui, "/api/v1/me", 200).await;
        let id = app.post_json(&rui, "/api/v1/requests", &workspace("nlp"), 201).await["id"].as_i64().unwrap();
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/approve"), &json!({}), 200).await;
        wait_for_state(&app, &rui, id, "proposed").await;
        app.post_json(&app.client, &format!("/api/v1/requests/{id}/merge"), &json!({}), 200).await;
        let repo = git2::Repository::open(app.data_dir.join("monorepo")).unwrap();
        let merge = repo.find_reference("refs/heads/main").unwrap().peel_to_commit().unwrap().id().to_string();
        let target = "apps/sp/gpu-sp-01/workspaces/nlp";
        let said = "Deployment \"jupyter\" exceeded its progress deadline";

        argocd.put(application("ws-nlp", target, &AppStatus { sync: "Synced", revision: &merge, health: "Degraded", message: Some(said) }));
        let mails = sink.wait_for(4, Duration::from_secs(30)).await;
        let degraded = find(&mails, "rui@example.org", &format!("Request #{id} is degraded"));
        assert!(degraded.text.contains(&format!("Details: {said}")), "{}", degraded.text);

        argocd.put(application("ws-nlp", target, &AppStatus { sync: "Synced", revision: &merge, health: "Healthy", message: None }));
        let mails = sink.wait_for(5, Duration::from_secs(30)).await;
        let live = find(&mails, "rui@example.org", &format!("Request #{id} is live"));
        assert!(live.text.contains("Argo CD reports your request"), "{}", live.text);
        assert!(!live.text.contains("Details:"), "{}", live.text);
        let subjects: Vec<&str> = mails.iter().map(|m| m.subject.as_str()).collect();
        assert_eq!(subjects.len(), 5, "approved, proposed, merged, degraded, live: {subjects:?}");
    }
}
