use gavel::config::Config;
use gavel::domain::*;
use gavel::simulate::*;
use std::sync::Arc;

#[test]
fn dump() {
    for entry in std::fs::read_dir("fixtures").unwrap() {
        let path = entry.unwrap().path();
        let mut fixture = match Fixture::load(&path) {
            Ok(f) => f,
            Err(e) => {
                println!("{e}");
                continue;
            }
        };
        let mode = fixture.session.controller_mode;
        if mode == ControllerMode::Gated {
            fixture.session.controller_mode = ControllerMode::Enabled;
        }
        println!("== {} ({mode})", path.display());
        let mut run = DebateRun::new(fixture, Arc::new(Config::default()), Ids::default());
        run.start();
        for _ in 0..12 {
            for c in run.play_round() {
                match c {
                    Change::Decision(d) => println!(
                        "  r{} {} sim={:?} v={:?} split={:?} new={:?} disp={:?} | {}",
                        d.round_index,
                        d.decision,
                        d.signals.similarity.map(|s| (s * 1000.0).round() / 1000.0),
                        d.signals.verdict,
                        d.signals.verdict_split,
                        d.signals.new_claims,
                        d.signals.open_disputes,
                        d.signals.reasons.join(" ; ")
                    ),
                    Change::Judgment(j)
                        if j.decision != Reported::Known(JudgeDecision::Continue) =>
                    {
                        println!(
                            "  judge r{} {} {} {:?}",
                            j.round_index, j.agent_persona, j.decision, j.reasons
                        )
                    }
                    _ => {}
                }
            }
            if run.is_finished() {
                break;
            }
        }
        let s = run.session();
        println!(
            "  -> {} num_rounds={:?} tokens={}/{}",
            s.status, s.num_rounds, s.tokens_used, s.token_budget
        );
    }
}
