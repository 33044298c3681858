//! What the benches generate: debate-like text (a deterministic generator, so every run
//! measures the same debates), real-sized debates made of the bundled recordings' sentences,
//! recordings written from generated text, and a fresh home to run the binary in as a new user
//! would. Shared by the benches that include it (each uses part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const AGENTS: usize = 7;
pub const VERDICTS: &[&str] = &["proceed", "do not proceed", "proceed with caution"];
pub const STOPWORDS: &[&str] = &[
    "the", "of", "and", "in", "to", "is", "that", "with", "for", "as",
];

/// A home as a new user has it: XDG config, data, state and cache directories in a scratch
/// directory holding nothing (no config file, no kept vectors, no fetched model); removed
/// when dropped.
pub struct FreshHome(pub PathBuf);

impl FreshHome {
    pub fn new(name: &str) -> FreshHome {
        let dir = std::env::temp_dir().join(format!("gavel-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        FreshHome(dir)
    }

    /// `binary` to run in this home.
    pub fn command(&self, binary: &str) -> Command {
        let mut command = Command::new(binary);
        for (key, dir) in [
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
        ] {
            command.env(key, self.0.join("home").join(dir));
        }
        command
    }

    /// Empties the home (not the recordings beside it), as before a new user's next run.
    pub fn reset(&self) {
        let _ = std::fs::remove_dir_all(self.0.join("home"));
    }
}

impl Drop for FreshHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `count` generated debates of `rounds` rounds (7 agents, turns of 1.2-1.8 KB) as
/// recordings into `dir`; the turns and bytes written.
pub fn write_recordings(dir: &Path, count: usize, rounds: usize, seed: u64) -> (usize, usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut generator = Generator::new(seed);
    let personas: Vec<String> = (0..AGENTS).map(|a| format!("agent{a}")).collect();
    let (mut turns, mut bytes) = (0, 0);
    for n in 0..count {
        let session = serde_json::json!({"session": {
            "id": format!("generated-{rounds}-{n}"),
            "question": format!("Generated question {n}?"),
            "controller_mode": "shadow",
            "personas": personas,
            "token_budget": 100_000_000,
            "max_rounds": rounds,
        }});
        let mut lines = vec![session.to_string()];
        for (round, agents) in generator
            .debate(rounds, (1_200, 1_800))
            .into_iter()
            .enumerate()
        {
            for (persona, content) in personas.iter().zip(agents) {
                turns += 1;
                bytes += content.len();
                let turn = serde_json::json!({"turn": {
                    "round": round + 1,
                    "persona": persona,
                    "tokens": content.len() / 4,
                    "content": content,
                }});
                lines.push(turn.to_string());
            }
        }
        std::fs::write(
            dir.join(format!("generated-{n:03}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    (turns, bytes)
}

/// splitmix64: a small deterministic generator, so every run measures the same debates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    /// Uniform in `0.0..1.0`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-normal: `exp(mu + sigma * z)` for a standard normal `z` (Box-Muller).
    fn log_normal(&mut self, mu: f64, sigma: f64) -> f64 {
        let (u, v) = (1.0 - self.unit(), self.unit());
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        (mu + sigma * z).exp()
    }
}

/// Debates the size of real ones, in real debaters' English: the sentences of the bundled
/// recordings (fixtures/), drawn at random into turns. Each debate runs 2 to 4 rounds (3 on
/// average) of 3 to 6 speakers; a turn's length is log-normal, a median of 735 bytes (about 170
/// tokens; one in twenty under 275 bytes, one in twenty over 1,970), and ends with its
/// verdict, so a round holds a few hundred to a few thousand tokens (about 900 on average).
/// Each debate's rounds, each round its speakers' turns.
pub fn real_sized(count: usize, seed: u64) -> Vec<Vec<Vec<String>>> {
    let sentences: Vec<String> = gavel::simulate::Fixture::bundled()
        .expect("the bundled fixtures")
        .iter()
        .flat_map(|fixture| &fixture.turns)
        .flat_map(|turn| {
            gavel::embed::sentences(&turn.content)
                .into_iter()
                .map(|range| turn.content[range].to_owned())
        })
        .filter(|sentence| !sentence.starts_with("VERDICT"))
        .collect();
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let rounds = [2, 3, 3, 3, 4][rng.below(5)];
            let speakers = 3 + rng.below(4);
            (0..rounds)
                .map(|_| {
                    (0..speakers)
                        .map(|_| {
                            let target = rng.log_normal(6.6, 0.6) as usize;
                            let mut turn = String::with_capacity(target + 128);
                            while turn.len() < target {
                                if !turn.is_empty() {
                                    turn.push(' ');
                                }
                                turn.push_str(&sentences[rng.below(sentences.len())]);
                            }
                            turn.push_str("\n\nVERDICT: ");
                            turn.push_str(VERDICTS[rng.below(VERDICTS.len())]);
                            turn
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Debate-like text: a lexicon with a heavy head, each debate with its own jargon, turns that
/// restate earlier sentences with a fifth of their words changed, or say something new.
pub struct Generator {
    rng: Rng,
    lexicon: Vec<String>,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        let mut rng = Rng(seed);
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ga", "pe", "dor", "lin", "mar", "sen",
            "tal", "vic", "bro", "cal", "fen", "gru",
        ];
        let lexicon = (0..6_000)
            .map(|_| {
                (0..2 + rng.below(3))
                    .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                    .collect()
            })
            .collect();
        Generator { rng, lexicon }
    }

    fn jargon(&mut self, jargon: &[String]) -> String {
        jargon[self.rng.below(jargon.len())].clone()
    }

    fn common(&mut self) -> String {
        let skew = self.rng.unit().powi(3);
        self.lexicon[(skew * self.lexicon.len() as f64) as usize].clone()
    }

    fn new_sentence(&mut self, jargon: &[String]) -> Vec<String> {
        (0..10 + self.rng.below(13))
            .map(|_| match self.rng.below(20) {
                0..=6 => self.jargon(jargon),
                7..=11 => STOPWORDS[self.rng.below(STOPWORDS.len())].to_owned(),
                _ => self.common(),
            })
            .collect()
    }

    /// One debate's rounds, each the turns of its agents.
    pub fn debate(&mut self, rounds: usize, turn_bytes: (usize, usize)) -> Vec<Vec<String>> {
        let jargon: Vec<String> = (0..80).map(|_| self.common() + "x").collect();
        let mut said: Vec<Vec<String>> = Vec::new();
        (0..rounds)
            .map(|_| {
                (0..AGENTS)
                    .map(|_| {
                        let target = turn_bytes.0 + self.rng.below(turn_bytes.1 - turn_bytes.0);
                        let mut turn = String::with_capacity(target + 64);
                        while turn.len() < target {
                            let sentence = if !said.is_empty() && self.rng.chance(0.5) {
                                let mut old = said[self.rng.below(said.len())].clone();
                                for word in &mut old {
                                    if self.rng.chance(0.2) {
                                        *word = self.common();
                                    }
                                }
                                old
                            } else {
                                self.new_sentence(&jargon)
                            };
                            turn.push_str(&sentence.join(" "));
                            turn.push_str(if self.rng.chance(0.25) { ".\n" } else { ". " });
                            said.push(sentence);
                        }
                        turn.push_str("\nVERDICT: ");
                        turn.push_str(VERDICTS[self.rng.below(VERDICTS.len())]);
                        turn
                    })
                    .collect()
            })
            .collect()
    }
}
