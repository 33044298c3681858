-- Notes that hand a debate over: gavel's own table, append-only like the audit trail.
-- * gavel_debate_notes: one row per note an operator pinned to a debate, without an action.
--   `note` is bounded (1..=500 characters) by the table itself, whoever writes it.
-- * operator_role: the database role that wrote the row (session_user), stamped by the same
--   trigger as the operator actions' (V2), so that no client can forge it.
-- * UPDATE, DELETE and TRUNCATE are refused for every role by the same triggers as the
--   operator actions' (V2); gavel_append_only now names the table it guards. The deliberate way
--   out is V2's, with this table's name.
-- * Every insert is stamped (gavel_xid) and notified on gavel_events like a contract row
--   ({"table": "gavel_debate_notes", "session_id": "...", "id": 1}).
-- Idempotent like V1 and V2.

CREATE TABLE IF NOT EXISTS gavel_debate_notes (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL,
    operator TEXT NOT NULL,
    note TEXT NOT NULL CHECK (char_length(note) BETWEEN 1 AND 500),
    operator_role TEXT,
    created_at TIMESTAMPTZ DEFAULT now(),
    gavel_xid xid8
);
CREATE INDEX IF NOT EXISTS gavel_debate_notes_session ON gavel_debate_notes (session_id, id);
CREATE INDEX IF NOT EXISTS gavel_debate_notes_gavel_xid ON gavel_debate_notes (gavel_xid);

CREATE OR REPLACE FUNCTION gavel_append_only() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION '% is an append-only audit trail: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = format('To correct it deliberately, the owner or a superuser runs, in one '
                            'transaction: ALTER TABLE %1$s DISABLE TRIGGER %2$s; '
                            'the correction; ALTER TABLE %1$s ENABLE ALWAYS '
                            'TRIGGER %2$s;', TG_TABLE_NAME, TG_NAME);
END
$$;

CREATE OR REPLACE FUNCTION gavel_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    payload text;
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
    END IF;
    PERFORM pg_notify('gavel_events', payload);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER gavel_operator_role BEFORE INSERT ON gavel_debate_notes
    FOR EACH ROW EXECUTE FUNCTION gavel_operator_role();
CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON gavel_debate_notes
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();
CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT ON gavel_debate_notes
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
CREATE OR REPLACE TRIGGER gavel_append_only BEFORE UPDATE OR DELETE ON gavel_debate_notes
    FOR EACH ROW EXECUTE FUNCTION gavel_append_only();
CREATE OR REPLACE TRIGGER gavel_append_only_truncate BEFORE TRUNCATE ON gavel_debate_notes
    FOR EACH STATEMENT EXECUTE FUNCTION gavel_append_only();
ALTER TABLE gavel_debate_notes ENABLE ALWAYS TRIGGER gavel_operator_role;
ALTER TABLE gavel_debate_notes ENABLE ALWAYS TRIGGER gavel_append_only;
ALTER TABLE gavel_debate_notes ENABLE ALWAYS TRIGGER gavel_append_only_truncate;
