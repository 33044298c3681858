//! The calibration report to share (`gavel calibrate --html`): one self-contained file with the
//! chart as inline SVG, the frontier, the setting in force, label agreement and per-debate
//! outcomes per measure, debate text escaped; and rendered in a real browser (headless
//! Chromium), loading with nothing in its console and drawing the chart.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use gavel::calibrate::html::{Made, Section, command_line, escape, render};
use gavel::calibrate::{RecordedDebate, Report, Setting};
use gavel::policy::ControllerConfig;

/// A scratch directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = common::scratch_home().join("report").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `gavel calibrate ARGS --html FILE`; the file's text.
fn report(dir: &Path, args: &[&str]) -> String {
    let file = dir.join("report.html");
    let out = common::gavel()
        .arg("calibrate")
        .args(args)
        .arg("--html")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "the report replaces the table on stdout"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote the calibration report"));
    std::fs::read_to_string(&file).unwrap()
}

/// Nothing in `html` loads from anywhere: no address, script, stylesheet, frame or image.
fn assert_self_contained(html: &str) {
    for needle in [
        "http://", "https://", "<script", "<link", "<iframe", "<img", " src=\"", "@import", "url(",
    ] {
        assert!(!html.contains(needle), "the report holds {needle:?}");
    }
}

#[test]
fn the_report_of_the_bundled_recordings_holds_the_chart_the_tables_and_how_it_was_made() {
    let dir = scratch("bundled");
    let html = report(&dir, &["fixtures", "--grid", "similarity=0.80:0.95:0.05"]);
    assert_self_contained(&html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 1, "one measure, one chart");
    // Every point is titled: 4 settings of the grid at however many places.
    assert!(html.contains("<circle cx="));
    assert!(html.contains("<title>verdict flips"));
    assert!(html.contains("similarity 0.90 · novelty 1 · min own · max own · budget 0.80"));
    for section in [
        "Operator-label agreement",
        "The frontier and the setting in force",
        "Per debate",
        "Every setting (4)",
    ] {
        assert!(html.contains(section), "no {section:?}");
    }
    assert_eq!(
        html.matches("<tr class=\"current\">").count(),
        2,
        "the setting in force once in the frontier's table, once among every setting"
    );
    // The shadow-week recording: the setting in force stops it at round 3 of 6.
    assert!(html.contains("salt-substitutes-shadow"));
    assert!(html.contains("round 3 of 6: stop_converged"));
    assert!(html.contains("operator labels"));
    // How it was made.
    assert!(html.contains(&format!("gavel {}", env!("CARGO_PKG_VERSION"))));
    assert!(html.contains("calibrate fixtures --grid similarity=0.80:0.95:0.05 --html"));
    assert!(html.contains("9 recordings played in shadow mode: fixtures/"));
    assert!(html.contains(" UTC</dd>"));
}

#[test]
fn several_measures_make_one_section_and_chart_each() {
    let dir = scratch("measures");
    let html = report(
        &dir,
        &[
            "tests/data/calibration",
            "--similarity",
            "lexical,recorded",
            "--grid",
            "novelty=0,1",
        ],
    );
    assert_self_contained(&html);
    assert_eq!(html.matches("<svg").count(), 2);
    assert!(html.contains("<h2>similarity: lexical — lexical"));
    assert!(html.contains("<h2>similarity: recorded — as recorded, else"));
}

/// A report of two settings, the one in force saving `saved` of the tokens run with no verdict
/// flipped, the other saving nothing.
fn saving(saved: f64) -> Report {
    let base = ControllerConfig::default();
    let current = Setting::current(&base);
    let other = Setting {
        similarity_threshold: 0.95,
        ..current.clone()
    };
    let mut report = Report::run(
        &[] as &[RecordedDebate],
        vec![other],
        0,
        &current,
        &base,
        false,
    );
    for row in &mut report.rows {
        row.tokens_saved_share = if row.current { saved } else { 0.0 };
    }
    report
}

/// The chart's tick labels on one axis (plotters anchors the y axis's at their end, the x
/// axis's at their middle), in the order drawn.
fn tick_labels<'a>(html: &'a str, anchor: &str) -> Vec<&'a str> {
    let attribute = format!("text-anchor=\"{anchor}\"");
    html.split("<text ")
        .skip(1)
        .filter(|tag| tag[..tag.find('>').unwrap()].contains(&attribute))
        .map(|tag| tag[tag.find('>').unwrap() + 1..tag.find("</text>").unwrap()].trim())
        .filter(|label| label.ends_with('%'))
        .collect()
}

