-- Consoles off the primary: orchestrators write the primary, consoles read subscribers fed by
-- PostgreSQL's own logical replication (issue 48); and the gated wait's length in the database.
-- * The publication `gavel`: every table a console reads (the contract's five, the notes, the
--   controller settings' history, presence). `gavel migrate --db SUBSCRIBER --subscribe-to
--   PRIMARY` migrates the subscriber the same way and subscribes it to this publication.
--   A published table without a primary key gets REPLICA IDENTITY FULL (an orchestrator's
--   table may have none): without an identity, PostgreSQL would refuse its UPDATEs once it is
--   published.
-- * Every gavel function is pinned to pg_catalog and the schema gavel is migrated into: a
--   subscription's apply worker runs with an empty search_path, and gavel_notify calls
--   gavel_notify_rows, which it would not find (the worker fails on the first row and retries
--   forever: replication stalls).
-- * Applied rows fire only triggers marked ENABLE ALWAYS (or REPLICA): the stamp (gavel_xid is
--   the transaction of the server the row is read on, so a console's catch-up works on the
--   subscriber's own transactions) and the notifications (gavel_events, gavel_settings,
--   gavel_presence) are ENABLE ALWAYS on every table, so a row applied on a subscriber is
--   stamped and notified there. The controller settings' history gains the stamp trigger of
--   its own (gavel_settings_version stamps it on the primary; on a subscriber that trigger
--   does not fire, see below).
--   What must keep the primary's word on a subscriber does not fire there: `gavel migrate`
--   sets gavel_operator_role, gavel_append_only(_truncate) and gavel_settings_version to fire
--   for local writes only (ENABLE, not ALWAYS) on a database that subscribes to gavel, so the
--   role stamped on the primary, a version's number and state, and a deliberate correction
--   made on the primary are applied as they are (docs/live.md).
-- * gavel_presence: one row per console that is (or was recently) here, written on the primary
--   and replicated, so that consoles on different servers hear each other:
--     console   its key, drawn on its first insert
--     status    what it says (JSON, untrusted; at most 1024 bytes)
--     role      session_user of the writer: stamped, never given
--     since     its first insert: stamped
--     said_at   now() of its latest insert or update: stamped
--   gavel_presence_stamp (local writes only: a subscriber keeps the primary's stamps) stamps
--   them; a row is its role's own: another role may neither update it nor delete it while it
--   is fresh (said within a minute). An insert first deletes the rows silent for a minute (a
--   killed console's), and is refused while 1024 rows remain. gavel_presence_notify (ENABLE
--   ALWAYS) names the row on channel gavel_presence: its key in decimal, nothing else.
-- * debate_sessions.gated_timeout_secs: how long a gated decision of the debate waits for an
--   operator before the controller's decision stands (default 90 seconds: a DBA changes it for
--   new debates with ALTER TABLE debate_sessions ALTER COLUMN gated_timeout_secs SET DEFAULT
--   ...; an orchestrator may write its own per debate). The orchestrator waits that long;
--   consoles count it down. Carried in a session's row in notifications (V4).
-- Idempotent like V1 to V5: nothing here drops or rewrites a row.

ALTER TABLE debate_sessions ADD COLUMN IF NOT EXISTS gated_timeout_secs DOUBLE PRECISION DEFAULT 90;

CREATE TABLE IF NOT EXISTS gavel_presence (
    console BIGSERIAL PRIMARY KEY,
    status TEXT NOT NULL CHECK (octet_length(status) <= 1024),
    role TEXT,
    since TIMESTAMPTZ,
    said_at TIMESTAMPTZ
);

CREATE OR REPLACE FUNCTION gavel_presence_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        DELETE FROM gavel_presence WHERE said_at < now() - interval '1 minute';
        IF (SELECT count(*) FROM gavel_presence) >= 1024 THEN
            RAISE EXCEPTION 'gavel_presence holds 1024 consoles already'
                USING ERRCODE = 'program_limit_exceeded';
        END IF;
        NEW.role := session_user;
        NEW.since := now();
        NEW.said_at := now();
        RETURN NEW;
    END IF;
    IF OLD.role IS DISTINCT FROM session_user::text
        AND (TG_OP = 'UPDATE' OR OLD.said_at >= now() - interval '1 minute') THEN
        RAISE EXCEPTION 'presence row % is role %''s', OLD.console, OLD.role
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    NEW.console := OLD.console;
    NEW.role := OLD.role;
    NEW.since := OLD.since;
    NEW.said_at := now();
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION gavel_presence_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gavel_presence',
        (CASE WHEN TG_OP = 'DELETE' THEN OLD.console ELSE NEW.console END)::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER gavel_presence_stamp BEFORE INSERT OR UPDATE OR DELETE ON gavel_presence
    FOR EACH ROW EXECUTE FUNCTION gavel_presence_stamp();
CREATE OR REPLACE TRIGGER gavel_presence_notify AFTER INSERT OR UPDATE OR DELETE ON gavel_presence
    FOR EACH ROW EXECUTE FUNCTION gavel_presence_notify();
ALTER TABLE gavel_presence ENABLE ALWAYS TRIGGER gavel_presence_notify;

-- As V5's, with the session's gated_timeout_secs carried in its row.
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
                    NEW.settings_arm::text, NEW.gated_timeout_secs::text);
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

CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON gavel_controller_settings
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();

DO $$
DECLARE
    schema text := current_schema();
    fn text;
    published text[] := ARRAY['debate_sessions', 'debate_rounds', 'debate_round_decisions',
        'debate_round_judgments', 'debate_operator_actions', 'gavel_debate_notes',
        'gavel_controller_settings', 'gavel_presence'];
    stamped_and_notified text[] := ARRAY['debate_sessions', 'debate_rounds',
        'debate_round_decisions', 'debate_round_judgments', 'debate_operator_actions',
        'gavel_debate_notes'];
    missing text;
    t text;
BEGIN
    -- Every gavel function, whatever the caller's search_path (none, in an apply worker).
    FOREACH fn IN ARRAY ARRAY['gavel_stamp()', 'gavel_notify()', 'gavel_notify_rows()',
        'gavel_operator_role()', 'gavel_append_only()', 'gavel_settings_bucket(text)',
        'gavel_settings_version()', 'gavel_settings_notify()', 'gavel_settings_for(text, text)',
        'gavel_presence_stamp()', 'gavel_presence_notify()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', fn, schema);
    END LOOP;
    FOREACH t IN ARRAY stamped_and_notified LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ALWAYS TRIGGER gavel_stamp', t);
        EXECUTE format('ALTER TABLE %I ENABLE ALWAYS TRIGGER gavel_notify', t);
    END LOOP;
    ALTER TABLE gavel_controller_settings ENABLE ALWAYS TRIGGER gavel_stamp;
    -- A published table needs a replica identity for its updates and deletes.
    FOREACH t IN ARRAY published LOOP
        IF NOT EXISTS (SELECT FROM pg_index WHERE indrelid = format('%I', t)::regclass
                       AND (indisprimary OR indisreplident))
           AND (SELECT relreplident FROM pg_class WHERE oid = format('%I', t)::regclass) = 'd' THEN
            EXECUTE format('ALTER TABLE %I REPLICA IDENTITY FULL', t);
        END IF;
    END LOOP;
    IF NOT EXISTS (SELECT FROM pg_publication WHERE pubname = 'gavel') THEN
        EXECUTE 'CREATE PUBLICATION gavel FOR TABLE '
            || (SELECT string_agg(format('%I', name), ', ') FROM unnest(published) AS name);
    ELSE
        -- Created by hand before: completed with the tables it lacks.
        SELECT string_agg(format('%I', name), ', ') INTO missing FROM unnest(published) AS name
            WHERE NOT EXISTS (SELECT FROM pg_publication_tables p WHERE p.pubname = 'gavel'
                              AND p.schemaname = schema AND p.tablename = name);
        IF missing IS NOT NULL THEN
            EXECUTE 'ALTER PUBLICATION gavel ADD TABLE ' || missing;
        END IF;
    END IF;
END
$$;
