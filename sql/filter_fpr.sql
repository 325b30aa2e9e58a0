--
-- Statistical properties of bloom filters: no false negatives among
-- 1,000,000 added values, and a false-positive rate over 1,000,000 values
-- not added within 0.5x to 1.5x of the target, for targets 0.1, 0.01 and
-- 0.001 (bloom_agg with a capacity) and for bloom_agg sizing itself from
-- the distinct values seen (target 0.01); beyond work_mem bloom_agg goes
-- on as a growing filter, whose rate is at most 1.2 times the target.  The data is deterministic, so
-- the counts are exact; only the verdicts are printed.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

-- bloom_agg(value) sizes exactly while its hash set fits in work_mem
SET work_mem = '64MB';
CREATE TABLE fpr_filters (label text, target float8, f bloomfilter);
INSERT INTO fpr_filters
	SELECT 'capacity, ' || p, p, bloom_agg(i, 1000000, p)
	FROM (VALUES (0.1::float8), (0.01), (0.001)) t(p),
		 generate_series(1, 1000000) i
	GROUP BY p;
INSERT INTO fpr_filters
	SELECT 'distinct values seen', 0.01, bloom_agg(i)
	FROM generate_series(1, 1000000) i;
RESET work_mem;
-- beyond work_mem it goes on as a growing filter, which keeps to the rate
SET work_mem = '1MB';
INSERT INTO fpr_filters
	SELECT 'distinct values seen, beyond work_mem', 0.01, bloom_agg(i)
	FROM generate_series(1, 1000000) i;
RESET work_mem;

SELECT label, capacity, nhashes FROM fpr_filters, bloom_info(f) ORDER BY label;

-- the added values 1 .. 1,000,000 and others, 1,000,001 .. 2,000,000
SELECT label,
	   (SELECT count(*) FROM generate_series(1, 1000000) i
		WHERE NOT bloom_contains(f, i)) = 0 AS no_false_negatives,
	   (SELECT count(*) FROM generate_series(1000001, 2000000) i
		WHERE bloom_contains(f, i)) / 1000000.0
		   BETWEEN CASE WHEN label LIKE '%beyond%' THEN 0 ELSE 0.5 END * target
		   AND CASE WHEN label LIKE '%beyond%' THEN 1.2 ELSE 1.5 END * target AS rate_within_bounds
FROM fpr_filters
ORDER BY label;

-- the array form agrees with the scalar form
SELECT label,
	   (SELECT count(*) FROM unnest(bloom_contains(f, arr)) c WHERE c) =
	   (SELECT count(*) FROM unnest(arr) i WHERE bloom_contains(f, i)) AS array_agrees
FROM fpr_filters,
	 (SELECT array_agg(i) AS arr FROM generate_series(1900001, 2000000) i) a
ORDER BY label;

DROP TABLE fpr_filters;
