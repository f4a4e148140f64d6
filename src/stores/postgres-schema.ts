/*
 * The PostgreSQL side of the atomic engine (docs/operations.md#several-instances): the records table unstorage's db0
 * driver uses (created here too, with the driver's own columns, so that the engine works before the driver's first
 * call), and the functions that make each counter, hold and claim operation one statement, atomic across every
 * connection. Values stay the JSON text the driver stores, in the formats of the in-process engine (a decimal counter
 * `{"units":"<ledger units>","window":<ms>}`, an integer counter `{"count":n,"expires":<ms>}`, holds
 * `{"<id>":{"units":"…","expires":<ms>}}`), so `getItem` reads the same records on every engine.
 *
 * Versioned: `model_gateway_schema` keeps the version each records table was set up at; a gateway that finds an
 * older one runs the newer steps (CREATE OR REPLACE: safe to run twice), under a session advisory lock so that
 * instances starting together do it once.
 */

/** The schema version this code needs. Bump it and append a step to POSTGRES_STEPS when a function changes. */
export const POSTGRES_SCHEMA_VERSION = 3

/** The records table, as unstorage's db0 driver creates it for PostgreSQL. */
export const recordsTableSql = (table: string) => `CREATE TABLE IF NOT EXISTS "${table}" (
  key VARCHAR(255) NOT NULL PRIMARY KEY,
  value TEXT,
  blob BYTEA,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
)`

/** Where each records table's schema version is kept. */
export const SCHEMA_TABLE_SQL = `CREATE TABLE IF NOT EXISTS model_gateway_schema (
  records_table TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
)`

