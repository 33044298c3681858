-- The controller's settings per debate type, as an evidence-backed history, rolled out to a
-- share of debates.
-- * gavel_controller_settings: one row per version, numbered once (`version`), never changed.
--   A row is one of three kinds:
--     publish   new values (mode, thresholds, bounds) for a debate type, with a reason and the
--               evidence they came from (the calibration's digest, grid point, source, window of
--               debates and count; NULL when the values were given by hand), sent to a share of
--               the debate type's new debates (`share_bp`, basis points: 10000 is every debate);
--     promote   the canary `target` sent to every new debate;
--     rollback  the canary `target` (or the version in force, when it came from the latest
--               publish or promote) withdrawn: the version before it is in force again.
--   The database fills in what follows from the history, so that no writer can get it wrong:
--   who published the row (`published_by`: the session's role, as the audit trail stamps
--   actions), when (`published_at`), and the state the row leaves: the stable version
--   (`stable_version`, NULL: the controller's own defaults), the canary and its share
--   (`canary_version`, `canary_share_bp`), and the stable version before it
--   (`previous_stable`). A promote or rollback copies the values it puts in force.
--   Rows of a debate type are written one at a time (an advisory lock per type) and numbered
--   once they hold it, so two publishers at once each get a whole row with its own number, in
--   the order they were written, and a promote or rollback of a version no longer in force is
--   refused, saying what is.
--   UPDATE, DELETE and TRUNCATE are refused for every role (V2's triggers, ENABLE ALWAYS).
-- * gavel_settings_for(session_id, debate_type): the one call an orchestrator makes at a
--   debate's start: version, arm ('stable' or 'canary') and every setting; where nothing is
--   in force (nothing published, or rolled back to the defaults), version 0, arm 'stable' and
--   NULL settings: the controller's own defaults stand. A debate whose session row already
--   carries a version (0 included) keeps it and its arm.
--   A debate is in the canary when gavel_settings_bucket(id) < the canary's share in basis
--   points: the first 4 bytes of the SHA-256 of the id's UTF-8, read as an unsigned big-endian
--   integer, modulo 10000.
-- * debate_sessions.settings_version, settings_arm: what the orchestrator got, stamped on the
--   debate (0: the defaults; NULL: debates started before, or by an orchestrator that does not
--   ask).
-- * Each new version is notified on the channel gavel_settings:
--   {"debate_type": "standard", "version": 3}.
-- * The functions are pinned to pg_catalog and the schema gavel is migrated into, so they work
--   whatever the caller's search_path (a subscription's apply worker has none).
-- Idempotent like V1 to V4.

ALTER TABLE debate_sessions
    ADD COLUMN IF NOT EXISTS settings_version BIGINT,
    ADD COLUMN IF NOT EXISTS settings_arm TEXT;

CREATE TABLE IF NOT EXISTS gavel_controller_settings (
    version BIGSERIAL PRIMARY KEY,
    debate_type TEXT NOT NULL CHECK (char_length(debate_type) BETWEEN 1 AND 200),
    kind TEXT NOT NULL CHECK (kind IN ('publish', 'promote', 'rollback')),
    target BIGINT,
    share_bp INT CHECK (share_bp BETWEEN 1 AND 10000),
    mode TEXT CHECK (mode IN ('off', 'shadow', 'gated', 'enabled')),
    similarity_threshold DOUBLE PRECISION CHECK (similarity_threshold BETWEEN 0 AND 1),
    similarity_measure TEXT CHECK (similarity_measure IN ('lexical', 'semantic')),
    similarity_model TEXT CHECK (char_length(similarity_model) BETWEEN 1 AND 200),
    novelty_floor INT CHECK (novelty_floor BETWEEN 0 AND 1000),
    min_rounds INT CHECK (min_rounds BETWEEN 1 AND 1000),
    max_rounds INT CHECK (max_rounds BETWEEN 1 AND 1000),
    budget_fraction DOUBLE PRECISION CHECK (budget_fraction > 0 AND budget_fraction <= 1),
    reason TEXT NOT NULL CHECK (char_length(btrim(reason)) BETWEEN 1 AND 1000),
    evidence JSONB CHECK (evidence IS NULL OR jsonb_typeof(evidence) = 'object'),
    published_by TEXT,
    published_at TIMESTAMPTZ,
    stable_version BIGINT,
    canary_version BIGINT,
    canary_share_bp INT,
    previous_stable BIGINT,
    gavel_xid xid8,
    CHECK (min_rounds <= max_rounds),
    CHECK (kind = 'publish' OR target IS NOT NULL),
    CHECK (kind <> 'publish' OR (share_bp IS NOT NULL AND mode IS NOT NULL
        AND similarity_threshold IS NOT NULL AND similarity_measure IS NOT NULL
        AND novelty_floor IS NOT NULL AND min_rounds IS NOT NULL AND max_rounds IS NOT NULL
        AND budget_fraction IS NOT NULL))
);
-- gavel_settings_version numbers each row from the column's sequence.
ALTER TABLE gavel_controller_settings ALTER COLUMN version DROP DEFAULT;
CREATE INDEX IF NOT EXISTS gavel_controller_settings_type
    ON gavel_controller_settings (debate_type, version);

-- The arm's bucket of a debate id: 0..9999.
CREATE OR REPLACE FUNCTION gavel_settings_bucket(session_id text) RETURNS int
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ((get_byte(d, 0)::bigint * 16777216 + get_byte(d, 1) * 65536
             + get_byte(d, 2) * 256 + get_byte(d, 3)) % 10000)::int
    FROM (SELECT sha256(convert_to(session_id, 'UTF8')) AS d) AS digest
$$;

-- Before each new version: stamps who and when, checks the row against the history, and
-- fills in the state it leaves.
CREATE OR REPLACE FUNCTION gavel_settings_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    prev gavel_controller_settings%ROWTYPE;
    restored gavel_controller_settings%ROWTYPE;
    restore bigint;
BEGIN
    NEW.published_by := session_user;
    NEW.published_at := now();
    NEW.gavel_xid := pg_current_xact_id();
    NEW.stable_version := NULL;
    NEW.canary_version := NULL;
    NEW.canary_share_bp := NULL;
    -- One version of a debate type at a time: a second publisher waits here, then sees the
    -- first one's row.
    IF NEW.kind <> 'publish' AND NEW.target IS NULL THEN
        RAISE EXCEPTION 'a % names the version it acts on (target)', NEW.kind
            USING ERRCODE = 'not_null_violation';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('gavel_controller_settings:' || NEW.debate_type, 0));
    -- Numbered once the lock is held, so that of two rows of a type the one written later has
    -- the higher number (the column has no default: a number drawn before the wait could be
    -- passed by a row that waited less).
    NEW.version := nextval(pg_get_serial_sequence('gavel_controller_settings', 'version'));
    SELECT * INTO prev FROM gavel_controller_settings
        WHERE debate_type = NEW.debate_type ORDER BY version DESC LIMIT 1;
    NEW.previous_stable := prev.stable_version;
    IF NEW.kind = 'publish' THEN
        IF prev.canary_version IS NOT NULL THEN
            RAISE EXCEPTION '%', format('version %s of %s is rolling out to %s%% of debates: '
                'promote it or roll it back first', prev.canary_version, NEW.debate_type,
                trim_scale(prev.canary_share_bp / 100.0))
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        NEW.target := NULL;
        IF NEW.share_bp = 10000 THEN
            NEW.stable_version := NEW.version;
        ELSE
            NEW.stable_version := prev.stable_version;
            NEW.canary_version := NEW.version;
            NEW.canary_share_bp := NEW.share_bp;
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.kind = 'promote' THEN
        IF prev.canary_version IS DISTINCT FROM NEW.target THEN
            RAISE EXCEPTION 'version % of % is not rolling out: %', NEW.target, NEW.debate_type,
                CASE WHEN prev.canary_version IS NOT NULL
                     THEN format('version %s is (to %s%% of debates)', prev.canary_version, trim_scale(prev.canary_share_bp / 100.0))
                     WHEN prev.stable_version IS NOT NULL
                     THEN format('version %s is in force for every debate', prev.stable_version)
                     ELSE 'nothing is published: the controller''s defaults are in force' END
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        restore := NEW.target;
    ELSE
        IF prev.kind IS DISTINCT FROM 'rollback'
           AND prev.canary_version IS NOT DISTINCT FROM NEW.target THEN
            restore := prev.stable_version;
        ELSIF prev.kind IN ('publish', 'promote') AND prev.canary_version IS NULL
              AND prev.stable_version = NEW.target THEN
            restore := prev.previous_stable;
        ELSE
            RAISE EXCEPTION 'version % of % cannot be rolled back: %', NEW.target, NEW.debate_type,
                CASE WHEN prev.version IS NULL
                     THEN 'nothing is published: the controller''s defaults are in force'
                     WHEN prev.kind = 'rollback'
                     THEN format('the latest change was the rollback of version %s (version %s); '
                                 'publish the values wanted instead', prev.target, prev.version)
                     WHEN prev.canary_version IS NOT NULL
                     THEN format('version %s is the one rolling out (to %s%% of debates)',
                                 prev.canary_version, trim_scale(prev.canary_share_bp / 100.0))
                     ELSE format('version %s is in force', prev.stable_version) END
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
    NEW.share_bp := 10000;
    NEW.stable_version := restore;
    SELECT * INTO restored FROM gavel_controller_settings WHERE version = restore;
    NEW.mode := restored.mode;
    NEW.similarity_threshold := restored.similarity_threshold;
    NEW.similarity_measure := restored.similarity_measure;
    NEW.similarity_model := restored.similarity_model;
    NEW.novelty_floor := restored.novelty_floor;
    NEW.min_rounds := restored.min_rounds;
    NEW.max_rounds := restored.max_rounds;
    NEW.budget_fraction := restored.budget_fraction;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION gavel_settings_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gavel_settings',
        json_build_object('debate_type', NEW.debate_type, 'version', NEW.version)::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION gavel_settings_for(session_id text, debate_type text)
    RETURNS TABLE (version bigint, arm text, mode text, similarity_threshold double precision,
                   similarity_measure text, similarity_model text, novelty_floor int,
                   min_rounds int, max_rounds int, budget_fraction double precision)
    LANGUAGE plpgsql STABLE AS $$
