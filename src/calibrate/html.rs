//! A calibration report to share: one self-contained HTML file (no scripts, no styles, fonts or
//! images from elsewhere) with, per similarity measure, the chart of every setting (inline SVG
//! drawn by plotters, each point titled), the frontier and the setting in force, operator-label
//! agreement, every setting's row and the per-debate outcomes of the settings that matter; how
//! it was made; and, for a database's debates, the controller settings published there with
//! their evidence (each database's, under its context's name, when several were read). Every text that came from a debate or the database is escaped. It prints
//! legibly.

use std::borrow::Borrow;
use std::fmt::Write as _;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::evidence::describe;
use super::record::RecordedDebate;
use super::replay::DebateOutcome;
use super::report::{Report, Row};
use crate::domain::SettingsVersion;
use crate::policy::ControllerConfig;
use crate::text::{inert, thousands};

/// How the report was made, shown at its top.
#[derive(Debug, Clone)]
pub struct Made {
    /// The command line, secrets left out.
    pub command: String,
    /// Where the debates came from.
    pub source: String,
    /// When, as people read it.
    pub at: String,
    pub version: String,
}

/// One similarity measure's report, with the rows whose debates the file lists.
#[derive(Debug, Clone)]
pub struct Section {
    pub title: String,
    pub report: Report,
    /// The setting in force, the one closest to the recorded decisions and the frontier's, each
    /// with its debates' outcomes.
    pub detailed: Vec<Row>,
}

/// Frontier settings whose debates the report lists at most: a grid can put thousands on the
/// frontier, and a reader wants its shape, not every setting's table.
pub(crate) const DETAILED_FRONTIER: usize = 12;

impl Section {
    /// `report`, run over `records`, with the settings that matter replayed again for their
    /// debates' outcomes: the setting in force, the closest to the recorded decisions, and one
    /// setting of each frontier point (`DETAILED_FRONTIER` at most, spread along it).
    pub fn new<R: Borrow<RecordedDebate>>(
        title: String,
        report: Report,
        records: &[R],
        base: &ControllerConfig,
    ) -> Section {
        let mut points: Vec<&Row> = report.frontier();
        points.dedup_by_key(|r| (r.verdict_flips, r.tokens_saved));
        let spread: Vec<&Row> = if points.len() > DETAILED_FRONTIER {
            let last = points.len() - 1;
            (0..DETAILED_FRONTIER)
                .map(|i| points[i * last / (DETAILED_FRONTIER - 1)])
                .collect()
        } else {
            points
        };
        let mut wanted: Vec<&Row> = report.rows.iter().filter(|r| r.current).collect();
        wanted.extend(report.closest_to_recorded());
        wanted.extend(spread);
        let mut detailed: Vec<Row> = Vec::new();
        for row in wanted {
            if !detailed.iter().any(|d| d.setting.same_as(&row.setting))
                && let Some(with) = report.with_outcomes(&row.setting, records, base)
            {
                detailed.push(with);
            }
        }
        Section {
            title,
            report,
            detailed,
        }
    }
}

/// A command line (`args`, the program first) as a shell would take it, with passwords left
/// out: a URL's (`postgres://user:***@host/db`) and any `password=` setting's (in a URL's query
/// or a connection string).
pub fn command_line(args: impl Iterator<Item = String>) -> String {
    let words: Vec<String> = args
        .map(|arg| {
            let arg = redact(&arg);
            let plain = !arg.is_empty()
                && !arg.contains(|c: char| c.is_whitespace() || "'\"$`\\;&|<>()*?".contains(c));
            if plain {
                arg
            } else {
                format!("'{}'", arg.replace('\'', "'\\''"))
            }
        })
        .collect();
    words.join(" ")
}

fn redact(arg: &str) -> String {
    let mut out = arg.to_owned();
    if let Some((scheme, rest)) = arg.split_once("://") {
        let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        if let Some((user, host)) = authority.rsplit_once('@')
            && let Some((name, _)) = user.split_once(':')
        {
            out = format!("{scheme}://{name}:***@{host}{path}");
        }
    }
    let mut from = 0;
    while let Some(at) = out[from..].to_ascii_lowercase().find("password=") {
        let start = from + at + "password=".len();
        let end = out[start..]
            .find(['&', ' ', '\t'])
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, "***");
        from = start + 3;
    }
    out
}