// Version 1: the functions. Every one takes the records table's name (they serve any table) and locks what it
// changes with a transaction-scoped advisory lock on the table and key, so two connections never interleave on a key.
const V1 = [
  // A key's lock for the rest of the transaction (a hash collision only serialises two keys more than needed).
  `CREATE OR REPLACE FUNCTION mg_lock(tbl TEXT, k TEXT) RETURNS VOID LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(hashtextextended(tbl || E'\\n' || k, 0))
  $$`,
  // A record's JSON, or NULL.
  `CREATE OR REPLACE FUNCTION mg_get(tbl TEXT, k TEXT) RETURNS JSONB LANGUAGE plpgsql AS $$
  DECLARE v JSONB;
  BEGIN
    EXECUTE format('SELECT value::jsonb FROM %I WHERE key = $1', tbl) INTO v USING k;
    RETURN v;
  END $$`,
  // Writes a record's JSON (NULL deletes it).
  `CREATE OR REPLACE FUNCTION mg_put(tbl TEXT, k TEXT, v JSONB) RETURNS VOID LANGUAGE plpgsql AS $$
  BEGIN
    IF v IS NULL THEN
      EXECUTE format('DELETE FROM %I WHERE key = $1', tbl) USING k;
    ELSE
      EXECUTE format('INSERT INTO %I (key, value, created_at, updated_at) VALUES ($1, $2, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = CURRENT_TIMESTAMP', tbl) USING k, v::text;
    END IF;
  END $$`,
  // A decimal counter's units; with a window start, 0 when it counted an earlier window.
  `CREATE OR REPLACE FUNCTION mg_units(tbl TEXT, k TEXT, window_start BIGINT) RETURNS NUMERIC LANGUAGE plpgsql AS $$
  DECLARE v JSONB := mg_get(tbl, k);
  BEGIN
    IF v IS NULL THEN RETURN 0; END IF;
    IF window_start IS NOT NULL AND (v->>'window' IS NULL OR (v->>'window')::BIGINT < window_start) THEN RETURN 0; END IF;
    RETURN COALESCE((v->>'units')::NUMERIC, 0);
  END $$`,
  // Adds to a decimal counter (windowed when window_start is given), under its lock; returns the new units.
  `CREATE OR REPLACE FUNCTION mg_add_units(tbl TEXT, k TEXT, delta NUMERIC, window_start BIGINT) RETURNS NUMERIC LANGUAGE plpgsql AS $$
  DECLARE v JSONB; total NUMERIC; start BIGINT;
  BEGIN
    PERFORM mg_lock(tbl, k);
    v := mg_get(tbl, k);
    IF window_start IS NULL THEN
      total := COALESCE((v->>'units')::NUMERIC, 0) + delta;
      PERFORM mg_put(tbl, k, jsonb_build_object('units', total::TEXT));
    ELSE
      start := GREATEST(COALESCE((v->>'window')::BIGINT, window_start), window_start);
      total := mg_units(tbl, k, window_start) + delta;
      PERFORM mg_put(tbl, k, jsonb_build_object('units', total::TEXT, 'window', start));
    END IF;
    RETURN total;
  END $$`,
  // Adds to several decimal counters in one transaction, locking them in key order (no two callers deadlock).
  `CREATE OR REPLACE FUNCTION mg_add_units_many(tbl TEXT, changes JSONB) RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE c RECORD;
  BEGIN
    FOR c IN SELECT e->>'key' AS k, SUM((e->>'delta')::NUMERIC) AS delta FROM jsonb_array_elements(changes) e GROUP BY 1 ORDER BY 1 LOOP
      PERFORM mg_add_units(tbl, c.k, c.delta, NULL);
    END LOOP;
  END $$`,
  // Adds to an integer counter that expires ttl_ms after it starts (by 0 reads it); returns the count.
  `CREATE OR REPLACE FUNCTION mg_increment(tbl TEXT, k TEXT, by_n BIGINT, ttl_ms BIGINT, now_ms BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
  DECLARE v JSONB; live BOOLEAN; n BIGINT; expires BIGINT;
  BEGIN
    PERFORM mg_lock(tbl, k);
    v := mg_get(tbl, k);
    live := v IS NOT NULL AND (v->>'expires' IS NULL OR (v->>'expires')::BIGINT > now_ms);
    n := (CASE WHEN live THEN COALESCE((v->>'count')::BIGINT, 0) ELSE 0 END) + by_n;
    IF by_n = 0 THEN RETURN n; END IF;
    expires := CASE WHEN live AND v->>'expires' IS NOT NULL THEN (v->>'expires')::BIGINT WHEN ttl_ms > 0 THEN now_ms + ttl_ms ELSE NULL END;
    PERFORM mg_put(tbl, k, CASE WHEN expires IS NULL THEN jsonb_build_object('count', n) ELSE jsonb_build_object('count', n, 'expires', expires) END);
    RETURN n;
  END $$`,
  // Writes the claim if absent and, in the same transaction, adds to the counter; false when already claimed.
  `CREATE OR REPLACE FUNCTION mg_claim_and_add_units(tbl TEXT, claim_key TEXT, claim JSONB, counter_key TEXT, delta NUMERIC) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM mg_lock(tbl, claim_key);
    IF mg_get(tbl, claim_key) IS NOT NULL THEN RETURN FALSE; END IF;
    PERFORM mg_put(tbl, claim_key, claim);
    PERFORM mg_add_units(tbl, counter_key, delta, NULL);
    RETURN TRUE;
  END $$`,
  // Places a hold on every budget if each one's ceiling - spent - live holds covers it (docs/money.md), else none;
  // expired holds are dropped on the way. Under the first budget's lock, as the in-process engine does.
  `CREATE OR REPLACE FUNCTION mg_place_hold(tbl TEXT, hold_id TEXT, hold_units NUMERIC, expires_at BIGINT, now_ms BIGINT, budgets JSONB)
  RETURNS JSONB LANGUAGE plpgsql AS $$
  DECLARE b JSONB; i INT := 0; rec JSONB; recs JSONB[] := '{}'; hid TEXT; h JSONB; held NUMERIC; ceiling NUMERIC; spent NUMERIC;
    need NUMERIC; pruned BOOLEAN; k TEXT; window_start BIGINT;
  BEGIN
    PERFORM mg_lock(tbl, budgets->0->>'holdsKey');
    FOR b IN SELECT e FROM jsonb_array_elements(budgets) e LOOP
      rec := COALESCE(mg_get(tbl, b->>'holdsKey'), '{}'::JSONB);
      held := 0;
      pruned := FALSE;
      FOR hid, h IN SELECT key, value FROM jsonb_each(rec) LOOP
        IF (h->>'expires')::BIGINT <= now_ms THEN
          rec := rec - hid;
          pruned := TRUE;
        ELSE
          held := held + (h->>'units')::NUMERIC;
        END IF;
      END LOOP;
      ceiling := CASE WHEN b->>'limitKey' IS NOT NULL THEN mg_units(tbl, b->>'limitKey', NULL) ELSE (b->>'limitUnits')::NUMERIC END;
      window_start := (b->>'usedWindow')::BIGINT;
      spent := mg_units(tbl, b->>'usedKey', window_start);
      FOR k IN SELECT jsonb_array_elements_text(COALESCE(b->'alsoUsed', '[]'::JSONB)) LOOP
        spent := spent + mg_units(tbl, k, window_start);
      END LOOP;
      need := COALESCE((b->>'units')::NUMERIC, hold_units);
      IF ceiling - spent - held < need THEN
        IF pruned THEN PERFORM mg_put(tbl, b->>'holdsKey', CASE WHEN rec = '{}'::JSONB THEN NULL ELSE rec END); END IF;
        RETURN jsonb_build_object('ok', FALSE, 'index', i, 'available', (ceiling - spent - held)::TEXT);
      END IF;
      recs := recs || rec;
      i := i + 1;
    END LOOP;
    i := 0;
    FOR b IN SELECT e FROM jsonb_array_elements(budgets) e LOOP
      i := i + 1;
      need := COALESCE((b->>'units')::NUMERIC, hold_units);
      PERFORM mg_put(tbl, b->>'holdsKey', recs[i] || jsonb_build_object(hold_id, jsonb_build_object('units', need::TEXT, 'expires', expires_at)));
    END LOOP;
    RETURN jsonb_build_object('ok', TRUE);
  END $$`,
  // Removes a hold from every budget, adds each budget's charge and each counter, and writes the records (the ledger
  // entry, the usage record and its pointer: [{key, value}]), in one transaction under the first budget's lock.
  `CREATE OR REPLACE FUNCTION mg_settle_hold(tbl TEXT, hold_id TEXT, budgets JSONB, charges JSONB, counters JSONB, records JSONB)
  RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE b JSONB; i INT := 0; rec JSONB; c JSONB; r JSONB;
  BEGIN
    PERFORM mg_lock(tbl, budgets->0->>'holdsKey');
    FOR b IN SELECT e FROM jsonb_array_elements(budgets) e LOOP
      rec := mg_get(tbl, b->>'holdsKey');
      IF rec IS NOT NULL AND (rec -> hold_id) IS NOT NULL THEN
        rec := rec - hold_id;
        PERFORM mg_put(tbl, b->>'holdsKey', CASE WHEN rec = '{}'::JSONB THEN NULL ELSE rec END);
      END IF;
      IF (charges->>i)::NUMERIC <> 0 THEN PERFORM mg_add_units(tbl, b->>'usedKey', (charges->>i)::NUMERIC, NULL); END IF;
      i := i + 1;
    END LOOP;
    FOR c IN SELECT e FROM jsonb_array_elements(counters) e LOOP
      IF (c->>'units')::NUMERIC <> 0 THEN PERFORM mg_add_units(tbl, c->>'key', (c->>'units')::NUMERIC, (c->>'windowStart')::BIGINT); END IF;
    END LOOP;
    FOR r IN SELECT e FROM jsonb_array_elements(records) e LOOP
      PERFORM mg_put(tbl, r->>'key', r->'value');
    END LOOP;
  END $$`,
]