DECLARE
    stamped record;
    state record;
    chosen bigint;
    chosen_arm text := 'stable';
BEGIN
    SELECT s.settings_version, s.settings_arm INTO stamped
        FROM debate_sessions s WHERE s.id = gavel_settings_for.session_id;
    IF stamped.settings_version IS NOT NULL THEN
        chosen := stamped.settings_version;
        chosen_arm := coalesce(stamped.settings_arm, 'stable');
    ELSE
        SELECT c.stable_version, c.canary_version, c.canary_share_bp INTO state
            FROM gavel_controller_settings c
            WHERE c.debate_type = gavel_settings_for.debate_type
            ORDER BY c.version DESC LIMIT 1;
        chosen := state.stable_version;
        IF state.canary_version IS NOT NULL
           AND gavel_settings_bucket(gavel_settings_for.session_id) < state.canary_share_bp THEN
            chosen := state.canary_version;
            chosen_arm := 'canary';
        END IF;
    END IF;
    RETURN QUERY
        SELECT coalesce(chosen, 0), chosen_arm, c.mode, c.similarity_threshold, c.similarity_measure,
               c.similarity_model, c.novelty_floor, c.min_rounds, c.max_rounds, c.budget_fraction
        FROM (SELECT 1) AS one
        LEFT JOIN gavel_controller_settings c ON c.version = chosen;
