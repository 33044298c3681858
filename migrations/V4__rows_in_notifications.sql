-- Rows in notifications: an explicit opt-in, off by default.
-- * gavel_notify_rows(): whether this session's writes carry their rows in their notifications:
--   the setting gavel.notify_rows is 'on' (or 'true'). A DBA turns it on for the database with
--   ALTER DATABASE <db> SET gavel.notify_rows = on (connections opened afterwards see it; a
--   console carries rows only when its own connection sees it on, so set it on the database).
--   WARNING: LISTEN needs no privilege. While it is on, any role that can connect to the
--   database reads the content of every row written, whatever it may SELECT; and any such role
--   can send a payload with a row of its making, which consoles show until the row is read again.
-- * gavel_notify(): as V3's, and while gavel_notify_rows() holds, the payload also carries the
--   row, "row": [the texts of the columns gavel's reads select, in their order, NULL as null]:
--   {"table": "debate_rounds", "session_id": "s1", "id": 7, "row": ["7", "s1", "1", ...]}.
--   A payload that would pass 7900 bytes names the row only, as before, and it is read; a row
--   that cannot be turned into texts is named only too, so a write never fails for it.
-- Idempotent like V1 to V3.

CREATE OR REPLACE FUNCTION gavel_notify_rows() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('gavel.notify_rows', true), '') IN ('on', 'true')
$$;

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
                    extract(epoch from NEW.finished_at)::text);
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
