-- gavel's schema: the interop contract's five tables, created when missing and completed with
-- any missing column, then a change stamp and a notification trigger on each.
-- Safe where the orchestrator's tables and rows already exist: nothing here drops, rewrites or
-- updates a row. Added columns are nullable or have constant defaults (no table rewrite).

CREATE TABLE IF NOT EXISTS debate_sessions (
    id TEXT PRIMARY KEY,
    question TEXT,
    debate_type TEXT DEFAULT 'standard',
    status TEXT DEFAULT 'running',
    controller_mode TEXT DEFAULT 'shadow',
    num_rounds INT,
    min_rounds INT DEFAULT 2,
    max_rounds INT DEFAULT 8,
    token_budget BIGINT,
    tokens_used BIGINT DEFAULT 0,
    personas JSONB,
    metadata JSONB,
    created_at TIMESTAMPTZ DEFAULT now(),
    finished_at TIMESTAMPTZ
);
ALTER TABLE debate_sessions
    ADD COLUMN IF NOT EXISTS question TEXT,
    ADD COLUMN IF NOT EXISTS debate_type TEXT DEFAULT 'standard',
    ADD COLUMN IF NOT EXISTS status TEXT DEFAULT 'running',
    ADD COLUMN IF NOT EXISTS controller_mode TEXT DEFAULT 'shadow',
    ADD COLUMN IF NOT EXISTS num_rounds INT,
    ADD COLUMN IF NOT EXISTS min_rounds INT DEFAULT 2,
    ADD COLUMN IF NOT EXISTS max_rounds INT DEFAULT 8,
    ADD COLUMN IF NOT EXISTS token_budget BIGINT,
    ADD COLUMN IF NOT EXISTS tokens_used BIGINT DEFAULT 0,
    ADD COLUMN IF NOT EXISTS personas JSONB,
    ADD COLUMN IF NOT EXISTS metadata JSONB,
    ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ DEFAULT now(),
    ADD COLUMN IF NOT EXISTS finished_at TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS gavel_xid xid8;

CREATE TABLE IF NOT EXISTS debate_rounds (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT,
    round_number INT,
    agent_persona TEXT,
    content TEXT,
    tokens_used INT,
    superseded BOOLEAN DEFAULT false,
    metadata JSONB,
    created_at TIMESTAMPTZ DEFAULT now()
);
ALTER TABLE debate_rounds
    ADD COLUMN IF NOT EXISTS session_id TEXT,
    ADD COLUMN IF NOT EXISTS round_number INT,
    ADD COLUMN IF NOT EXISTS agent_persona TEXT,
    ADD COLUMN IF NOT EXISTS content TEXT,
    ADD COLUMN IF NOT EXISTS tokens_used INT,
    ADD COLUMN IF NOT EXISTS superseded BOOLEAN DEFAULT false,
    ADD COLUMN IF NOT EXISTS metadata JSONB,
    ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ DEFAULT now(),
    ADD COLUMN IF NOT EXISTS gavel_xid xid8;

CREATE TABLE IF NOT EXISTS debate_round_decisions (
    session_id TEXT,
    round_index INT,
    decision TEXT,
    signal_json JSONB,
    decided_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (session_id, round_index)
);
ALTER TABLE debate_round_decisions
    ADD COLUMN IF NOT EXISTS decision TEXT,
    ADD COLUMN IF NOT EXISTS signal_json JSONB,
    ADD COLUMN IF NOT EXISTS decided_at TIMESTAMPTZ DEFAULT now(),
    ADD COLUMN IF NOT EXISTS gavel_xid xid8;

CREATE TABLE IF NOT EXISTS debate_round_judgments (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT,
    round_index INT,
    agent_persona TEXT,
    decision TEXT,
    score REAL,
    reasons JSONB,
    judge_model TEXT,
    pmids JSONB,
    created_at TIMESTAMPTZ DEFAULT now()
);
ALTER TABLE debate_round_judgments
    ADD COLUMN IF NOT EXISTS session_id TEXT,
    ADD COLUMN IF NOT EXISTS round_index INT,
    ADD COLUMN IF NOT EXISTS agent_persona TEXT,
    ADD COLUMN IF NOT EXISTS decision TEXT,
    ADD COLUMN IF NOT EXISTS score REAL,
    ADD COLUMN IF NOT EXISTS reasons JSONB,
    ADD COLUMN IF NOT EXISTS judge_model TEXT,
    ADD COLUMN IF NOT EXISTS pmids JSONB,
    ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ DEFAULT now(),
    ADD COLUMN IF NOT EXISTS gavel_xid xid8;