END
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION gavel_settings_version() SET search_path = pg_catalog, %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION gavel_settings_notify() SET search_path = pg_catalog, %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION gavel_settings_for(text, text) SET search_path = pg_catalog, %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION gavel_settings_bucket(text) SET search_path = pg_catalog, pg_temp');
END
$$;

CREATE OR REPLACE TRIGGER gavel_settings_version BEFORE INSERT ON gavel_controller_settings
    FOR EACH ROW EXECUTE FUNCTION gavel_settings_version();
CREATE OR REPLACE TRIGGER gavel_settings_notify AFTER INSERT ON gavel_controller_settings
    FOR EACH ROW EXECUTE FUNCTION gavel_settings_notify();
CREATE OR REPLACE TRIGGER gavel_append_only BEFORE UPDATE OR DELETE ON gavel_controller_settings
    FOR EACH ROW EXECUTE FUNCTION gavel_append_only();
CREATE OR REPLACE TRIGGER gavel_append_only_truncate BEFORE TRUNCATE ON gavel_controller_settings
    FOR EACH STATEMENT EXECUTE FUNCTION gavel_append_only();
ALTER TABLE gavel_controller_settings ENABLE ALWAYS TRIGGER gavel_settings_version;
ALTER TABLE gavel_controller_settings ENABLE ALWAYS TRIGGER gavel_settings_notify;
ALTER TABLE gavel_controller_settings ENABLE ALWAYS TRIGGER gavel_append_only;
ALTER TABLE gavel_controller_settings ENABLE ALWAYS TRIGGER gavel_append_only_truncate;

