//! Shell completions and man pages generated from the clap definitions, through the gavel
//! binary: bash loads its script and completes subcommands, zsh and fish scripts name every
//! subcommand, the man page is roff with the connection options, and `man --dir` writes one page
//! per command, and neither fails when the reader closes the pipe early (`| head -1`).

use std::process::{Command, Stdio};

fn gavel(args: &[&str]) -> (bool, String, String) {
    let ran = crate::common::run_to_end(crate::common::gavel().args(args));
    (ran.ok, ran.stdout, ran.stderr)
}

const SUBCOMMANDS: &[&str] = &[
    "demo",
    "migrate",
    "grant",
    "settings",
    "watch",
    "simulate",
    "calibrate",
    "trace",
    "export",
    "check",
    "completions",
    "man",
    "models",
];

#[test]
fn bash_completes_subcommands_and_options() {
    let (ok, script, _) = gavel(&["completions", "bash"]);
    assert!(ok);
    let dir = std::env::temp_dir().join(format!("gavel-completions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gavel.bash");
    std::fs::write(&file, &script).unwrap();
    // Load the script, then complete `gavel mi<TAB>` and `gavel migrate --d<TAB>` as bash would.
    let probe = format!(
        "source {}\n\
         COMP_WORDS=(gavel mi); COMP_CWORD=1; COMP_LINE='gavel mi'; COMP_POINT=8\n\
         _gavel gavel mi gavel; echo \"${{COMPREPLY[@]}}\"\n\
         COMP_WORDS=(gavel migrate --d); COMP_CWORD=2; COMP_LINE='gavel migrate --d'; COMP_POINT=17\n\
         _gavel gavel --d migrate; echo \"${{COMPREPLY[@]}}\"\n\
         complete -p gavel\n",
        file.display()
    );
    let output = Command::new("bash").arg("-c").arg(probe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let out = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(lines[0], "migrate");
    assert_eq!(lines[1], "--db");
    assert!(lines[2].ends_with("-F _gavel gavel"), "{out}");
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    let (ok, zsh, _) = gavel(&["completions", "zsh"]);
    assert!(ok);
    assert!(zsh.starts_with("#compdef gavel"), "{zsh:.200}");
    let (ok, fish, _) = gavel(&["completions", "fish"]);
    assert!(ok);
    for name in SUBCOMMANDS {
        assert!(zsh.contains(&format!("'{name}:")), "zsh lacks {name}");
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "fish lacks {name}"
        );
    }
    let (ok, _, error) = gavel(&["completions", "tcsh"]);
    assert!(!ok);
    assert!(
        error.contains("invalid value 'tcsh'")
            && error.contains("bash, elvish, fish, powershell, zsh"),
        "{error}"
    );
}

#[test]
fn man_pages_come_from_the_same_definitions() {
    let (ok, page, _) = gavel(&["man"]);
    assert!(ok);
    assert!(page.contains(".TH gavel 1"), "{page:.300}");
    for name in SUBCOMMANDS {
        assert!(
            page.contains(&format!("gavel\\-{name}(1)")),
            "the page lacks {name}"
        );
    }
    let dir = std::env::temp_dir().join(format!("gavel-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ok, _, error) = gavel(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(ok, "{error}");
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut expected: Vec<String> = SUBCOMMANDS
        .iter()
        .map(|name| format!("gavel-{name}.1"))
        .chain(
            [
                "gavel.1",
                "gavel-models-fetch.1",
                "gavel-models-list.1",
                "gavel-settings-list.1",
                "gavel-settings-show.1",
                "gavel-settings-publish.1",
                "gavel-settings-promote.1",
                "gavel-settings-rollback.1",
            ]
            .map(str::to_owned),
        )
        .collect();
    expected.sort();
    assert_eq!(written, expected);
    let migrate = std::fs::read_to_string(dir.join("gavel-migrate.1")).unwrap();
    assert!(migrate.contains("PGSSLROOTCERT"), "{migrate}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reader_that_stops_early_is_no_failure() {
    let commands: [&[&str]; 2] = [&["completions", "bash"], &["man"]];
    for args in commands {
        // A pipe whose reading end is closed before gavel writes: every write meets EPIPE.
        let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
        let closed = reader.stdin.take().unwrap();
        reader.wait().unwrap();
        let output = crate::common::gavel()
            .args(args)
            .stdout(closed)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).as_ref()
            ),
            (Some(0), ""),
            "gavel {args:?} | head -1"
        );
    }
}