// Version 2: a running request renews its hold (docs/money.md#holds-a-request-reserves-its-maximum-cost-first): a hold
// still live at now_ms on a budget gets the new expiry; returns how many budgets' holds were renewed.
const V2 = [
  `CREATE OR REPLACE FUNCTION mg_renew_hold(tbl TEXT, hold_id TEXT, expires_at BIGINT, now_ms BIGINT, holds_keys JSONB)
  RETURNS INT LANGUAGE plpgsql AS $$
  DECLARE k TEXT; rec JSONB; renewed INT := 0;
  BEGIN
    PERFORM mg_lock(tbl, holds_keys->>0);
    FOR k IN SELECT jsonb_array_elements_text(holds_keys) LOOP
      rec := mg_get(tbl, k);
      IF rec IS NOT NULL AND (rec -> hold_id) IS NOT NULL AND (rec -> hold_id ->> 'expires')::BIGINT > now_ms THEN
        PERFORM mg_put(tbl, k, jsonb_set(rec, ARRAY[hold_id, 'expires'], to_jsonb(expires_at)));
        renewed := renewed + 1;
      END IF;
    END LOOP;
    RETURN renewed;
  END $$`,
]

// Version 3: each hold operation may run twice (a statement retried after its connection dropped, a settlement tried
// again: docs/operations.md#when-the-storage-fails) and changes things once: a hold already placed is answered placed;
// a settlement whose once record exists is not run again.
const V3 = [
  `CREATE OR REPLACE FUNCTION mg_place_hold_once(tbl TEXT, hold_id TEXT, hold_units NUMERIC, expires_at BIGINT, now_ms BIGINT, budgets JSONB)
  RETURNS JSONB LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM mg_lock(tbl, budgets->0->>'holdsKey');
    IF (mg_get(tbl, budgets->0->>'holdsKey') -> hold_id) IS NOT NULL THEN RETURN jsonb_build_object('ok', TRUE); END IF;
    RETURN mg_place_hold(tbl, hold_id, hold_units, expires_at, now_ms, budgets);
  END $$`,
  `CREATE OR REPLACE FUNCTION mg_settle_hold_once(tbl TEXT, hold_id TEXT, budgets JSONB, charges JSONB, counters JSONB, records JSONB, once_key TEXT)
  RETURNS VOID LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM mg_lock(tbl, budgets->0->>'holdsKey');
    IF once_key IS NOT NULL AND mg_get(tbl, once_key) IS NOT NULL THEN RETURN; END IF;
    PERFORM mg_settle_hold(tbl, hold_id, budgets, charges, counters, records);
  END $$`,
]

/** The steps from version n-1 to n, in order: POSTGRES_STEPS[n - 1]. */
export const POSTGRES_STEPS: readonly (readonly string[])[] = [V1, V2, V3]
