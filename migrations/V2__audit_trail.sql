-- The operator actions as an audit trail that cannot be rewritten.
-- * operator_role: the database role that wrote the row (session_user), stamped by a trigger
--   (ENABLE ALWAYS: also with session_replication_role = replica) so that no client can forge
--   it; `operator` stays the display name the client chose. An
--   orchestrator that inserts actions without naming the column gets it stamped all the same.
-- * gavel_append_only, gavel_append_only_truncate: UPDATE, DELETE and TRUNCATE are refused for
--   every role, the owner included (ENABLE ALWAYS: also with session_replication_role = replica).
--   The deliberate way out, for the table's owner or a superuser, in one transaction:
--     BEGIN;
--     ALTER TABLE debate_operator_actions DISABLE TRIGGER gavel_append_only;
--     -- the correction
--     ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_append_only;
--     COMMIT;
-- The trigger functions run with search_path = pg_catalog, pg_temp: no schema a writer can
-- create objects in is searched.
-- Idempotent like V1: nothing here drops or rewrites a row.

ALTER TABLE debate_operator_actions ADD COLUMN IF NOT EXISTS operator_role TEXT;

CREATE OR REPLACE FUNCTION gavel_operator_role() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.operator_role := session_user;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER gavel_operator_role BEFORE INSERT ON debate_operator_actions
    FOR EACH ROW EXECUTE FUNCTION gavel_operator_role();

CREATE OR REPLACE FUNCTION gavel_append_only() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'debate_operator_actions is an append-only audit trail: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = format('To correct it deliberately, the owner or a superuser runs, in one '
                            'transaction: ALTER TABLE debate_operator_actions DISABLE TRIGGER %1$s; '
                            'the correction; ALTER TABLE debate_operator_actions ENABLE ALWAYS '
                            'TRIGGER %1$s;', TG_NAME);
END
$$;

CREATE OR REPLACE TRIGGER gavel_append_only BEFORE UPDATE OR DELETE ON debate_operator_actions
    FOR EACH ROW EXECUTE FUNCTION gavel_append_only();
CREATE OR REPLACE TRIGGER gavel_append_only_truncate BEFORE TRUNCATE ON debate_operator_actions
    FOR EACH STATEMENT EXECUTE FUNCTION gavel_append_only();
ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_operator_role;
ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_append_only;
ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_append_only_truncate;
