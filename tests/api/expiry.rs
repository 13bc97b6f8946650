//! The expiry sweep with a clock the test moves: the owner of a GPU workspace is e-mailed 7
//! days and 1 day before it expires (received by a real mail server), each once; the day after,
//! a removal is opened on their behalf and proposed; with an extension pending, none is.

use std::{sync::Arc, time::Duration};

use chrono::{NaiveDate, TimeZone, Utc};
use mirante::app::clock::ManualClock;
use mirante::app::selfservice::expiry::{ExpiryRemoval, ExpirySettings, ExpirySweep};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::mail::MailSink;
use crate::requests::wait_for_state;

fn workspace(name: &str, days: u32) -> Value {
    json!({
        "template": "gpu-workspace",
        "values": {"name": name, "cluster": "gpu-sp-01", "gpus": 1, "days": days, "purpose": "thesis"}
    })
}

/// Rui's workspace `name`, approved by Ada and merged: its id and expiry date.
async fn merged(app: &TestApp, rui: &reqwest::Client, name: &str, days: u32) -> (i64, NaiveDate) {
    let id = crate::requests::merged_workspace(app, rui, &workspace(name, days)).await;
    let resource = app
        .get_json_as(rui, &format!("/api/v1/resources/{id}"), 200)
        .await;
    let expires =
        NaiveDate::parse_from_str(resource["expires"].as_str().unwrap(), "%Y-%m-%d").unwrap();
    (id, expires)
}

/// Waits until the outbox holds nothing pending (and fails on a message given up).
async fn wait_until_sent(app: &TestApp) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let pending = app
            .get_json("/api/v1/notifications?state=pending", 200)
            .await;
        let failed = app
            .get_json("/api/v1/notifications?state=failed", 200)
            .await;
        assert_eq!(failed["notifications"], json!([]), "{failed}");
        if pending["notifications"].as_array().unwrap().is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still pending: {pending}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn noon(day: NaiveDate) -> chrono::DateTime<Utc> {
    Utc.from_utc_datetime(&day.and_hms_opt(12, 0, 0).unwrap())
}

on_both_databases! {
    async fn the_owner_is_told_before_expiry_then_the_removal_is_opened_unless_an_extension_waits(backend: Backend) {
        let sink = MailSink::start(false);
        let app = spawn_with_mail(backend, sink.url(), |c, _| c.expiry_sweep_secs = 0).await;
        let rui = app.dev_browser("rui").await;
        let (nlp, expires) = merged(&app, &rui, "nlp", 10).await;
        let clock = Arc::new(ManualClock::at(noon(expires - chrono::Days::new(9))));
        let sweep = ExpirySweep::new(
            app.selfservice.clone(),
            app.db.clone(),
            clock.clone(),
            ExpirySettings { removal: ExpiryRemoval::Propose, notice_days: vec![7, 1] },
        );
        wait_until_sent(&app).await;
        let mails_before = sink.messages().len();

        let early = sweep.run_once().await.unwrap();
        clock.set(noon(expires - chrono::Days::new(7)));
        let week = sweep.run_once().await.unwrap();
        let week_again = sweep.run_once().await.unwrap();
        clock.set(noon(expires - chrono::Days::new(1)));
        let day = sweep.run_once().await.unwrap();
        clock.set(noon(expires));
        let last_day = sweep.run_once().await.unwrap();

        assert_eq!((early.notices, week.notices, week_again.notices, day.notices), (0, 1, 0, 1));
        assert_eq!(last_day, Default::default(), "nothing on the day itself");
        wait_until_sent(&app).await;
        let mails = sink.wait_for(mails_before + 2, Duration::from_secs(30)).await;
        let notices: Vec<_> = mails[mails_before..].iter().filter(|m| m.subject.contains("expires soon")).collect();
        assert_eq!(notices.len(), 2, "{mails:#?}");
        assert!(notices.iter().all(|m| m.rcpt_to == ["rui@example.org"]), "{notices:#?}");
        assert!(notices[0].text.contains(&format!("expires on {expires} (in 7 days)")), "{}", notices[0].text);
        assert!(notices[1].text.contains(&format!("expires on {expires} (in 1 days)")), "{}", notices[1].text);

        // The day after: the removal is opened on Rui's behalf, recorded as the portal's.
        clock.set(noon(expires + chrono::Days::new(1)));
        let after = sweep.run_once().await.unwrap();
        assert_eq!(after.removals.len(), 1, "{after:?}");
        let removal = wait_for_state(&app, &rui, after.removals[0], "proposed").await;
        assert_eq!(removal["action"], "remove");
        assert_eq!(removal["author"], "rui");
        assert_eq!(removal["timeline"][0]["actor"], "system", "{removal}");
        assert_eq!(removal["resource"], nlp);
        let again = sweep.run_once().await.unwrap();
        assert_eq!(again.removals, Vec::<i64>::new(), "one removal, not one per sweep");
        assert_eq!(again.waiting, vec![nlp], "its removal is open");
        let mails = sink.wait_for(mails_before + 3, Duration::from_secs(30)).await;
        assert!(mails.iter().any(|m| m.subject.contains("expired: removal proposed")), "{mails:#?}");

        app.post_json(&app.client, &format!("/api/v1/requests/{}/merge", after.removals[0]), &json!({}), 200).await;
        let gone = app.get_json_as(&rui, &format!("/api/v1/resources/{nlp}"), 200).await;
        assert_eq!(gone["state"], "removed", "{gone}");
        // The merged removal tells Rui the resource is removed (not merely "merged").
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let mails = sink.messages();
            let subject = format!("Request #{} removed", after.removals[0]);
            if let Some(m) = mails.iter().find(|m| m.subject.contains(&subject)) {
                assert_eq!(m.rcpt_to, ["rui@example.org"]);
                assert!(m.text.contains("its folder is gone from the monorepo"), "{}", m.text);
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no removed notice: {mails:#?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // Another workspace (the GPU is free again) whose owner asked for an extension before it
        // expired: no removal while the extension waits.
        let (vision, vision_expires) = merged(&app, &rui, "vision", 3).await;
        app.post_json(&rui, &format!("/api/v1/resources/{vision}/requests"), &json!({"kind": "extend", "values": {"days": 30}}), 201).await;
        clock.set(noon(vision_expires + chrono::Days::new(1)));
        let pending = sweep.run_once().await.unwrap();
        assert_eq!(pending.removals, Vec::<i64>::new(), "{pending:?}");
        assert!(pending.waiting.contains(&vision), "{pending:?}");
    }
}
