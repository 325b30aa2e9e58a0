--
-- Privileges of bloomidx_estimate and bloomidx_merge, as core commands
-- check them: SELECT on the table (or the columns) to see an estimate
-- built from its statistics, ownership of the table to merge.  The order
-- of the check and the lock is tested by specs/privileges_lock.spec.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
DROP ROLE IF EXISTS regress_bx_reader;
DROP ROLE IF EXISTS regress_bx_stranger;
RESET client_min_messages;
\set VERBOSITY terse

CREATE ROLE regress_bx_reader;
CREATE ROLE regress_bx_stranger;

-- a: one row per value; b: 100 rows per value; c: 10 values, one of them
-- in 90% of the rows (a frequent value that raises the false positives)
CREATE TABLE tpriv (a int, b int, c int, secret int);
INSERT INTO tpriv
SELECT i, i % 100, CASE WHEN i % 10 = 0 THEN i % 100 ELSE 7 END, i
FROM generate_series(1, 10000) i;
CREATE INDEX tpriv_bx ON tpriv USING bloomidx (a, b, c) WITH (layout = 'row', length = 64, col1 = 4, col2 = 4, col3 = 4);
CREATE INDEX tpriv_sliced ON tpriv USING bloomidx (a) WITH (layout = sliced);
ANALYZE tpriv;
GRANT SELECT (a) ON tpriv TO regress_bx_reader;

-- The owner sees everything
SELECT round(true_rows::numeric) AS true_rows,
	round(candidate_rows::numeric, -1) AS candidates
FROM bloomidx_estimate('tpriv_bx', '{b}');
CREATE TEMP TABLE owner_estimate AS
SELECT * FROM bloomidx_estimate('tpriv_bx', '{a}');
GRANT SELECT ON owner_estimate TO PUBLIC;

-- No privilege on the table: refused, whatever the columns
SET ROLE regress_bx_stranger;
SELECT * FROM bloomidx_estimate('tpriv_bx', '{a}');
SELECT * FROM bloomidx_estimate('tpriv_bx', '{b}');
SELECT * FROM bloomidx_merge('tpriv_sliced');
RESET ROLE;

-- SELECT on column a only: an estimate on a, none on b
SET ROLE regress_bx_reader;
SELECT * FROM bloomidx_estimate('tpriv_bx', '{b}');
SELECT * FROM bloomidx_estimate('tpriv_bx', '{a, b}');
-- On a, the true rows come from a's statistics, which pg_stats shows this
-- role; c's frequent value is hidden (pg_stats hides c's row), so the
-- false positives are not the owner's, who knows it
SELECT attname FROM pg_stats WHERE tablename = 'tpriv' ORDER BY attname;
SELECT round(e.true_rows::numeric) AS true_rows,
	e.false_positive_rows <> o.false_positive_rows AS other_false_positives,
	e.fill = o.fill AS same_fill
FROM bloomidx_estimate('tpriv_bx', '{a}') e, owner_estimate o;
-- Reading is not owning: no merge
SELECT * FROM bloomidx_merge('tpriv_sliced');
RESET ROLE;

-- Granted the table: the owner's estimate
GRANT SELECT ON tpriv TO regress_bx_reader;
SET ROLE regress_bx_reader;
SELECT e.false_positive_rows = o.false_positive_rows AS same_false_positives,
	e.true_rows = o.true_rows AS same_true_rows
FROM bloomidx_estimate('tpriv_bx', '{a}') e, owner_estimate o;
SELECT * FROM bloomidx_merge('tpriv_sliced');
RESET ROLE;

-- Ownership of the table allows the merge
ALTER TABLE tpriv OWNER TO regress_bx_reader;
SET ROLE regress_bx_reader;
SELECT bloomidx_merge('tpriv_sliced');
RESET ROLE;

-- Errors that need no privilege come as before
SET ROLE regress_bx_stranger;
SELECT * FROM bloomidx_estimate('tpriv', '{a}');
SELECT * FROM bloomidx_merge('tpriv');
SELECT * FROM bloomidx_merge(0);
RESET ROLE;

DROP TABLE tpriv;
DROP ROLE regress_bx_reader;
DROP ROLE regress_bx_stranger;
