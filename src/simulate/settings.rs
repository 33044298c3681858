//! A recorded debate played under the controller settings it was given at its start
//! (`gavel_settings_for`): the version's mode, thresholds, bounds and measure replace the
//! recording's and the configuration's; with nothing published, both stand unchanged.

use std::sync::Arc;

use super::fixture::Fixture;
use crate::config::{Config, SimilarityKind};
use crate::domain::{Assigned, MeasureKind};

/// `fixture` and `config` as the debate plays them under `assigned`.
pub fn under(
    mut fixture: Fixture,
    config: &Arc<Config>,
    assigned: &Assigned,
) -> (Fixture, Arc<Config>) {
    let Some(values) = &assigned.values else {
        return (fixture, config.clone());
    };
    let session = &mut fixture.session;
    session.controller_mode = values.mode;
    session.min_rounds = Some(values.min_rounds);
    session.max_rounds = Some(values.max_rounds);
    let mut config = Config::clone(config);
    let controller = &mut config.controller;
    controller.similarity_threshold = values.similarity_threshold;
    controller.novelty_threshold = values.novelty_floor;
    controller.min_rounds = values.min_rounds;
    controller.max_rounds = values.max_rounds;
    controller
        .max_rounds_by_type
        .insert(session.debate_type.clone(), values.max_rounds);
    controller.budget_fraction = values.budget_fraction;
    config.signals.similarity = match values.similarity_measure {
        MeasureKind::Lexical => SimilarityKind::Lexical,
        MeasureKind::Semantic => SimilarityKind::Semantic,
    };
    (fixture, Arc::new(config))
}
