//! The figures of one run (one gavel build on its own databases, one a context, beside the bare
//! listeners) and the closing table: each figure with the target and whether it was
//! met, and beside it each other run's figure (a baseline build's, the same build's on another
//! number of contexts) and the ratio of the two.

use super::markers::Stats;

/// A figure for gavel and for the bare listener.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pair<T> {
    pub gavel: T,
    pub bare: T,
}

/// The stream of debates (phase 2).
#[derive(Debug, Default)]
pub struct Stream {
    pub turns: u64,
    pub debates: u64,
    pub secs: f64,
    /// How long a writer was held back because gavel lagged more than 1 s, on average.
    pub paused_secs: f64,
    /// Whether it ended before the time limit.
    pub complete: bool,
}

/// One step of the ingest ramp (phase 4).
#[derive(Debug)]
pub struct Step {
    pub rate: u32,
    pub achieved: f64,
    pub sustained: Pair<bool>,
}

/// Everything one run measures.
#[derive(Debug, Default)]
pub struct Figures {
    /// Debates in the databases before the stream (probes included).
    pub few_held: u64,
    pub few: Pair<Stats>,
    pub stream: Stream,
    /// Debates in the databases after the stream (probes included).
    pub held: u64,
    pub many: Pair<Stats>,
    pub rss_mib: Pair<f64>,
    pub cpu_idle: Pair<f64>,
    pub cpu_load: Pair<f64>,
    pub steps: Vec<Step>,
    /// Spawn to first non-empty screen, and to `● live`, in ms (None: not within the limit).
    pub first_frame: Option<f64>,
    pub live: Option<f64>,
}

impl Figures {
    /// The highest step sustained by each (NaN, shown as `—`, when none was).
    pub fn highest(&self) -> Pair<f64> {
        let best = |ok: fn(&Step) -> bool| {
            self.steps
                .iter()
                .filter(|s| ok(s))
                .map(|s| f64::from(s.rate))
                .fold(f64::NAN, f64::max)
        };
        Pair {
            gavel: best(|s| s.sustained.gavel),
            bare: best(|s| s.sustained.bare),
        }
    }
}

struct Row {
    figure: String,
    target: &'static str,
    gavel: f64,
    bare: Option<f64>,
    /// Whether gavel's figure is within the target, where there is one.
    met: Option<bool>,
}

impl Row {
    fn new(figure: impl Into<String>, target: &'static str, gavel: f64) -> Row {
        Row {
            figure: figure.into(),
            target,
            gavel,
            bare: None,
            met: None,
        }
    }

    fn bare(self, bare: f64) -> Row {
        Row {
            bare: Some(bare),
            ..self
        }
    }

    fn met(self, met: bool) -> Row {
        Row {
            met: Some(met),
            ..self
        }
    }
}

fn latency_rows(rows: &mut Vec<Row>, at: &str, l: &Pair<Stats>) {
    let ratio = l.gavel.p50 / l.bare.p50;
    rows.push(
        Row::new(
            format!("latency p50 at {at} (ms)"),
            "within 2x bare",
            l.gavel.p50,
        )
        .bare(l.bare.p50)
        .met(ratio <= 2.0),
    );
    rows.push(
        Row::new(format!("latency p99 at {at} (ms)"), "< 10 ms", l.gavel.p99)
            .bare(l.bare.p99)
            .met(l.gavel.p99 < 10.0),
    );
    rows.push(Row::new(format!("latency max at {at} (ms)"), "", l.gavel.max).bare(l.bare.max));
    rows.push(
        Row::new(
            format!("markers lost at {at} (of {})", l.gavel.count),
            "0",
            l.gavel.lost as f64,
        )
        .bare(l.bare.lost as f64)
        .met(l.gavel.lost == 0),
    );
}

