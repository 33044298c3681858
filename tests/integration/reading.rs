//! What the header says of a console that reads a subscriber and writes its primary (`gavel
//! watch --read-from`): where it reads; how far behind the primary, once that passes a second;
//! a subscription disabled, or not applying; the primary out of reach, and so its writes. The
//! states as the presence side reports them (`store::Replica`), drawn whole; the same reports
//! come from real servers in `read_apart` and `read_apart_faults`.

use std::time::Duration;

use gavel::console::app::{Event, Link, Model, Reading, Stall, update};
use gavel::store::{Replica, Subscription};

use crate::common;
use common::demo_model;

/// The subscription the tests' subscriber has, applying.
fn applying() -> Subscription {
    Subscription {
        name: "gavel_debates".into(),
        enabled: true,
        applying: true,
        errors: Some(0),
    }
}

/// The demo's debates on a console reading `replica-1`, its feed live, the primary answering
/// and the subscription applying.
fn reading() -> Model {
    let (mut model, _) = demo_model();
    model.live.link = Some(Link::Live);
    model.live.reading = Some(Reading::new("replica-1:5432/debates".into()));
    tell(&mut model, Replica::Primary(Link::Live));
    tell(&mut model, Replica::Subscriptions(Ok(vec![applying()])));
    model
}

fn tell(model: &mut Model, replica: Replica) {
    update(model, Event::Replica(replica));
}

/// The header's line.
fn header(model: &Model) -> String {
    common::screen_at(model, 160, 48)
        .lines()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn the_header_says_where_the_console_reads_and_nothing_more_while_it_keeps_up() {
    let mut model = reading();
    tell(
        &mut model,
        Replica::Behind(Some(Duration::from_millis(900))),
    );
    assert!(header(&model).contains("│ ● live │ reading replica-1:5432/debates │"));
    assert!(!header(&model).contains("behind"), "{}", header(&model));
    insta::assert_snapshot!("reading_a_subscriber", common::screen_at(&model, 160, 48));
}

#[test]
fn behind_the_primary_is_said_once_it_passes_a_second() {
    let mut model = reading();
    tell(
        &mut model,
        Replica::Behind(Some(Duration::from_millis(4_700))),
    );
    assert!(
        header(&model).contains("│ reading replica-1:5432/debates │ behind 0:04 │"),
        "{}",
        header(&model)
    );
    insta::assert_snapshot!("reading_behind", common::screen_at(&model, 160, 48));
    tell(&mut model, Replica::Behind(Some(Duration::from_secs(75))));
    assert!(header(&model).contains("behind 1:15"), "{}", header(&model));
    tell(&mut model, Replica::Behind(Some(Duration::from_millis(20))));
    assert!(!header(&model).contains("behind"), "caught up");
}

#[test]
fn a_stalled_subscription_is_said_with_how_far_behind() {
    let mut model = reading();
    let disabled = Subscription {
        enabled: false,
        applying: false,
        ..applying()
    };
    tell(&mut model, Replica::Subscriptions(Ok(vec![disabled])));
    tell(&mut model, Replica::Behind(Some(Duration::from_secs(12))));
    assert_eq!(
        model.live.reading.as_ref().unwrap().stall(),
        Some(Stall::Disabled("gavel_debates"))
    );
    assert!(
        header(&model).contains("│ ✗ subscription gavel_debates disabled │ behind 0:12 │"),
        "{}",
        header(&model)
    );
    insta::assert_snapshot!("reading_stalled", common::screen_at(&model, 160, 48));

    let failing = Subscription {
        applying: false,
        errors: Some(3),
        ..applying()
    };
    tell(&mut model, Replica::Subscriptions(Ok(vec![failing])));
    assert!(
        header(&model).contains("│ ✗ subscription gavel_debates not applying (3 errors) │"),
        "{}",
        header(&model)
    );
    tell(&mut model, Replica::Subscriptions(Ok(Vec::new())));
    assert!(header(&model).contains("│ ⚠ subscribes to nothing │"));
    tell(
        &mut model,
        Replica::Subscriptions(Err("permission denied for view x".into())),
    );
    assert!(header(&model).contains("│ ⚠ subscription unknown: permission denied for view x │"));
    tell(&mut model, Replica::Subscriptions(Ok(vec![applying()])));
    tell(&mut model, Replica::Behind(Some(Duration::ZERO)));
    assert!(!header(&model).contains('✗'), "{}", header(&model));
}

#[test]
fn the_primary_out_of_reach_is_said_and_nothing_measures_the_lag_meanwhile() {
    let mut model = reading();
    tell(&mut model, Replica::Behind(Some(Duration::from_secs(3))));
    let down = Link::Down {
        error: "cannot connect to primary-1:5432/debates: connection refused".into(),
        retry_in: Duration::from_secs(2),
    };
    tell(&mut model, Replica::Primary(down));
    let line = header(&model);
    assert!(
        line.contains("│ ● live │ reading replica-1:5432/debates │ ✗ primary: cannot connect to"),
        "{line}"
    );
    assert!(line.contains("(writes fail)"), "{line}");
    assert!(!line.contains("behind"), "{line}");
    insta::assert_snapshot!("reading_primary_down", common::screen_at(&model, 160, 48));
}

#[test]
fn a_console_on_one_database_says_nothing_of_replication() {
    let (mut model, _) = demo_model();
    model.live.link = Some(Link::Live);
    tell(&mut model, Replica::Behind(Some(Duration::from_secs(30))));
    assert!(!header(&model).contains("reading"));
    assert!(!header(&model).contains("behind"));
}