-- As V4's, with the session's settings_version and settings_arm carried in its row.
CREATE OR REPLACE FUNCTION gavel_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    payload text;
    texts json;
BEGIN
    IF TG_TABLE_NAME = 'debate_sessions' THEN
        payload := json_build_object('table', TG_TABLE_NAME, 'session_id', NEW.id)::text;
    ELSIF TG_TABLE_NAME IN ('debate_rounds', 'debate_round_judgments', 'gavel_debate_notes') THEN
        payload := json_build_object('table', TG_TABLE_NAME, 'session_id', NEW.session_id, 'id', NEW.id)::text;
    ELSE
        payload := json_build_object('table', TG_TABLE_NAME, 'session_id', NEW.session_id,
                                     'round_index', NEW.round_index)::text;
    END IF;
    IF octet_length(payload) > 7900 THEN
        payload := json_build_object('table', TG_TABLE_NAME, 'resync', true)::text;
    ELSIF gavel_notify_rows() THEN
        -- The texts of the columns gavel's reads select (src/store/postgres/rows.rs, the
        -- *_COLUMNS), in their order.
        BEGIN
            CASE TG_TABLE_NAME
            WHEN 'debate_sessions' THEN
                texts := json_build_array(NEW.id::text, NEW.question::text,
                    NEW.debate_type::text, NEW.status::text, NEW.controller_mode::text,
                    NEW.num_rounds::text, NEW.min_rounds::text, NEW.max_rounds::text,
                    NEW.token_budget::text, NEW.tokens_used::text, NEW.personas::text,
                    NEW.metadata::text, extract(epoch from NEW.created_at)::text,
                    extract(epoch from NEW.finished_at)::text, NEW.settings_version::text,
                    NEW.settings_arm::text);
            WHEN 'debate_rounds' THEN
                texts := json_build_array(NEW.id::text, NEW.session_id::text,
                    NEW.round_number::text, NEW.agent_persona::text, NEW.content::text,
                    NEW.tokens_used::text, NEW.superseded::text, NEW.metadata::text,
                    extract(epoch from NEW.created_at)::text);
            WHEN 'debate_round_decisions' THEN
                texts := json_build_array(NEW.session_id::text, NEW.round_index::text,
                    NEW.decision::text, NEW.signal_json::text,
                    extract(epoch from NEW.decided_at)::text);
            WHEN 'debate_round_judgments' THEN
                texts := json_build_array(NEW.id::text, NEW.session_id::text,
                    NEW.round_index::text, NEW.agent_persona::text, NEW.decision::text,
                    NEW.score::text, NEW.reasons::text, NEW.judge_model::text, NEW.pmids::text,
                    extract(epoch from NEW.created_at)::text);
            WHEN 'debate_operator_actions' THEN
                texts := json_build_array(NEW.session_id::text, NEW.round_index::text,
                    NEW.action::text, NEW.decision::text, NEW.persona::text,
                    NEW.operator::text, NEW.note::text, extract(epoch from NEW.created_at)::text,
                    NEW.operator_role::text);
            WHEN 'gavel_debate_notes' THEN
                texts := json_build_array(NEW.id::text, NEW.session_id::text,
                    NEW.operator::text, NEW.note::text, extract(epoch from NEW.created_at)::text,
                    NEW.operator_role::text);
            ELSE
                texts := NULL;
            END CASE;
        EXCEPTION WHEN OTHERS THEN
            texts := NULL;
        END;
        IF texts IS NOT NULL AND octet_length(payload) + octet_length(texts::text) < 7880 THEN
            payload := left(payload, -1) || ', "row" : ' || texts::text || '}';
        END IF;
    END IF;
    PERFORM pg_notify('gavel_events', payload);
    RETURN NULL;
END
$$;