#[test]
fn the_charts_axes_label_each_tick_distinctly_on_a_range_of_two_percent() {
    let made = Made {
        command: "gavel calibrate".into(),
        source: "ten debates".into(),
        at: "now".into(),
        version: "test".into(),
    };
    let section = Section {
        title: "similarity: lexical".into(),
        report: saving(0.018),
        detailed: Vec::new(),
    };
    let html = render(&made, &[section], &[]);
    for (axis, anchor) in [("y", "end"), ("x", "middle")] {
        let labels = tick_labels(&html, anchor);
        assert!(labels.len() >= 5, "{axis}: {labels:?}");
        let distinct: BTreeSet<&str> = labels.iter().copied().collect();
        assert_eq!(distinct.len(), labels.len(), "{axis}: {labels:?}");
    }
    // The y axis runs from 0% to the most saved and a little more (1.8% here).
    let top = tick_labels(&html, "end")
        .iter()
        .map(|l| l.trim_end_matches('%').parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert!((1.8..=2.1).contains(&top), "{top}");
}

#[test]
fn debate_text_in_the_report_is_escaped_and_names_no_address() {
    let dir = scratch("hostile");
    let source = std::fs::read_to_string("tests/data/calibration/converges_round3.jsonl").unwrap();
    // Its id, and every verdict its turns state (up to the end of the JSON string).
    let mut parts = source.split("VERDICT: ");
    let mut hostile = parts.next().unwrap().to_owned();
    for part in parts {
        let rest = &part[part.find(['"', '\\']).unwrap()..];
        hostile.push_str("VERDICT: <img src=x onerror=alert(2)> http://evil.example");
        hostile.push_str(rest);
    }
    let hostile = hostile.replace(
        "salt-converges-r3",
        "<script>alert(1)</script> https://evil.example/x",
    );
    let fixture = dir.join("hostile.jsonl");
    std::fs::write(&fixture, hostile).unwrap();
    let html = report(&dir, &[fixture.to_str().unwrap()]);
    assert_self_contained(&html);
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; https&#58;//evil.example/x"));
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt; http&#58;//evil.example"));
}

#[test]
fn escaping_leaves_no_markup_no_address_and_no_control_character() {
    assert_eq!(
        escape("a<b>&\"c\"'d' https://x \u{1b}[2J \u{202e}"),
        "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39; https&#58;//x ␛[2J �"
    );
}

#[test]
fn the_command_line_in_the_report_leaves_passwords_out() {
    let line = |args: &[&str]| command_line(args.iter().map(|a| (*a).to_owned()));
    assert_eq!(
        line(&[
            "gavel",
            "calibrate",
            "--db",
            "postgres://bob:s3cr@t@db:5432/debates?sslmode=require"
        ]),
        "gavel calibrate --db 'postgres://bob:***@db:5432/debates?sslmode=require'"
    );
    assert_eq!(
        line(&[
            "gavel",
            "calibrate",
            "--db=postgres://db/x?user=bob&password=hunter2&a=b"
        ]),
        "gavel calibrate '--db=postgres://db/x?user=bob&password=***&a=b'"
    );
    assert_eq!(
        line(&[
            "gavel",
            "calibrate",
            "--db",
            "host=db PASSWORD=hunter2 dbname=x",
            "my debates/"
        ]),
        "gavel calibrate --db 'host=db PASSWORD=*** dbname=x' 'my debates/'"
    );
    assert_eq!(line(&["gavel", "it's"]), "gavel 'it'\\''s'");
}

/// Headless Chromium as this machine runs it (as root, no network, no GPU), with a fresh profile.
fn chromium(profile: &Path) -> Command {
    let mut command = Command::new("chromium");
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Pixels of `png` within a few steps of `rgb`.
fn pixels_like(png: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(
        channels >= 3,
        "a colour screenshot, got {:?}",
        info.color_type
    );
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| (0..3).all(|i| px[i].abs_diff(rgb[i]) <= 24))
        .count()
}

#[test]
fn headless_chromium_renders_the_report_with_a_clean_console_and_the_chart_on_screen() {
    let dir = scratch("chromium");
    report(&dir, &["fixtures"]);
    let shot = dir.join("shot.png");
    let run = chromium(&dir.join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,1400")
        .arg(format!("file://{}", dir.join("report.html").display()))
        .output();
    let out = match run {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "headless Chromium is needed to test the HTML report and `chromium` is not on PATH: \
             install Debian's package (apt-get install chromium), as scripts/test does"
        ),
        Err(e) => panic!("cannot run chromium: {e}"),
    };
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed:\n{log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "the page wrote to the console:\n{}",
        console.join("\n")
    );
    assert!(shot.is_file(), "no screenshot:\n{log}");
    // The chart's own colours: the frontier's blue and the setting in force's orange.
    let frontier = pixels_like(&shot, [0x00, 0x72, 0xb2]);
    let in_force = pixels_like(&shot, [0xd5, 0x5e, 0x00]);
    assert!(
        frontier > 200 && in_force > 20,
        "the chart is not on screen: {frontier} frontier and {in_force} in-force pixels"
    );
    let paper = pixels_like(&shot, [0xff, 0xff, 0xff]);
    assert!(paper > 0, "the page is not drawn at all");
}
