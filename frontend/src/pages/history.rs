//! The catalog's history in the UI: an item's state changes (on the item page) and the
//! burn-up of the roadmap, drawn as SVG on the server so it reads without JavaScript, with the
//! same numbers as a table.

use std::fmt::Write as _;

use leptos::prelude::*;
use mirante_domain::{
    State,
    history::{BurnupPoint, NoHistory, StateChange},
};

use crate::{
    api::history::{get_burnup, get_item_history},
    components::{StateBadge, Wait, loaded, state_key},
    i18n::{Lang, t, t_args, use_i18n},
};

/// Translation key of the reason there is no history.
fn unavailable_key(no: &NoHistory) -> &'static str {
    match no {
        NoHistory::Directory => "history-unavailable-directory",
        NoHistory::Embedded => "history-unavailable-embedded",
        NoHistory::Unreadable => "history-unavailable-unreadable",
    }
}

/// The day part of an RFC 3339 date.
fn day(date: &str) -> &str {
    date.get(..10).unwrap_or(date)
}

/// The first characters of a commit id, as git shows them.
fn short(commit: &str) -> &str {
    commit.get(..8).unwrap_or(commit)
}

/// An item's state changes, oldest first, with the commit of each.
#[component]
pub fn ItemTimeline(id: String) -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(move || id.clone(), get_item_history);
    view! {
        <section class="timeline-section" id="history">
            <h2>{i18n.tr("history-title")}</h2>
            {loaded(Wait::Placeholder, data, move |page| match page.unavailable {
                    Some(no) => {
                        view! { <p class="muted">{i18n.tr(unavailable_key(&no))}</p> }.into_any()
                    }
                    None if page.changes.is_empty() => {
                        view! { <p class="muted">{i18n.tr("history-none")}</p> }.into_any()
                    }
                    None => view! { <Timeline changes=page.changes/> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn Timeline(changes: Vec<StateChange>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <ol class="state-timeline">
            {changes
                .into_iter()
                .map(|c| {
                    let from = match c.from {
                        Some(s) => view! { <StateBadge state=s/> }.into_any(),
                        None => view! { <span class="muted">{i18n.tr("history-new")}</span> }.into_any(),
                    };
                    let to = match c.to {
                        Some(s) => view! { <StateBadge state=s/> }.into_any(),
                        None => view! { <span class="muted">{i18n.tr("history-removed")}</span> }.into_any(),
                    };
                    let r = c.revision;
                    view! {
                        <li class="timeline-entry">
                            <time datetime=r.date.clone()>{day(&r.date).to_owned()}</time>
                            <span class="timeline-change">{from} " → " {to}</span>
                            <span class="timeline-commit">
                                <code title=r.commit.clone()>{short(&r.commit).to_owned()}</code>
                                " "
                                <span class="timeline-summary">{r.summary.clone()}</span>
                                " "
                                <span class="muted timeline-author">"— " {r.author.clone()}</span>
                            </span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}

/// The roadmap's burn-up: items per state at each revision of the catalog.
#[component]
pub fn BurnupSection() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| get_burnup());
    view! {
        <section class="card burnup" id="burnup">
            <h2>{i18n.tr("burnup-title")}</h2>
            <p class="muted">{i18n.tr("burnup-lead")}</p>
            {loaded(Wait::Placeholder, data, move |page| match page.unavailable {
                    Some(no) => {
                        view! { <p class="muted">{i18n.tr(unavailable_key(&no))}</p> }.into_any()
                    }
                    None if page.series.is_empty() => {
                        view! { <p class="muted">{i18n.tr("burnup-empty")}</p> }.into_any()
                    }
                    None => {
                        let series = page.series.clone();
                        let svg = move || burnup_svg(&series, i18n.lang());
                        view! {
                            <div class="burnup-wrap" inner_html=svg></div>
                            <ul class="legend burnup-legend">
                                {State::ALL
                                    .into_iter()
                                    .map(|s| view! { <li><StateBadge state=s/></li> })
                                    .collect_view()}
                            </ul>
                            {(page.skipped > 0)
                                .then(|| {
                                    let n = page.skipped;
                                    view! {
                                        <p class="muted">
                                            {move || t_args(i18n.lang(), "burnup-skipped", &[("count", n.into())])}
                                        </p>
                                    }
                                })}
                            <BurnupTable series=page.series/>
                        }
                            .into_any()
                    }
            })}
        </section>
    }
}

#[component]
fn BurnupTable(series: Vec<BurnupPoint>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <details class="burnup-table">
            <summary>{i18n.tr("burnup-table")}</summary>
            <div class="table-wrap">
                <table class="list">
                    <thead>
                        <tr>
                            <th scope="col">{i18n.tr("history-col-date")}</th>
                            <th scope="col">{i18n.tr("history-col-commit")}</th>
                            {State::ALL
                                .into_iter()
                                .map(|s| view! { <th scope="col">{move || t(i18n.lang(), state_key(s))}</th> })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {series
                            .into_iter()
                            .rev()
                            .map(|p| {
                                view! {
                                    <tr>
                                        <td><time datetime=p.date.clone()>{day(&p.date).to_owned()}</time></td>
                                        <td><code title=p.commit.clone()>{short(&p.commit).to_owned()}</code></td>
                                        <td>{p.validated}</td>
                                        <td>{p.declared}</td>
                                        <td>{p.desired}</td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </details>
    }
}

/// Size of the drawing.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 280.0;
/// Plot area inside the drawing: room for the axis labels on the left and below.
const LEFT: f64 = 44.0;
const RIGHT: f64 = 704.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 244.0;
/// The last revision is drawn this far from the right edge; its counts hold until the edge.
const TAIL: f64 = 48.0;
/// Least distance between two date labels.
const LABEL_GAP: f64 = 88.0;

const STYLE: &str = "\
.b-validated{fill:#1f8a4c;fill-opacity:.85}\
.b-declared{fill:#d08a1a;fill-opacity:.8}\
.b-desired{fill:#5b5bd6;fill-opacity:.35}\
.axis{stroke:#6b7280;stroke-width:1}\
.grid{stroke:#e5e7eb;stroke-width:1}\
.total{fill:none;stroke:#374151;stroke-width:1.5}\
.pt{fill:#374151}\
text{font:11px system-ui,-apple-system,'Segoe UI',sans-serif;fill:#374151}\
";

/// Seconds since the epoch of an RFC 3339 UTC date (`2026-08-03T14:12:00Z`).
fn seconds(date: &str) -> Option<i64> {
    let num = |range: std::ops::Range<usize>| date.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (
        num(11..13).unwrap_or(0),
        num(14..16).unwrap_or(0),
        num(17..19).unwrap_or(0),
    );
    // Days from the civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// A round step for about five gridlines up to `max`.
fn nice_step(max: u32) -> u32 {
    let mut base = 1;
    loop {
        for f in [1, 2, 5] {
            let step = base * f;
            if max.div_ceil(step) <= 5 {
                return step;
            }
        }
        base *= 10;
    }
}

/// The count at the lower or upper edge of a band.
type Bound = fn(&BurnupPoint) -> u32;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The burn-up as an SVG document: stacked step areas (validated at the bottom, then
/// declared, then desired), the total as a line with a point per revision, gridlines with
/// item counts, and dates below. Its title and description say the same in words.
pub fn burnup_svg(series: &[BurnupPoint], lang: Lang) -> String {
    let Some((first, last)) = series.first().zip(series.last()) else {
        return String::new();
    };
    let times: Vec<i64> = series
        .iter()
        .map(|p| seconds(&p.date).unwrap_or(0))
        .collect();
    let (t0, t1) = (times[0], *times.last().unwrap_or(&times[0]));
    let span = (t1 - t0).max(1) as f64;
    let x = |t: i64| {
        if t1 == t0 {
            LEFT + (RIGHT - TAIL - LEFT) / 2.0
        } else {
            LEFT + (t - t0) as f64 / span * (RIGHT - TAIL - LEFT)
        }
    };
    let max = series
        .iter()
        .map(BurnupPoint::total)
        .max()
        .unwrap_or(0)
        .max(1);
    let step = nice_step(max);
    let top_value = max.div_ceil(step) * step;
    let y = |v: u32| BOTTOM - f64::from(v) / f64::from(top_value) * (BOTTOM - TOP);
    let xs: Vec<f64> = times.iter().map(|t| x(*t)).collect();

    let title = escape(&t(lang, "burnup-chart-title"));
    let desc = escape(&t_args(
        lang,
        "burnup-desc",
        &[
            ("from", day(&first.date).to_owned().into()),
            ("to", day(&last.date).to_owned().into()),
            ("validated_from", first.validated.into()),
            ("validated_to", last.validated.into()),
            ("declared_from", first.declared.into()),
            ("declared_to", last.declared.into()),
            ("desired_from", first.desired.into()),
            ("desired_to", last.desired.into()),
        ],
    ));
    let mut s = String::with_capacity(4096);
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"burnup-chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"100%\" role=\"img\" aria-labelledby=\"burnup-t burnup-d\">\
         <title id=\"burnup-t\">{title}</title><desc id=\"burnup-d\">{desc}</desc><style>{STYLE}</style>"
    );
    // Gridlines and counts.
    let mut v = 0;
    while v <= top_value {
        let gy = y(v);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{gy:.1}\" y2=\"{gy:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v}</text>",
            LEFT - 6.0,
            gy + 4.0
        );
        v += step;
    }
    // Stacked step areas, from the top band down so the lower ones are drawn over it.
    let bands: [(State, Bound, Bound); 3] = [
        (
            State::Desired,
            |p| p.validated + p.declared,
            BurnupPoint::total,
        ),
        (
            State::Declared,
            |p| p.validated,
            |p| p.validated + p.declared,
        ),
        (State::Validated, |_| 0, |p| p.validated),
    ];
    for (state, lower, upper) in bands {
        let mut d = String::new();
        for (i, p) in series.iter().enumerate() {
            let next = xs.get(i + 1).copied().unwrap_or(RIGHT);
            let cmd = if i == 0 { 'M' } else { 'L' };
            let _ = write!(
                d,
                "{cmd}{:.1},{:.1}L{next:.1},{:.1}",
                xs[i],
                y(upper(p)),
                y(upper(p))
            );
        }
        for (i, p) in series.iter().enumerate().rev() {
            let next = xs.get(i + 1).copied().unwrap_or(RIGHT);
            let _ = write!(
                d,
                "L{next:.1},{:.1}L{:.1},{:.1}",
                y(lower(p)),
                xs[i],
                y(lower(p))
            );
        }
        let _ = write!(s, "<path class=\"b-{}\" d=\"{d}Z\"/>", state.as_str());
    }
    // The total, with a point and a tooltip per revision.
    let mut line = String::new();
    for (i, p) in series.iter().enumerate() {
        let next = xs.get(i + 1).copied().unwrap_or(RIGHT);
        let cmd = if i == 0 { 'M' } else { 'L' };
        let _ = write!(
            line,
            "{cmd}{:.1},{:.1}L{next:.1},{:.1}",
            xs[i],
            y(p.total()),
            y(p.total())
        );
    }
    let _ = write!(s, "<path class=\"total\" d=\"{line}\"/>");
    for (i, p) in series.iter().enumerate() {
        let tip = escape(&format!(
            "{} · {} {} · {} {} · {} {}",
            day(&p.date),
            p.validated,
            t(lang, "state-validated"),
            p.declared,
            t(lang, "state-declared"),
            p.desired,
            t(lang, "state-desired"),
        ));
        let _ = write!(
            s,
            "<circle class=\"pt\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>{tip}</title></circle>",
            xs[i],
            y(p.total())
        );
    }
    // Axes and the dates, thinned so that labels never overlap; the last one always shows.
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{BOTTOM}\" y2=\"{BOTTOM}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{BOTTOM}\"/>"
    );
    let mut shown: Vec<usize> = Vec::new();
    for (i, &xi) in xs.iter().enumerate().rev() {
        if shown.last().is_none_or(|j| xs[*j] - xi >= LABEL_GAP) {
            shown.push(i);
        }
    }
    for i in shown {
        let _ = write!(
            s,
            "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{BOTTOM}\" y2=\"{:.1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            BOTTOM + 4.0,
            BOTTOM + 18.0,
            escape(day(&series[i].date)),
            x = xs[i],
        );
    }
    // What the vertical axis counts, above it.
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
        LEFT - 6.0,
        TOP - 12.0,
        escape(&t(lang, "burnup-axis"))
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(date: &str, validated: u32, declared: u32, desired: u32) -> BurnupPoint {
        BurnupPoint {
            date: date.to_owned(),
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            validated,
            declared,
            desired,
        }
    }

    #[test]
    fn dates_are_read_as_seconds_since_the_epoch() {
        assert_eq!(seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(seconds("2026-08-03T14:12:00Z"), Some(1_785_766_320));
        assert_eq!(
            seconds("2024-03-01T00:00:00Z").unwrap() - seconds("2024-02-28T00:00:00Z").unwrap(),
            2 * 86_400
        );
        assert_eq!(seconds("August"), None);
    }

    #[test]
    fn gridlines_fall_on_round_counts() {
        assert_eq!(nice_step(4), 1);
        assert_eq!(nice_step(9), 2);
        assert_eq!(nice_step(60), 20);
        assert_eq!(nice_step(230), 50);
    }

    #[test]
    fn the_chart_has_a_band_per_state_a_point_per_revision_and_says_it_in_words() {
        let series = [
            point("2026-07-01T10:00:00Z", 0, 2, 10),
            point("2026-08-01T10:00:00Z", 3, 4, 12),
            point("2026-09-01T10:00:00Z", 6, 3, 12),
        ];

        let svg = burnup_svg(&series, Lang::En);

        for band in ["b-validated", "b-declared", "b-desired"] {
            assert_eq!(
                svg.matches(&format!("class=\"{band}\"")).count(),
                1,
                "{band}"
            );
        }
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("role=\"img\""));
        assert!(svg.contains("<title id=\"burnup-t\">"));
        assert!(svg.contains("2026-07-01") && svg.contains("2026-09-01"));
        let desc = svg
            .split("<desc id=\"burnup-d\">")
            .nth(1)
            .unwrap()
            .replace(['\u{2068}', '\u{2069}'], "");
        assert!(desc.contains("validated 0 → 6"), "{desc}");
        // 21 items at most: gridlines every 5 up to 25.
        assert!(svg.contains(">25</text>") && !svg.contains(">30</text>"));
    }

    #[test]
    fn dates_closer_than_a_label_apart_are_not_all_written() {
        let series = [
            point("2026-07-01T10:00:00Z", 0, 0, 1),
            point("2026-07-01T11:00:00Z", 0, 1, 0),
            point("2026-09-01T10:00:00Z", 1, 0, 0),
        ];

        let svg = burnup_svg(&series, Lang::PtBr);

        let labels: Vec<&str> = svg
            .split("text-anchor=\"middle\">")
            .skip(1)
            .map(|rest| &rest[..10])
            .collect();
        assert_eq!(labels, ["2026-09-01", "2026-07-01"]);
    }

    #[test]
    fn a_single_revision_still_draws() {
        let svg = burnup_svg(&[point("2026-07-01T10:00:00Z", 1, 1, 1)], Lang::En);

        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(!svg.contains("NaN"));
    }
}
