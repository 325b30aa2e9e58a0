--
-- Every filter the server accepts reads back byte for byte from its own
-- text, bytea and binary output: filters of every variant and both hash
-- schemes, mutated at random (seeded) in their header, variant part and
-- cells.  The text and binary outputs are the same bytes, also once the
-- element types were renamed (when they name the types as they are now).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TYPE rt_pair AS (a int, b text);
CREATE TYPE rt_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE rt_seed (id serial, b bytea);
INSERT INTO rt_seed (b) VALUES
	((SELECT bloom_agg(i, 100, 0.05) FROM generate_series(1, 50) i)::bytea),
	((SELECT bloom_agg(i, 20, 0.05, 2) FROM generate_series(1, 100) i)::bytea),
	((SELECT bloom_agg(i, bloom_empty(50, 0.05, counting => true)) FROM generate_series(1, 30) i)::bytea),
	((SELECT bloom_agg(i, bloom_empty(50, 0.05, blocked => true)) FROM generate_series(1, 30) i)::bytea),
	((SELECT bloom_agg(i, bloom_empty(50, 0.05, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
					   '\x000102030405060708090a0b0c0d0e0f'::bytea) FROM generate_series(1, 30) i)::bytea),
	((SELECT bloom_agg((i, 'v')::rt_pair, 20, 0.1) FROM generate_series(1, 10) i)::bytea),
	(bloom_empty(10, 0.1, growth => 3)::bytea),
	(bloom_empty_raw(64, 3)::bytea),
	((SELECT bloom_agg(m, 20, 0.1) FROM unnest(enum_range(NULL::rt_mood)) m)::bytea),
	((SELECT bloom_agg(ARRAY[m], 2, 0.1, 2) FROM unnest(enum_range(NULL::rt_mood)) m)::bytea);

CREATE TABLE rt_ok (n int, f bloomfilter);
SELECT setseed(0.15);
DO $$
DECLARE
	b bytea;
	f bloomfilter;
	seed int;
	nmut int;
	pos int;
	accepted int := 0;
	rejected int := 0;
BEGIN
	FOR n IN 1..4000 LOOP
		seed := 1 + floor(random() * 10)::int;
		SELECT s.b INTO STRICT b FROM rt_seed s WHERE s.id = seed;
		nmut := 1 + floor(random() * 3)::int;
		FOR m IN 1..nmut LOOP
			-- half in the first 130 bytes (header, names, variant part), half anywhere
			IF random() < 0.5 THEN
				pos := floor(random() * least(130, length(b)))::int;
			ELSE
				pos := floor(random() * length(b))::int;
			END IF;
			b := set_byte(b, pos, floor(random() * 256)::int);
		END LOOP;
		BEGIN
			f := b::bloomfilter;
		EXCEPTION WHEN data_exception OR undefined_object OR feature_not_supported THEN
			rejected := rejected + 1;
			CONTINUE;
		END;
		accepted := accepted + 1;
		-- a mutation may give a filter a home database: it is not output
		IF substr(b, 41, 16) <> '\x00000000000000000000000000000000'::bytea THEN
			BEGIN
				PERFORM f::text;
				RAISE EXCEPTION 'filter % with a home database is output', n;
			EXCEPTION WHEN feature_not_supported THEN
				CONTINUE;
			END;
		END IF;
		IF f::text::bloomfilter::bytea <> f::bytea OR f::bytea::bloomfilter::bytea <> f::bytea OR
			bloomfilter_send(f) <> f::bytea THEN
			RAISE EXCEPTION 'filter % does not read back: %', n, f::text;
		END IF;
		INSERT INTO rt_ok VALUES (n, f);
	END LOOP;
	RAISE NOTICE 'accepted at least 500: %, rejected at least 1000: %', accepted >= 500, rejected >= 1000;
END $$;
-- each accepted filter answers bloom_info, and reads back from binary COPY
SELECT count(*) FILTER (WHERE i.format_version IS NULL) AS not_inspectable FROM rt_ok, LATERAL bloom_info(f) i;
SELECT count(DISTINCT variant) AS variants_accepted FROM rt_ok, bloom_info(f);
CREATE TABLE rt_copy (LIKE rt_ok);
\copy rt_ok TO 'results/filter_roundtrip.bin' WITH (FORMAT binary)
\copy rt_copy FROM 'results/filter_roundtrip.bin' WITH (FORMAT binary)
SELECT count(*) = (SELECT count(*) FROM rt_ok) AS all_read_back
FROM rt_ok JOIN rt_copy USING (n) WHERE rt_ok.f::bytea = rt_copy.f::bytea;
SELECT count(*) FILTER (WHERE get_byte(f::bytea, 6) = 2) > 0 AS scheme_2_accepted FROM rt_ok;

-- the types renamed and moved: the output names them as they are now, text
-- and binary alike, and reads back to the same filters
CREATE SCHEMA rt_s;
ALTER TYPE rt_pair RENAME TO rt_pair2;
ALTER TYPE rt_pair2 SET SCHEMA rt_s;
ALTER TYPE rt_mood SET SCHEMA rt_s;
ALTER SCHEMA rt_s RENAME TO rt_s2;
SELECT count(*) FILTER (WHERE f::bytea <> decode(substr(f::text, 3), 'hex')) > 0 AS some_renamed,
	   count(*) FILTER (WHERE bloomfilter_send(f) <> decode(substr(f::text, 3), 'hex')) AS text_binary_differ,
	   count(*) FILTER (WHERE f::text::bloomfilter::text <> f::text) AS text_not_read_back,
	   count(*) FILTER (WHERE (bloom_info(f::text::bloomfilter)).element_type IS DISTINCT FROM (bloom_info(f)).element_type)
		   AS other_type
FROM rt_ok;
TRUNCATE rt_copy;
\copy rt_ok TO 'results/filter_roundtrip_renamed.bin' WITH (FORMAT binary)
\copy rt_copy FROM 'results/filter_roundtrip_renamed.bin' WITH (FORMAT binary)
SELECT count(*) = (SELECT count(*) FROM rt_ok) AS all_read_back
FROM rt_ok JOIN rt_copy USING (n) WHERE rt_ok.f::text = rt_copy.f::text;

DROP TABLE rt_seed, rt_ok, rt_copy;
DROP TYPE rt_s2.rt_pair2, rt_s2.rt_mood;
DROP SCHEMA rt_s2;