fn rows(f: &Figures) -> Vec<Row> {
    let mut rows = Vec::new();
    latency_rows(&mut rows, &format!("{} debates", f.few_held), &f.few);
    let s = &f.stream;
    rows.push(Row::new(
        format!(
            "stream: {} turns into {} debates (s){}",
            s.turns,
            s.debates,
            if s.complete { "" } else { " UNFINISHED" }
        ),
        "",
        s.secs,
    ));
    rows.push(Row::new("stream: turns/s", "", s.turns as f64 / s.secs));
    rows.push(Row::new(
        "stream: a writer held back (s, mean)",
        "",
        s.paused_secs,
    ));
    latency_rows(&mut rows, &format!("{} debates", f.held), &f.many);
    let best = f.highest();
    rows.push(
        Row::new("highest sustained ingest (turns/s)", ">= 5,000", best.gavel)
            .bare(best.bare)
            .met(best.gavel >= 5000.0),
    );
    rows.push(Row::new("CPU idle (% of a core)", "", f.cpu_idle.gavel).bare(f.cpu_idle.bare));
    rows.push(
        Row::new(
            "CPU at 1,000 turns/s (% of a core)",
            "< 10%",
            f.cpu_load.gavel,
        )
        .bare(f.cpu_load.bare)
        .met(f.cpu_load.gavel < 10.0),
    );
    rows.push(
        Row::new("RSS after the stream (MiB)", "< 100 MiB", f.rss_mib.gavel)
            .bare(f.rss_mib.bare)
            .met(f.rss_mib.gavel < 100.0),
    );
    let ms = |v: Option<f64>| v.unwrap_or(f64::NAN);
    rows.push(
        Row::new(
            "first frame on the full databases (ms)",
            "< 300 ms",
            ms(f.first_frame),
        )
        .met(f.first_frame.is_some_and(|t| t < 300.0)),
    );
    rows.push(Row::new("spawn to `● live` (ms)", "", ms(f.live)));
    rows
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "—".to_owned()
    } else if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Prints the table of `main` (a label and its figures) with, beside it, each of `others`'
/// gavel figures and the ratio main/other. The labels may be empty when there are no others.
pub fn print(main: (&str, &Figures), others: &[(&str, &Figures)]) {
    let titled = |label: &str| match label {
        "" => "gavel".to_owned(),
        label => format!("gavel, {label}"),
    };
    let other_rows: Vec<Vec<Row>> = others.iter().map(|(_, f)| rows(f)).collect();
    let mut lines = vec![vec![
        "figure".to_owned(),
        "target".to_owned(),
        titled(main.0),
        "bare".to_owned(),
        "gavel/bare".to_owned(),
        "met".to_owned(),
    ]];
    for (label, _) in others {
        lines[0].extend([titled(label), format!("{} / {label}", main.0)]);
    }
    for (i, row) in rows(main.1).into_iter().enumerate() {
        let mut line = vec![
            row.figure,
            row.target.to_owned(),
            number(row.gavel),
            row.bare.map_or(String::new(), number),
            row.bare
                .filter(|_| row.target.contains("bare"))
                .map_or(String::new(), |b| format!("{:.1}x", row.gavel / b)),
            row.met
                .map_or("", |m| if m { "met" } else { "MISSED" })
                .to_owned(),
        ];
        for other in other_rows.iter().map(|r| &r[i]) {
            line.push(number(other.gavel));
            let ratio = row.gavel / other.gavel;
            line.push(if ratio.is_finite() {
                format!("{ratio:.2}x")
            } else {
                "—".to_owned()
            });
        }
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                if c == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        println!("| {} |", cells.join(" | "));
    }
    for (label, figures) in std::iter::once(&main).chain(others) {
        let steps: Vec<String> = figures
            .steps
            .iter()
            .map(|s| {
                format!(
                    "{} ({:.0} written): gavel {}, bare {}",
                    s.rate,
                    s.achieved,
                    verdict(s.sustained.gavel),
                    verdict(s.sustained.bare)
                )
            })
            .collect();
        println!(
            "ingest steps, {} (turns/s): {}",
            titled(label),
            steps.join("; ")
        );
    }
}

fn verdict(sustained: bool) -> &'static str {
    if sustained {
        "sustained"
    } else {
        "not sustained"
    }
}