/// Text made safe inside HTML: controls made visible ([`inert`]), markup characters escaped,
/// and `://` written with an entity so that no text reads as an address to load.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in inert(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out.replace("://", "&#58;//")
}

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; background: #fff; margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
dl.made { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; color: #57606a; }
dl.made dt { font-weight: 600; }
dl.made dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #57606a; }
.key { font-weight: 600; }
table { border-collapse: collapse; margin: .5em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .2em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
tr.current td { font-weight: 700; background: #fff1e5; }
tr.frontier td:first-child { color: #0072b2; }
tr.flip td { background: #fff8c5; }
.muted { color: #57606a; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  section.measure { break-before: page; }
  section.measure:first-of-type { break-before: auto; }
  figure, tr { break-inside: avoid; }
  thead { display: table-header-group; }
  figure svg { border: none; }
  tr.current td, tr.flip td, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
";

/// The controller settings' history of a database calibrated, oldest first, or why it could
/// not be read.
pub type Published = Result<Vec<SettingsVersion>, String>;

/// The settings history of one database calibrated, under its context's name when the
/// calibration read several.
pub struct PublishedIn {
    pub context: Option<String>,
    pub history: Published,
}

/// The whole file: `sections`, then each `published` settings history (none for recordings).
pub fn render(made: &Made, sections: &[Section], published: &[PublishedIn]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>gavel calibration report</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<h1>Calibration report</h1>\n");
    out.push_str(
        "<p>Every setting of the threshold grid replayed over the finished debates: what each \
         would have saved (tokens of the rounds after its stop) against how often it would \
         have changed the verdict. The <span class=\"key\">frontier</span> holds the settings \
         no other setting does as well on both (tokens saved, verdict flips) and better on \
         one.</p>\n",
    );
    let _ = writeln!(
        out,
        "<dl class=\"made\"><dt>command</dt><dd>{}</dd><dt>debates</dt><dd>{}</dd>\
         <dt>made</dt><dd>{}</dd><dt>gavel</dt><dd>{}</dd></dl>",
        escape(&made.command),
        escape(&made.source),
        escape(&made.at),
        escape(&made.version)
    );
    for section in sections {
        measure(&mut out, section);
    }
    for published in published {
        history(&mut out, published);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// One measure's section.
fn measure(out: &mut String, section: &Section) {
    let report = &section.report;
    let _ = writeln!(
        out,
        "<section class=\"measure\">\n<h2>{}</h2>\n<p>{} finished debates, {} operator labels, \
         {} settings{}.</p>",
        escape(&section.title),
        report.debates,
        report.labels,
        report.rows.len(),
        report.left_out()
    );
    let _ = writeln!(
        out,
        "<figure>{}<figcaption>Each point is a setting (hover for its thresholds and \
         figures). <b>Blue triangles joined</b>: the frontier, each labelled similarity/novelty of its \
         first setting (+N: more settings at that point). <b>Orange cross</b>: the setting \
         in force. <b>Green square</b>: the setting whose decisions agree most often with the \
         recorded controller decisions.</figcaption></figure>",
        chart(report)
    );
    agreement(out, report);
    out.push_str("<h3>The frontier and the setting in force</h3>\n");
    let marked: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.current)
        .chain(report.frontier().into_iter().filter(|r| !r.current))
        .collect();
    settings_table(out, &marked);
    out.push_str(
        "<h3>Per debate</h3>\n<p class=\"muted\">The setting in force, the one closest to the \
         recorded decisions, and one setting of each point of the frontier (settings at one \
         point save and flip alike; at most 12 points, spread along it).</p>\n",
    );
    for row in &section.detailed {
        outcomes(out, row, report);
    }
    let _ = writeln!(out, "<h3>Every setting ({})</h3>", report.rows.len());
    let all: Vec<&Row> = report.rows.iter().collect();
    settings_table(out, &all);
    out.push_str("<p class=\"muted\">");
    out.push_str(&escape(Report::LEGEND));
    out.push_str("</p>\n");
    if !report.issues.is_empty() {
        let _ = writeln!(out, "<h3>Row problems ({})</h3>\n<ul>", report.issues.len());
        for issue in &report.issues {
            let _ = writeln!(out, "<li>{}</li>", escape(issue));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// The operators' labels against the setting in force and the best-agreeing setting.
fn agreement(out: &mut String, report: &Report) {
    out.push_str("<h3>Operator-label agreement</h3>\n<p>");
    if report.labels == 0 {
        out.push_str("No operator labels in these debates: nothing to agree with.");
    } else {
        let best = report
            .rows
            .iter()
            .max_by_key(|r| (r.labels_agreed, r.current))
            .expect("a report has the setting in force");
        if let Some(current) = report.rows.iter().find(|r| r.current) {
            let _ = write!(
                out,
                "The setting in force agrees with {} of {} operator labels. ",
                current.labels_agreed, current.labels
            );
        }
        let _ = write!(
            out,
            "The most agreeing setting, {}, agrees with {} of {}.",
            escape(&best.thresholds(false)),
            best.labels_agreed,
            best.labels
        );
    }
    if let Some(closest) = report.closest_to_recorded() {
        let _ = write!(
            out,
            " Closest to the recorded controller decisions: {} ({} of {} rounds decided alike).",
            escape(&closest.thresholds(false)),
            closest.decisions_agreed,
            closest.decisions_recorded
        );
    }
    out.push_str("</p>\n");
}

fn settings_table(out: &mut String, rows: &[&Row]) {
    out.push_str("<table>\n<thead><tr>");
    for (i, name) in Report::HEADER.iter().enumerate() {
        let name = if i == 0 { "in force / frontier" } else { name };
        let _ = write!(out, "<th>{}</th>", escape(name));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let class = match (row.current, row.frontier) {
            (true, _) => " class=\"current\"",
            (false, true) => " class=\"frontier\"",
            _ => "",
        };
        let _ = write!(out, "<tr{class}>");
        for cell in row.cells() {
            let _ = write!(out, "<td>{}</td>", escape(cell.trim()));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// A setting's debates: where each would stop, what it would save, whether its verdict flips.
fn outcomes(out: &mut String, row: &Row, report: &Report) {
    let mut roles = Vec::new();
    if row.current {
        roles.push("in force");
    }
    if report
        .closest_to_recorded()
        .is_some_and(|c| c.setting.same_as(&row.setting))
    {
        roles.push("closest to the recorded decisions");
    }
    if row.frontier {
        roles.push("frontier");
    }
    let _ = writeln!(
        out,
        "<h4>{} <span class=\"muted\">({})</span></h4>\n<table>\n<thead><tr><th>debate</th>\
         <th>would stop</th><th>tokens saved / run</th><th>verdict at the stop</th>\
         <th>verdict at the end</th><th>labels agreed</th></tr></thead>\n<tbody>",
        escape(&row.thresholds(false)),
        roles.join(", ")
    );
    for o in row.outcomes.iter().flatten() {
        outcome_row(out, o);
    }
    out.push_str("</tbody>\n</table>\n");
}

fn outcome_row(out: &mut String, o: &DebateOutcome) {
    let verdict = |v: &Option<String>| escape(v.as_deref().unwrap_or("-"));
    let stop = match o.stop {
        Some(decision) => format!("round {} of {}: {decision}", o.rounds_used, o.rounds_run),
        None => format!("never ({} rounds ran)", o.rounds_run),
    };
    let _ = writeln!(
        out,
        "<tr{}><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}{}</td><td>{}/{}</td></tr>",
        if o.verdict_flip {
            " class=\"flip\""
        } else {
            ""
        },
        escape(&o.session_id),
        escape(&stop),
        thousands(o.tokens_saved),
        thousands(o.tokens_run),
        verdict(&o.verdict_at_stop),
        verdict(&o.verdict_at_end),
        if o.verdict_flip { " (flips)" } else { "" },
        o.agreed,
        o.labels
    );
}

const WIDTH: u32 = 760;
const HEIGHT: u32 = 460;
const SETTING: RGBColor = RGBColor(0x8c, 0x95, 0xa0);
const FRONTIER: RGBColor = RGBColor(0x00, 0x72, 0xb2);
const IN_FORCE: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const CLOSEST: RGBColor = RGBColor(0x00, 0x9e, 0x73);

/// The settings that sit at one point of the chart.
struct Point<'a> {
    at: (f64, f64),
    rows: Vec<&'a Row>,
}

/// The report's settings grouped by where they sit, in the report's order.
fn points(rows: &[&Row]) -> Vec<(f64, f64, Vec<usize>)> {
    let mut points: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let at = (row.verdict_flip_share, row.tokens_saved_share);
        match points.iter_mut().find(|p| (p.0, p.1) == at) {
            Some(p) => p.2.push(i),
            None => points.push((at.0, at.1, vec![i])),
        }
    }
    points
}

/// The chart as inline SVG: every setting, the frontier joined and labelled, the setting in
/// force and the closest to the recorded decisions marked, each point titled with the settings
/// there. Drawn by plotters; the titles are laid over the points it drew, at the places it
/// maps them to.
fn chart(report: &Report) -> String {
    let all: Vec<&Row> = report.rows.iter().collect();
    let grouped: Vec<Point> = points(&all)
        .into_iter()
        .map(|(x, y, rows)| Point {
            at: (x, y),
            rows: rows.into_iter().map(|i| all[i]).collect(),
        })
        .collect();
    let mut svg = String::new();
    let placed = match draw(report, &grouped, &mut svg) {
        Ok(placed) => placed,
        Err(e) => return format!("<p>The chart could not be drawn: {}</p>", escape(&e)),
    };
    let mut titles = String::from("<g fill=\"transparent\">");
    for (point, (x, y)) in grouped.iter().zip(placed) {
        let _ = write!(
            titles,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"7\"><title>{}</title></circle>",
            escape(&point_title(point))
        );
    }
    titles.push_str("</g></svg>");
    // Inline SVG in HTML needs no namespace: the file names no address at all.
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
        .replacen("</svg>", &titles, 1)
}

/// A point's hover text: its place and the settings there (the first 20).
fn point_title(point: &Point) -> String {
    let first = point.rows[0];
    let mut text = format!(
        "verdict flips {} ({:.1}%), tokens saved {} ({:.1}%)",
        first.verdict_flips,
        point.at.0 * 100.0,
        thousands(first.tokens_saved),
        point.at.1 * 100.0
    );
    for row in point.rows.iter().take(20) {
        let mark = match (row.current, row.frontier) {
            (true, true) => " (in force, frontier)",
            (true, false) => " (in force)",
            (false, true) => " (frontier)",
            _ => "",
        };
        let _ = write!(text, "\n{}{mark}", row.thresholds(false));
    }
    if point.rows.len() > 20 {
        let _ = write!(text, "\n… and {} more settings", point.rows.len() - 20);
    }
    text
}

/// Draws the chart into `svg`; returns where each of `grouped` landed, in the SVG's pixels.
fn draw(report: &Report, grouped: &[Point], svg: &mut String) -> Result<Vec<(i32, i32)>, String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let most = |pick: fn(&Point) -> f64| grouped.iter().map(pick).fold(0.01_f64, f64::max) * 1.12;
    let (x_max, y_max) = (most(|p| p.at.0), most(|p| p.at.1));
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(|e| fail(&e))?;
    let (x_percent, y_percent) = (percent(x_max), percent(y_max));
    chart
        .configure_mesh()
        .x_labels(TICKS)
        .y_labels(TICKS)
        .x_desc("verdict flips (share of debates)")
        .y_desc("tokens saved (share of tokens run)")
        .x_label_formatter(&x_percent)
        .y_label_formatter(&y_percent)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .draw()
        .map_err(|e| fail(&e))?;
    let at = |row: &Row| (row.verdict_flip_share, row.tokens_saved_share);
    chart
        .draw_series(
            grouped
                .iter()
                .map(|p| Circle::new(p.at, 4, SETTING.filled())),
        )
        .map_err(|e| fail(&e))?
        .label("setting")
        .legend(|(x, y)| Circle::new((x, y), 4, SETTING.filled()));
    let frontier: Vec<(f64, f64)> = report.frontier().into_iter().map(at).collect();
    chart
        .draw_series(LineSeries::new(frontier.clone(), FRONTIER.stroke_width(2)))
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(
            frontier
                .iter()
                .map(|&p| TriangleMarker::new(p, 7, FRONTIER.filled())),
        )
        .map_err(|e| fail(&e))?
        .label("frontier")
        .legend(|(x, y)| TriangleMarker::new((x, y), 7, FRONTIER.filled()));
    frontier_labels(&mut chart, grouped).map_err(|e| fail(&e))?;
    if let Some(closest) = report.closest_to_recorded() {
        let (x, y) = chart.backend_coord(&at(closest));
        let square = |(x, y): (i32, i32)| {
            Rectangle::new([(x - 7, y - 7), (x + 7, y + 7)], CLOSEST.stroke_width(3))
        };
        root.draw(&square((x, y))).map_err(|e| fail(&e))?;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| fail(&e))?
            .label("closest to the recorded decisions")
            .legend(square);
    }
    let current: Vec<(f64, f64)> = report.rows.iter().filter(|r| r.current).map(at).collect();
    chart
        .draw_series(
            current
                .iter()
                .map(|&p| Cross::new(p, 8, IN_FORCE.stroke_width(3))),
        )
        .map_err(|e| fail(&e))?
        .label("in force")
        .legend(|(x, y)| Cross::new((x, y), 6, IN_FORCE.stroke_width(3)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xd0, 0xd7, 0xde))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| fail(&e))?;
    let placed = grouped.iter().map(|p| chart.backend_coord(&p.at)).collect();
    root.present().map_err(|e| fail(&e))?;
    Ok(placed)
}

/// The most tick labels on an axis.
const TICKS: usize = 11;

/// Shares as percentages, for an axis from 0 to `max`: with as few decimals as tell its ticks
/// (the points plotters labels) apart, so that a range of 2% reads 0.0%, 0.2%, ... 2.0%
/// rather than 0%, 0%, 0%, 1%, ...
fn percent(max: f64) -> impl Fn(&f64) -> String {
    let ticks = RangedCoordf64::from(0.0..max).key_points(TICKS);
    let shown = |v: f64, decimals: usize| format!("{:.decimals$}%", v * 100.0);
    let decimals = (0..MAX_DECIMALS)
        .find(|&d| ticks.windows(2).all(|w| shown(w[0], d) != shown(w[1], d)))
        .unwrap_or(MAX_DECIMALS);
    move |v| shown(*v, decimals)
}

/// The most decimals a percentage on an axis is given.
const MAX_DECIMALS: usize = 4;

/// Each frontier point labelled with its first setting's similarity and novelty (and how many
/// more settings share the point).
fn frontier_labels<DB: DrawingBackend>(
    chart: &mut ChartContext<
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    grouped: &[Point],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let labels = grouped.iter().filter_map(|p| {
        let frontier: Vec<&&Row> = p.rows.iter().filter(|r| r.frontier).collect();
        let first = frontier.first()?;
        let cells = first.cells();
        let more = match frontier.len() {
            1 => String::new(),
            n => format!(" +{}", n - 1),
        };
        let text = format!("{}/{}{more}", cells[1], cells[2]);
        Some(EmptyElement::at(p.at) + Text::new(text, (8, -16), ("sans-serif", 13)))
    });
    chart.draw_series(labels)?;
    Ok(())
}

/// The settings published in a database: each version with what it did, its values, reason,
/// who and when, and its evidence.
fn history(out: &mut String, published: &PublishedIn) {
    let _ = writeln!(
        out,
        "<section class=\"published\">\n<h2>Published controller settings{}</h2>",
        published
            .context
            .as_ref()
            .map_or_else(String::new, |c| format!(" in context {}", escape(c)))
    );
    let versions = match &published.history {
        Err(why) => {
            let _ = writeln!(
                out,
                "<p>The settings history could not be read: {}</p>\n</section>",
                escape(why)
            );
            return;
        }
        Ok(versions) if versions.is_empty() => {
            out.push_str(
                "<p>Nothing published in this database: the controller's own defaults stand \
                 for every debate type.</p>\n</section>\n",
            );
            return;
        }
        Ok(versions) => versions,
    };
    let _ = writeln!(
        out,
        "<p>The history of <code>gavel settings</code> in this database, oldest first ({} \
         versions): what each did, the values it put in force, why, who published it (the \
         database role) and when, and the calibration it came from.</p>",
        versions.len()
    );
    out.push_str(
        "<table>\n<thead><tr><th>version</th><th>debate type</th><th>what</th><th>values</th>\
         <th>reason</th><th>by</th><th>when</th><th>evidence</th></tr></thead>\n<tbody>\n",
    );
    for v in versions {
        let values = v.values.as_ref().map_or_else(
            || "the controller's own defaults".to_owned(),
            |values| values.summary(),
        );
        let evidence = v
            .evidence
            .as_ref()
            .map_or_else(|| "given by hand".to_owned(), describe);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            v.version,
            escape(&v.debate_type),
            escape(&format!("{} ({})", v.what(), v.kind)),
            escape(&values),
            escape(&v.reason),
            escape(&v.published_by),
            v.published_at.format("%Y-%m-%d %H:%M:%S UTC"),
            escape(&evidence)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}
