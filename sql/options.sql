--
-- Index options: contrib/bloom's names (length, col1 ... col32) and
-- false_positive_rate, the shapes derived from them, and every error.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE o AS
	SELECT i AS c1, i % 7 AS c2, i % 11 AS c3, i % 13 AS c4, i % 17 AS c5, i % 19 AS c6
	FROM generate_series(1, 10000) i;

-- Pages of an index over the six columns built with the given options (and
-- layout, if given): the page count follows from the signature length the
-- options resolve to.
CREATE FUNCTION o_pages(opts text, layout text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	w text := concat_ws(', ', nullif(opts, ''), 'layout = ' || quote_literal(layout));
BEGIN
	EXECUTE 'CREATE INDEX o_idx ON o USING bloomidx (c1, c2, c3, c4, c5, c6)' ||
		CASE WHEN w = '' THEN '' ELSE ' WITH (' || w || ')' END;
	n := pg_relation_size('o_idx') / current_setting('block_size')::int;
	DROP INDEX o_idx;
	RETURN n;
END;
$$;

-- 10000 rows, fewer than a stripe: both layouts keep them in row-format
-- pages, of which one holds 8160 / (signature bytes + 6) rows; the sliced
-- layout's, with summaries (format 4, the default), 4 bytes a column more
-- for the rows' keys.  The shapes in the comments are the row layout's;
-- the sliced layout (the default) does not round signatures up to whole
-- words, sets fewer bits a column (40% of the bits set) and defaults to
-- 0.035%: 9 bits a column, 104-bit signature.
SELECT opts, o_pages(opts, 'row') AS row_pages, o_pages(opts) AS default_pages
FROM (VALUES
	(''),									-- 1%: 7 bits a column, 64-bit signature
	('false_positive_rate = 0.01'),		-- the same, explicitly
	('false_positive_rate = 0.05'),		-- 4 bits, 64-bit signature
	('false_positive_rate = 0.001'),		-- 10 bits, 128-bit signature
	('false_positive_rate = 0.000001'),	-- 20 bits, 192-bit signature
	('length = 80'),						-- contrib/bloom's default length
	('length = 80, col1 = 2, col2 = 2, col3 = 2, col4 = 2, col5 = 2, col6 = 2'),
	('length = 70'),						-- rounded up to 80, as contrib/bloom does
	('length = 4096'),
	('col1 = 4'),							-- colN alone: length from the bits
	('col1 = 20, col2 = 20, col3 = 20, col4 = 20, col5 = 20, col6 = 20')
) AS t(opts);

-- The shape is frozen at build: the estimate reflects it
CREATE INDEX o_idx ON o USING bloomidx (c1, c2, c3, c4, c5, c6) WITH (length = 80, col1 = 2, col2 = 2, col3 = 2, col4 = 2, col5 = 2, col6 = 2);
-- contrib/bloom's defaults: about 2% false positives on one column
SELECT round(fill::numeric, 2) AS fill, round(false_positive_rate::numeric, 3) AS fpr, index_pages
FROM bloomidx_estimate('o_idx', '{c2}');
DROP INDEX o_idx;
-- The default: about 0.035% on one column, 40% of the bits set
CREATE INDEX o_idx ON o USING bloomidx (c1, c2, c3, c4, c5, c6);
SELECT round(fill::numeric, 2) AS fill, false_positive_rate BETWEEN 0.000175 AND 0.0007 AS about_target, index_pages
FROM bloomidx_estimate('o_idx', '{c2}');
SELECT false_positive_rate < 0.00001 AS two_columns_tighter FROM bloomidx_estimate('o_idx', '{c2, c5}');
-- ALTER INDEX changes the reloptions but not the frozen shape until REINDEX
ALTER INDEX o_idx SET (false_positive_rate = 0.01);
SELECT index_pages FROM bloomidx_estimate('o_idx', '{c2}');
REINDEX INDEX o_idx;
SELECT index_pages FROM bloomidx_estimate('o_idx', '{c2}');
ALTER INDEX o_idx SET (length = 5000);
ALTER INDEX o_idx RESET (false_positive_rate);
DROP INDEX o_idx;

-- Errors: out of range, contradictory, unknown
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 0);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 4097);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = -1);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (col1 = 4096);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (col1 = -3);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (col33 = 1);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 0.6);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 1e-7);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = -0.1);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 'NaN');
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 0.01, length = 80);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 0.01, col1 = 3);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 'long');
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (colour = 3);
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (false_positive_rate = 0);

-- Accepted, as contrib/bloom accepts them: a length below 16 is rounded up,
-- a column may set as many bits as the signature has and colN past the
-- last column is ignored (both with a NOTICE), and a length derived from
-- colN stops at 4096 (with a NOTICE: the default sliced layout takes at
-- most 1024 bits, so the index gets the row layout)
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 16, col1 = 15);
DROP INDEX o_idx;
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 8);
SELECT signature_bits, bits_per_column FROM bloomidx_stats('o_idx');
DROP INDEX o_idx;
CREATE INDEX o_idx ON o USING bloomidx (c1) WITH (length = 64, col1 = 64);
SELECT signature_bits, bits_per_column FROM bloomidx_stats('o_idx');
DROP INDEX o_idx;
CREATE INDEX o_idx ON o USING bloomidx (c1, c2) WITH (col3 = 4);
SELECT signature_bits, bits_per_column FROM bloomidx_stats('o_idx');
DROP INDEX o_idx;
CREATE INDEX o_idx ON o USING bloomidx (c1, c2, c3, c4, c5, c6) WITH (col1 = 4000, col2 = 4000);
SELECT signature_bits, bits_per_column FROM bloomidx_stats('o_idx');
DROP INDEX o_idx;

DROP FUNCTION o_pages(text, text);
DROP TABLE o;
