--
-- Summary groups on a build of bloomidx made with -DBLOOMIDX_SMALL_LIMITS
-- (scripts/test.sh, suite limits): groups of two stripes instead of 63, so
-- that a group fills up and VACUUM, once it has emptied both its stripes,
-- frees its region.  Answers equal a seq scan's throughout, and
-- bloomidx_check (with heapallindexed) finds nothing wrong.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
SET max_parallel_maintenance_workers = 0;

-- Pages of the index flagged as a summary group's (flags 0x0200 in the
-- special space, src/core/page.h), by the group's first stripe (the tag)
CREATE FUNCTION sgl_group_pages(idx regclass, OUT first_stripe int, OUT pages bigint)
RETURNS SETOF record LANGUAGE sql AS $$
	SELECT get_byte(p, bs - 8) | (get_byte(p, bs - 7) << 8), count(*)
	FROM (SELECT get_raw_page(idx::text, b::int) AS p,
				 current_setting('block_size')::int AS bs
		  FROM generate_series(1, pg_relation_size(idx) /
							   current_setting('block_size')::int - 1) b) x
	WHERE (get_byte(p, bs - 4) | (get_byte(p, bs - 3) << 8)) = 512
	GROUP BY 1 ORDER BY 1
$$;

CREATE FUNCTION sgl_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM sgl WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM sgl WHERE ' || cond INTO via_seqscan;
END;
$$;

-- Three full stripes: group 0 holds stripes 0 and 1, group 1 stripe 2
CREATE TABLE sgl (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO sgl SELECT g, g % 1000, (g::bigint * 7919 % 100003)::int
FROM generate_series(1, 200000) g;
VACUUM ANALYZE sgl;
CREATE INDEX sgl_bx ON sgl USING bloomidx (a, b);
SELECT bloomidx_merge('sgl_bx') >= 0 AS merged;
SELECT stripes, free_pages FROM bloomidx_stats('sgl_bx');
SELECT * FROM sgl_group_pages('sgl_bx');
SELECT bloomidx_check('sgl_bx', true);
SELECT * FROM sgl_counts('a = 7');
SELECT * FROM sgl_counts('b = 7919 AND a = 1');
SELECT * FROM sgl_counts('b = 100004');

-- VACUUM empties the two stripes of group 0 and frees its region: group
-- 1's pages are left
DELETE FROM sgl WHERE id <= 130560;
VACUUM sgl;
SELECT stripes, free_pages FROM bloomidx_stats('sgl_bx');
SELECT * FROM sgl_group_pages('sgl_bx');
SELECT bloomidx_check('sgl_bx', true);
SELECT * FROM sgl_counts('a = 7');
SELECT * FROM sgl_counts('b = 7919 AND a = 1');
SELECT * FROM sgl_counts('b = 100004');
SELECT * FROM sgl_counts('id = 199999');

-- An index created on the empty table, its stripes filled by merges, none
-- sealed.  VACUUM first empties stripes 0 and 1 (this build's stripe lists
-- are short, so the first list's stripes move forward: their rows, whose
-- keys the slices do not hold, fill stripes of incomplete summaries), then
-- allocates the region of group 1 and seals stripe 2 there; a second
-- VACUUM seals nothing more
CREATE TABLE sgv (id int, a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX sgv_bx ON sgv USING bloomidx (a, b);
INSERT INTO sgv SELECT g, g % 1000, (g::bigint * 7919 % 100003)::int
FROM generate_series(1, 200000) g;
SELECT bloomidx_merge('sgv_bx') >= 0 AS merged;
SELECT * FROM sgl_group_pages('sgv_bx');
VACUUM sgv;
SELECT * FROM sgl_group_pages('sgv_bx');
SELECT bloomidx_check('sgv_bx', true);
SELECT pg_relation_size('sgv_bx') AS sgv_size \gset
VACUUM sgv;
SELECT pg_relation_size('sgv_bx') = :sgv_size AS same_size;
ALTER TABLE sgv RENAME TO sgl_keep;
ALTER TABLE sgl RENAME TO sgl_old;
ALTER TABLE sgl_keep RENAME TO sgl;
SELECT * FROM sgl_counts('a = 7');
SELECT * FROM sgl_counts('b = 7919 AND a = 1');
SELECT * FROM sgl_counts('b = 100004');
SELECT * FROM sgl_counts('a = ANY (ARRAY[7, 1001, 5])');
SELECT * FROM sgl_counts('a IS NULL');

DROP TABLE sgl_old;
DROP TABLE sgl;

-- A region that grows: an index built on three full stripes' rows exactly
-- gets group 1's region for one position (255 blocks of a column a page);
-- once merges fill stripe 3, VACUUM moves the group to a region for both
-- (127 blocks a page: stripe 2's blocks re-laid), seals stripe 3 there and
-- frees the old region's pages and stripe 3's own summary pages (it also
-- empties stripes 0 and 1, this build's stripe lists being short, and
-- frees group 0's region)
CREATE TABLE sgl (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO sgl SELECT g, g % 1000, (g::bigint * 7919 % 100003)::int
FROM generate_series(1, 195840) g;
VACUUM ANALYZE sgl;
CREATE INDEX sgl_bx ON sgl USING bloomidx (a, b);
SELECT * FROM sgl_group_pages('sgl_bx');
INSERT INTO sgl SELECT g, g % 1000, (g::bigint * 7919 % 100003)::int
FROM generate_series(195841, 270000) g;
SELECT bloomidx_merge('sgl_bx') >= 0 AS merged;
VACUUM sgl;
SELECT * FROM sgl_group_pages('sgl_bx');
SELECT bloomidx_check('sgl_bx', true);
SELECT * FROM sgl_counts('a = 7');
SELECT * FROM sgl_counts('b = 7919 AND a = 1');
SELECT * FROM sgl_counts('b = 100004');
SELECT * FROM sgl_counts('a = ANY (ARRAY[7, 1001, 5])');
SELECT * FROM sgl_counts('id = 269999');
DROP TABLE sgl;
DROP FUNCTION sgl_counts(text);
DROP FUNCTION sgl_group_pages(regclass);
DROP EXTENSION pageinspect;
