//! What the header says of a console that reads a subscriber and writes its primary (`gavel
//! watch --read-from`): where it reads; how far behind the primary, once that passes a second;
//! a subscription disabled, or not applying; the primary out of reach, and so its writes; the
//! subscription's slot on the primary lost, missing, about to be lost, inactive or keeping
//! much WAL, and clearing once it is back. The
//! states as the presence side reports them (`store::Replica`), drawn whole; the same reports
//! come from real servers in `read_apart` and `read_apart_faults`.

use std::time::Duration;

use gavel::console::app::{
    Event, KEPT_SHOWN_MIB, Link, Model, Reading, SlotTrouble, Stall, update,
};
use gavel::store::{Replica, Slot, SlotStanding, Subscription};

use crate::common;
use common::demo_model;

/// The subscription the tests' subscriber has, applying.
fn applying() -> Subscription {
    Subscription {
        name: "gavel_debates".into(),
        enabled: true,
        applying: true,
        errors: Some(0),
        slot: Some("gavel_debates".into()),
    }
}

/// The subscription's slot on the primary, standing so.
fn slot(standing: SlotStanding) -> Replica {
    Replica::Slots(Ok(vec![Slot {
        name: "gavel_debates".into(),
        standing,
    }]))
}

/// A slot the primary holds: streamed or not (`active`), keeping `kept_mib` of WAL, past
/// `max_slot_wal_keep_size` or not (`unreserved`).
fn held(active: bool, kept_mib: u64, unreserved: bool) -> SlotStanding {
    SlotStanding::Held {
        active,
        kept_mib,
        unreserved,
    }
}

/// A slot streamed and keeping `kept_mib` of WAL.
fn streamed(kept_mib: u64) -> SlotStanding {
    held(true, kept_mib, false)
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

/// [`reading`], its subscription disabled and `seconds` behind.
fn stalled(seconds: u64) -> Model {
    let mut model = reading();
    let disabled = Subscription {
        enabled: false,
        applying: false,
        ..applying()
    };
    tell(&mut model, Replica::Subscriptions(Ok(vec![disabled])));
    tell(
        &mut model,
        Replica::Behind(Some(Duration::from_secs(seconds))),
    );
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
    let mut model = stalled(12);
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

#[test]
fn a_slot_streamed_keeping_little_wal_says_nothing_and_keeping_much_says_how_much() {
    let mut model = reading();
    tell(&mut model, slot(streamed(KEPT_SHOWN_MIB - 1)));
    assert!(!header(&model).contains("slot"), "{}", header(&model));
    tell(&mut model, slot(streamed(1_300)));
    assert!(
        header(&model).contains("│ reading replica-1:5432/debates │ ⚠ slot keeps 1.3 GB of WAL │"),
        "{}",
        header(&model)
    );
    tell(&mut model, slot(streamed(80)));
    assert!(header(&model).contains("│ ⚠ slot keeps 80 MB of WAL │"));
    // Back under the mark: cleared.
    tell(&mut model, slot(streamed(2)));
    assert!(!header(&model).contains("slot"), "{}", header(&model));
}

#[test]
fn an_inactive_slot_is_said_with_the_wal_it_keeps_after_how_far_behind() {
    let mut model = stalled(42);
    tell(&mut model, slot(held(false, 96, false)));
    assert!(
        header(&model).contains(
            "│ ✗ subscription gavel_debates disabled │ behind 0:42 │ ⚠ slot inactive, keeps 96 MB"
        ),
        "{}",
        header(&model)
    );
    insta::assert_snapshot!("reading_slot_inactive", common::screen_at(&model, 160, 48));
    tell(&mut model, slot(held(false, 0, false)));
    assert!(
        header(&model).contains("│ ⚠ slot inactive │"),
        "{}",
        header(&model)
    );
    // Streamed again: cleared.
    tell(&mut model, slot(streamed(0)));
    assert!(!header(&model).contains("slot"), "{}", header(&model));
}

#[test]
fn a_lost_slot_says_the_subscriber_must_be_rebuilt_and_outranks_the_rest() {
    let mut model = reading();
    tell(&mut model, slot(SlotStanding::Lost));
    assert_eq!(
        model.live.reading.as_ref().unwrap().slot_trouble(),
        Some(SlotTrouble::Lost("gavel_debates"))
    );
    assert!(
        header(&model).contains("│ ✗ slot lost: rebuild the subscriber │"),
        "{}",
        header(&model)
    );
    insta::assert_snapshot!("reading_slot_lost", common::screen_at(&model, 160, 48));

    // Several slots: the worst is said, named.
    let other = |standing| Slot {
        name: "gavel_other".into(),
        standing,
    };
    let slots = |standing| {
        Replica::Slots(Ok(vec![
            Slot {
                name: "gavel_debates".into(),
                standing: streamed(100),
            },
            other(standing),
        ]))
    };
    tell(&mut model, slots(SlotStanding::Lost));
    assert!(header(&model).contains("│ ✗ slot gavel_other lost: rebuild the subscriber │"));
    tell(&mut model, slots(SlotStanding::Missing));
    assert!(header(&model).contains("│ ✗ slot gavel_other missing on the primary │"));
    tell(&mut model, slots(held(true, 2_048, true)));
    assert!(
        header(&model).contains("│ ✗ slot gavel_other about to be lost, keeps 2.0 GB │"),
        "{}",
        header(&model)
    );
    tell(&mut model, slots(streamed(1)));
    assert!(header(&model).contains("│ ⚠ slot gavel_debates keeps 100 MB of WAL │"));

    tell(
        &mut model,
        Replica::Slots(Err("permission denied for view x".into())),
    );
    assert!(header(&model).contains("│ ⚠ slot unknown: permission denied for view x │"));
    // The primary out of reach says nothing of its slots; back, it says them again.
    tell(&mut model, slot(SlotStanding::Lost));
    let down = Link::Down {
        error: "connection refused".into(),
        retry_in: Duration::from_secs(1),
    };
    tell(&mut model, Replica::Primary(down));
    assert!(!header(&model).contains("slot"), "{}", header(&model));
    tell(&mut model, Replica::Primary(Link::Live));
    tell(&mut model, slot(streamed(0)));
    assert_eq!(model.live.reading.as_ref().unwrap().slot_trouble(), None);
}