CREATE TABLE IF NOT EXISTS debate_operator_actions (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL,
    round_index INT NOT NULL,
    action TEXT NOT NULL,
    decision TEXT,
    persona TEXT,
    operator TEXT NOT NULL,
    note TEXT,
    created_at TIMESTAMPTZ DEFAULT now()
);
ALTER TABLE debate_operator_actions
    ADD COLUMN IF NOT EXISTS decision TEXT,
    ADD COLUMN IF NOT EXISTS persona TEXT,
    ADD COLUMN IF NOT EXISTS note TEXT,
    ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ DEFAULT now(),
    ADD COLUMN IF NOT EXISTS gavel_xid xid8;
-- A decision is resolved once: the losing insert of a race does nothing.
CREATE UNIQUE INDEX IF NOT EXISTS debate_operator_actions_once
    ON debate_operator_actions (session_id, round_index);

-- Reads gavel makes: recent sessions, one debate's rows, and what changed since a watermark.
CREATE INDEX IF NOT EXISTS debate_sessions_created_at ON debate_sessions (created_at);
CREATE INDEX IF NOT EXISTS debate_rounds_session ON debate_rounds (session_id, round_number);
CREATE INDEX IF NOT EXISTS debate_round_decisions_session ON debate_round_decisions (session_id);
CREATE INDEX IF NOT EXISTS debate_round_judgments_session ON debate_round_judgments (session_id);
CREATE INDEX IF NOT EXISTS debate_sessions_gavel_xid ON debate_sessions (gavel_xid);
CREATE INDEX IF NOT EXISTS debate_rounds_gavel_xid ON debate_rounds (gavel_xid);
CREATE INDEX IF NOT EXISTS debate_round_decisions_gavel_xid ON debate_round_decisions (gavel_xid);
CREATE INDEX IF NOT EXISTS debate_round_judgments_gavel_xid ON debate_round_judgments (gavel_xid);
CREATE INDEX IF NOT EXISTS debate_operator_actions_gavel_xid ON debate_operator_actions (gavel_xid);

-- Every insert or update records the writing transaction: a reconnecting listener loads the
-- rows of every transaction at or after the oldest one still running when it last synced.
CREATE OR REPLACE FUNCTION gavel_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.gavel_xid := pg_current_xact_id();
    RETURN NEW;
END
$$;

-- After every insert or update, one notification on channel gavel_events naming the row:
-- {"table": "...", "session_id": "...", "id": 1} or {"table": "...", "session_id": "...",
-- "round_index": 3}. When a key is too long for a payload: {"table": "...", "resync": true}.
CREATE OR REPLACE FUNCTION gavel_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    payload text;
BEGIN
    IF TG_TABLE_NAME = 'debate_sessions' THEN
        payload := json_build_object('table', TG_TABLE_NAME, 'session_id', NEW.id)::text;
    ELSIF TG_TABLE_NAME IN ('debate_rounds', 'debate_round_judgments') THEN
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

CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON debate_sessions
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();
CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON debate_rounds
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();
CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON debate_round_decisions
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();
CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON debate_round_judgments
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();
CREATE OR REPLACE TRIGGER gavel_stamp BEFORE INSERT OR UPDATE ON debate_operator_actions
    FOR EACH ROW EXECUTE FUNCTION gavel_stamp();

CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT OR UPDATE ON debate_sessions
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT OR UPDATE ON debate_rounds
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT OR UPDATE ON debate_round_decisions
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT OR UPDATE ON debate_round_judgments
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
CREATE OR REPLACE TRIGGER gavel_notify AFTER INSERT OR UPDATE ON debate_operator_actions
    FOR EACH ROW EXECUTE FUNCTION gavel_notify();
