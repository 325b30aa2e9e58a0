/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  Inspecting and verifying a bloomidx index: bloomidx_stats and
 *	  bloomidx_check.
 *
 * Both walk every page of the index once, checking its format with the
 * helpers of pagecheck.c, then the rows the index's layout keeps outside
 * data pages (nothing here knows a page's layout).  bloomidx_check
 * also checks that no tuple points past the end of the table and, with
 * heapallindexed, that every row of the table has its signature in the
 * index under its TID, as amcheck's bt_index_check does for a B-tree.
 *
 * Locking: like bt_index_check, bloomidx_check holds only AccessShareLock
 * on the table and the index, so inserts, updates, deletes and VACUUM go on
 * while it runs.  That is safe because:
 *	- the MVCC snapshot of the heapallindexed pass is taken before the
 *	  index is read.  A row it sees was committed before it, and its index
 *	  tuple was written before that commit, on a page that already existed
 *	  (in the row layout tuples never move between pages: VACUUM compacts
 *	  a page in place; for the sliced layout see below).
 *	  VACUUM cannot remove a row the snapshot sees, so its index tuple
 *	  stays.  Rows inserted during the check are invisible to the snapshot.
 *	- the table's length is read after the index walk: a heap page is
 *	  extended before any index tuple points to it, and our lock keeps
 *	  VACUUM from truncating the table.
 *	- each page is copied under its buffer lock and checked from the copy.
 *	- in the sliced layout a merge moves rows from pending pages into the
 *	  slices: the walk holds the merge lock (a heavyweight lock on the
 *	  metapage's block), so merges and that layout's VACUUM wait for the
 *	  walk, though not for the heap pass.
 * ShareLock, as bt_index_parent_check takes, would block every writer for
 * the whole check and buy nothing here.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/htup_details.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "lib/bloomfilter.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_stats);
PG_FUNCTION_INFO_V1(bloomidx_check);

/* Columns of bloomidx_stats' result (1.0 has the first 18, 1.1 19) */
#define BLOOMIDX_STATS_COLUMNS		24
/* The columns of the stripe summaries, from this one on */
#define BLOOMIDX_STATS_SUMMARY_FIRST	19
#define BLOOMIDX_STATS_SUMMARY_COLUMNS	5

/*
 * The load of a stripe's summary (the distinct keys its bits imply over
 * those it was sized for) over which bloomidx_check says the data has
 * outgrown the summaries' sizing
 */
#define BLOOM_SUMMARY_OVERLOAD	2.0

/* What a walk over every page of an index finds */
typedef struct BloomWalkData
{
	Relation	index;
	BloomShape	shape;			/* frozen in the metapage */
	int			metaVersion;	/* format version in the metapage */
	BlockNumber npages;			/* pages walked, metapage included */
	uint64		dataPages;
	uint64		freePages;		/* deleted, or never initialized */
	uint64		tuples;
	uint64		bitsSet;		/* over all tuples */

	/* The highest heap block a tuple points to, and the page holding it */
	BlockNumber maxHeapBlock;
	BlockNumber maxHeapBlockAt;

	/*
	 * With heapallindexed: a fingerprint of every (TID, signature)
	 * reachable from the metapage, in a Bloom filter of at most
	 * maintenance_work_mem, as amcheck keeps them
	 */
	bool		collectKeys;
	bloom_filter *keys;
	uint64		nkeys;

	/* The row pages whose rows are live, sorted, or NULL for all */
	BlockNumber *liveRowPages;
	int			nliveRowPages;
} BloomWalkData;

/* State of the heapallindexed pass over the table */
typedef struct BloomHeapCheckData
{
	Relation	heap;
	Relation	index;
	BloomState	state;			/* shape and hash functions */
	MemoryContext tmpCtx;		/* reset after every row */
	uint8	   *sig;
	bloom_filter *keys;
	uint64		rowsChecked;
	const BloomLayoutRoutine *layout;
	void	   *layoutCheck;	/* the layout's heapcheckbegin, or NULL */
} BloomHeapCheckData;

/*
 * Fingerprint of one (heap TID, signature) pair: a 64-bit hash of the
 * signature seeded with the TID.
 */
static inline uint64
BloomCheckKey(ItemPointer tid, const uint8 *sig, int sigBytes)
{
	uint64		seed = ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);

	return hash_bytes_extended(sig, sigBytes, seed);
}

/*
 * Order of block numbers, for qsort and bsearch.
 */
static int
BloomCompareBlocks(const void *a, const void *b)
{
	BlockNumber ka = *(const BlockNumber *) a;
	BlockNumber kb = *(const BlockNumber *) b;

	return ka < kb ? -1 : (ka > kb ? 1 : 0);
}

/*
 * Count one index tuple (a TID and its signature, found at blkno) and take
 * its fingerprint if asked to.
 */
static void
BloomWalkTuple(ItemPointer tid, const uint8 *sig, BlockNumber blkno, void *arg)
{
	BloomWalkData *walk = (BloomWalkData *) arg;
	int			sigBytes = walk->shape.sigBytes;
	BlockNumber heapBlock = ItemPointerGetBlockNumberNoCheck(tid);

	BloomCheckHeapTid(walk->index, blkno, tid);
	walk->bitsSet += BloomCountBits(sig, sigBytes);
	if (walk->tuples == 0 || heapBlock > walk->maxHeapBlock)
	{
		walk->maxHeapBlock = heapBlock;
		walk->maxHeapBlockAt = blkno;
	}
	walk->tuples++;
	if (walk->collectKeys)
	{
		uint64		key = BloomCheckKey(tid, sig, sigBytes);

		bloom_add_element(walk->keys, (unsigned char *) &key, sizeof(key));
		walk->nkeys++;
	}
}

/*
 * Read and check the metapage, then every other page of the index,
 * counting what they hold.
 *
 * The walk holds the lock that merges and VACUUM take (a heavyweight lock
 * on the metapage's block), so that the rows of a sliced index do not move
 * between its pending pages and its slices while they are counted.
 */
static void
BloomWalkIndex(BloomWalkData *walk)
{
	Relation	index = walk->index;
	BloomShape *shape = &walk->shape;
	PGAlignedBlock copy;
	Page		page = (Page) copy.data;
	BloomMetaPage meta;
	BufferAccessStrategy bas;
	BloomBlockRange range;
	ReadStream *stream;
	Buffer		buffer;
	BlockNumber blkno;
	char	   *problem;
	const BloomLayoutRoutine *layout;
	int			i;

	if (RelationGetNumberOfBlocks(index) == 0)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  "The index has no metapage.");

	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);

	/* The metapage */
	buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(copy.data, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);

	/* What every metapage has, then the fields of its layout */
	BloomCheckMeta(index, page, NULL, NULL);
	meta = BloomPageGetMeta(page);
	BloomMetaGetShape(meta, shape);
	layout = BloomGetLayout(shape);
	BloomCheckMeta(index, page, layout->metaproblem, layout->metablocksproblem);
	problem = layout->metaspareproblem != NULL ?
		layout->metaspareproblem(meta, RelationGetNumberOfBlocks(index)) : NULL;
	if (problem != NULL)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO, problem);
	if (meta->nColumns != RelationGetNumberOfAttributes(index))
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  psprintf("The metapage describes %u columns, but the index has %d.",
									   meta->nColumns,
									   RelationGetNumberOfAttributes(index)));
	walk->metaVersion = meta->version;

	/*
	 * Rows are reachable from the metapage: on the row pages the layout
	 * says are live (in the row layout every data page, in the sliced
	 * layout the pending pages it lists) and in the layout's own pages
	 * (walked by the layout below).  Only those are collected, so that a
	 * row on a page the index no longer reaches is reported missing.
	 */
	if (layout->liverowpages != NULL)
		walk->liveRowPages = layout->liverowpages(meta, &walk->nliveRowPages);
	if (walk->collectKeys)
	{
		double		total = Max(walk->index->rd_rel->reltuples, 0);

		if (layout->rowsheld != NULL)
			total = Max(total, layout->rowsheld(index, meta));
		else
			total = Max(total, (double) RelationGetNumberOfBlocks(index) *
						meta->tuplesPerPage);
		walk->keys = bloom_create((int64) Min(total, (double) PG_INT64_MAX / 2),
								  maintenance_work_mem, (uint64) random());
	}

	/*
	 * Read the length after the metapage: the lists of the layouts' ranges
	 * of the metapage may name pages added since it was read, never pages
	 * that do not exist (an index is never truncated).  A listed page may
	 * be empty or deleted (after a crash between a VACUUM's page and
	 * metapage updates, or while a VACUUM runs): their readers skip such
	 * pages.
	 */
	walk->npages = RelationGetNumberOfBlocks(index);
	if ((problem = BloomMetaAreasBlocksProblem(meta, walk->npages)) != NULL)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO, problem);

	/* The other pages, in order, read ahead */
	bas = GetAccessStrategy(BAS_BULKREAD);
	range.next = BLOOMIDX_METAPAGE_BLKNO + 1;
	range.end = walk->npages;
	stream = read_stream_begin_relation(READ_STREAM_FULL, bas, index, MAIN_FORKNUM,
										BloomBlockRangeNext, &range, 0);
	while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
	{
		int			ntuples;
		bool		listed;
		bool		done;

		CHECK_FOR_INTERRUPTS();

		blkno = BufferGetBlockNumber(buffer);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(copy.data, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);

		/* A row page the layout lists as live is a data page */
		listed = walk->liveRowPages != NULL &&
			bsearch(&blkno, walk->liveRowPages, walk->nliveRowPages,
					sizeof(BlockNumber), BloomCompareBlocks) != NULL;
		if (listed && BloomPageHasFlag(page, layout->pageKinds))
			BloomReportCorruption(index, blkno,
								  psprintf("A %s was expected.", layout->rowPageName));

		problem = BloomPageCommonProblem(page, &done);
		if (problem == NULL && !done)
			problem = layout->pageproblem(page, shape);
		if (problem != NULL)
			BloomReportCorruption(index, blkno, problem);

		if (PageIsNew(page) || BloomPageIsDeleted(page))
		{
			walk->freePages++;
			continue;
		}
		walk->dataPages++;
		if (BloomPageHasFlag(page, layout->pageKinds))
			continue;			/* the layout's own pages: read below */
		if (walk->liveRowPages != NULL && !listed)
			continue;			/* a row page no longer live */

		ntuples = BloomPageGetNTuples(page);
		for (i = 0; i < ntuples; i++)
			BloomWalkTuple(BloomPageGetTid(page, BloomShapeSlotBytes(shape), i),
						   BloomPageGetSignature(page, BloomShapeSlotBytes(shape), i),
						   blkno, walk);
	}
	read_stream_end(stream);
	FreeAccessStrategy(bas);

	/* The rows the layout keeps elsewhere than in data pages */
	if (layout->walkrows != NULL)
		layout->walkrows(index, shape, BloomWalkTuple, walk);

	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
}

/*
 * The columns of bloomidx_stats that only a partitioned index has: no
 * pages of its own (each partition's index is listed by itself), and a
 * layout that says what it is.
 */
static void
BloomStatsPartitioned(Datum *values, bool *nulls)
{
	int			i;

	for (i = 0; i < BLOOMIDX_STATS_COLUMNS; i++)
		nulls[i] = true;
	for (i = 1; i <= 3; i++)
	{
		values[i] = Int64GetDatum(0);
		nulls[i] = false;
	}
	values[13] = CStringGetTextDatum("partitioned");
	nulls[13] = false;
}

/*
 * The columns of bloomidx_stats' cheap form, from the metapage, the
 * index's length and its pg_class row alone: data_pages counts every page
 * but the metapage, free_pages is NULL, live_tuples is pg_class.reltuples
 * (as of the last build, VACUUM or ANALYZE; NULL if never counted), and
 * fill the metapage's sampled statistics, which the planner uses.
 */
static void
BloomStatsFromMeta(Relation index, Datum *values, bool *nulls, BloomShape *shape)
{
	Buffer		buffer;
	BloomMetaPage meta;
	BlockNumber npages;
	uint64		statTuples;
	uint64		bitsSet;
	float4		reltuples = index->rd_rel->reltuples;
	int			version;

	if (RelationGetNumberOfBlocks(index) == 0)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  "The index has no metapage.");
	buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	BloomCheckMetaPage(index, BufferGetPage(buffer));
	meta = BloomPageGetMeta(BufferGetPage(buffer));
	BloomMetaGetShape(meta, shape);
	version = meta->version;
	statTuples = meta->statTuples;
	bitsSet = meta->statBitsSet;
	UnlockReleaseBuffer(buffer);
	npages = RelationGetNumberOfBlocks(index);

	values[0] = Int32GetDatum(version);
	values[1] = Int64GetDatum(1);
	values[2] = Int64GetDatum((int64) npages - 1);
	nulls[3] = true;
	if (reltuples >= 0)
		values[4] = Int64GetDatum((int64) reltuples);
	else
		nulls[4] = true;
	if (statTuples > 0)
		values[8] = Float8GetDatum((double) bitsSet / ((double) statTuples * shape->sigBits));
	else
		nulls[8] = true;
	if (reltuples > 0)
		values[12] = Float8GetDatum((double) npages * BLCKSZ / reltuples);
	else
		nulls[12] = true;
}

/*
 * An array of one float8 a column of the index, NULL for a column whose
 * bits are zero (one without a summary).
 */
static Datum
BloomStatsColumnArray(int nColumns, const double *num, const double *bits)
{
	Datum		elems[BLOOMIDX_MAX_COLUMNS];
	bool		elemNulls[BLOOMIDX_MAX_COLUMNS];
	int			dims[1] = {nColumns};
	int			lbs[1] = {1};
	int			c;

	for (c = 0; c < nColumns; c++)
	{
		elemNulls[c] = bits[c] <= 0;
		elems[c] = Float8GetDatum(elemNulls[c] ? 0 : num[c] / bits[c]);
	}
	return PointerGetDatum(construct_md_array(elems, elemNulls, 1, dims, lbs,
											  FLOAT8OID, sizeof(float8),
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * The columns of bloomidx_stats on the stripe summaries: bits a key, from
 * the metapage; with exact, the summary pages, the stripes with a complete
 * summary, and per column the fill of their summaries and the mean of
 * their estimated false-positive rates.  NULL where the layout has no
 * summaries; for an index without them (older formats, summaries = off)
 * no bits a key, 0 pages and stripes.
 */
static void
BloomStatsSummaries(Relation index, const BloomLayoutRoutine *layout,
					const BloomShape *shape, bool exact, Datum *values,
					bool *nulls)
{
	BloomSummaryStatsData ss;
	double		stripes[BLOOMIDX_MAX_COLUMNS];
	int			c;

	for (c = 0; c < BLOOMIDX_STATS_SUMMARY_COLUMNS; c++)
		nulls[c] = true;
	if (layout->summarystats == NULL)
		return;
	layout->summarystats(index, exact, BLOOM_SUMMARY_OVERLOAD, &ss);
	if (ss.bitsPerKey > 0)
	{
		values[0] = Int32GetDatum(ss.bitsPerKey);
		nulls[0] = false;
	}
	if (!ss.counted)
		return;
	values[1] = Int64GetDatum(ss.pages);
	values[2] = Int64GetDatum(ss.stripes);
	nulls[1] = nulls[2] = false;
	if (ss.stripes == 0)
		return;
	for (c = 0; c < shape->nColumns; c++)
		stripes[c] = ss.bits[c] > 0 ? (double) ss.stripes : 0;
	values[3] = BloomStatsColumnArray(shape->nColumns, ss.bitsSet, ss.bits);
	values[4] = BloomStatsColumnArray(shape->nColumns, ss.fprSum, stripes);
	nulls[3] = nulls[4] = false;
}

/*
 * bloomidx_stats(index regclass, exact boolean): one record describing an
 * index.
 *
 * exact (the default) walks every page; without it, only the metapage is
 * read (BloomStatsFromMeta), and for the sliced layout the stripe lists.
 * A partitioned index gives a row of layout "partitioned"
 * (BloomStatsPartitioned).  Called through the 1.0 definition, there is no
 * exact argument and no target_false_positive_rate column; through the 1.1
 * one, no columns on the stripe summaries (BloomStatsSummaries).
 *
 * The false-positive rates are those of an equality on the first 1, 2 and
 * 3 columns at the fill measured over the live tuples, taken as far as the
 * spread of the rows' sets of measured columns goes (BloomShapeEffectiveFill;
 * NULL where the index has fewer columns).  With no live tuple, the fill is NULL and the rates
 * are those the planner assumes (BloomIndexFill).
 */
Datum
bloomidx_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	BloomWalkData walk;
	TupleDesc	tupdesc;
	Datum		values[BLOOMIDX_STATS_COLUMNS];
	bool		nulls[BLOOMIDX_STATS_COLUMNS];
	Datum		bits[BLOOMIDX_MAX_COLUMNS];
	double		fill;
	double		fpr = 1.0;
	const BloomLayoutRoutine *layout;
	int			i;

	bool		exact = PG_NARGS() > 1 ? PG_GETARG_BOOL(1) : true;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts > BLOOMIDX_STATS_COLUMNS)
		elog(ERROR, "return type has %d columns, not at most %d",
			 tupdesc->natts, BLOOMIDX_STATS_COLUMNS);

	memset(&walk, 0, sizeof(walk));
	memset(nulls, 0, sizeof(nulls));
	walk.index = BloomOpenIndexRelation(indexoid, AccessShareLock, true);
	if (walk.index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX &&
		walk.index->rd_indam->aminsert == bloomidx_insert)
	{
		BloomStatsPartitioned(values, nulls);
		index_close(walk.index, AccessShareLock);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}
	BloomCheckIndexRelation(walk.index);
	BloomFlushGathered(walk.index);
	if (!exact)
		BloomStatsFromMeta(walk.index, values, nulls, &walk.shape);
	else
	{
		BloomWalkIndex(&walk);
		values[0] = Int32GetDatum(walk.metaVersion);
		values[1] = Int64GetDatum(1);
		values[2] = Int64GetDatum((int64) walk.dataPages);
		values[3] = Int64GetDatum((int64) walk.freePages);
		values[4] = Int64GetDatum((int64) walk.tuples);
		if (walk.tuples > 0)
		{
			values[8] = Float8GetDatum((double) walk.bitsSet /
									   ((double) walk.tuples * walk.shape.sigBits));
			values[12] = Float8GetDatum((double) walk.npages * BLCKSZ / walk.tuples);
		}
		else
		{
			nulls[8] = true;
			nulls[12] = true;
		}
	}
	values[5] = Int32GetDatum(BloomTuplesPerPage(BloomShapeSlotBytes(&walk.shape)));
	values[6] = Int32GetDatum(walk.shape.sigBits);
	for (i = 0; i < walk.shape.nColumns; i++)
		bits[i] = Int32GetDatum(walk.shape.bitsPerColumn[i]);
	values[7] = PointerGetDatum(construct_array(bits, walk.shape.nColumns, INT4OID,
												sizeof(int32), true, TYPALIGN_INT));

	BloomShapeFillQueryElements(walk.index, &walk.shape);
	if (!nulls[8])
		fill = BloomShapeEffectiveFill(&walk.shape, DatumGetFloat8(values[8]));
	else
		fill = BloomIndexFill(walk.index, &walk.shape);
	for (i = 0; i < 3; i++)
	{
		if (i < walk.shape.nColumns)
		{
			fpr *= BloomClauseFpr(&walk.shape, fill, i, 1);
			values[9 + i] = Float8GetDatum(fpr);
		}
		else
			nulls[9 + i] = true;
	}

	/* The layout, and the figures of its own (NULL where it has none) */
	layout = BloomGetLayout(&walk.shape);
	values[13] = CStringGetTextDatum(layout->name);
	for (i = 0; i < BLOOMIDX_STATS_LAYOUT_COLUMNS; i++)
		nulls[BLOOMIDX_STATS_LAYOUT_FIRST + i] = true;
	if (layout->statscolumns != NULL)
		layout->statscolumns(walk.index, values + BLOOMIDX_STATS_LAYOUT_FIRST,
							 nulls + BLOOMIDX_STATS_LAYOUT_FIRST);

	/* The false-positive rate the index was built for, if it was */
	if (walk.shape.targetFpr > 0)
		values[18] = Float8GetDatum(walk.shape.targetFpr);
	else
		nulls[18] = true;

	BloomStatsSummaries(walk.index, layout, &walk.shape, exact,
						values + BLOOMIDX_STATS_SUMMARY_FIRST,
						nulls + BLOOMIDX_STATS_SUMMARY_FIRST);

	index_close(walk.index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Check that the index holds one heap row's signature under its TID.
 */
static void
BloomCheckHeapCallback(Relation index, ItemPointer tid, Datum *values,
					   bool *isnull, bool tupleIsAlive, void *arg)
{
	BloomHeapCheckData *hc = (BloomHeapCheckData *) arg;
	MemoryContext oldCtx;
	uint64		key;

	oldCtx = MemoryContextSwitchTo(hc->tmpCtx);
	BloomFormSignature(hc->state, values, isnull, hc->sig);
	if (hc->layoutCheck != NULL)
		hc->layout->heapcheckrow(hc->layoutCheck, hc->heap, tid, values, isnull);
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(hc->tmpCtx);

	key = BloomCheckKey(tid, hc->sig, hc->state->shape.sigBytes);
	if (bloom_lacks_element(hc->keys, (unsigned char *) &key, sizeof(key)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" lacks the signature of row (%u,%u) of table \"%s\"",
						RelationGetRelationName(hc->index),
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(hc->heap)),
				 errdetail("No index tuple points to the row with the signature of its values."),
				 errhint("REINDEX the index.")));
	hc->rowsChecked++;
}

/*
 * Check that every row of the table, as an MVCC snapshot taken before the
 * index was read sees it, has its signature in the index.  The fingerprints
 * collected by the walk are looked up for each row; the Bloom filter
 * misses a missing one with a small probability (amcheck's compromise).
 */
static void
BloomCheckHeapAllIndexed(Relation heap, Relation index, BloomWalkData *walk,
						 Snapshot snapshot)
{
	BloomHeapCheckData hc;
	IndexInfo  *indexInfo;
	TableScanDesc scan;

	memset(&hc, 0, sizeof(hc));
	hc.heap = heap;
	hc.index = index;
	hc.state = palloc0(sizeof(BloomStateData));
	BloomInitState(hc.state, index, &walk->shape);
	hc.tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomidx check temporary context",
									  ALLOCSET_DEFAULT_SIZES);
	hc.sig = palloc0(walk->shape.sigBytes);
	hc.keys = walk->keys;
	hc.layout = BloomGetLayout(&walk->shape);
	if (hc.layout->heapcheckbegin != NULL)
		hc.layoutCheck = hc.layout->heapcheckbegin(index, hc.state);

	/*
	 * Scan like the first scan of CREATE INDEX CONCURRENTLY: rows visible to
	 * the snapshot only, heap-only tuples reported under the TID of the root
	 * of their HOT chain (the TID the index holds), the index's predicate
	 * and expressions applied.
	 */
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = true;
	indexInfo->ii_Unique = false;
	indexInfo->ii_ExclusionOps = NULL;
	indexInfo->ii_ExclusionProcs = NULL;
	indexInfo->ii_ExclusionStrats = NULL;

	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
	table_index_build_scan(heap, index, indexInfo, true, false,
						   BloomCheckHeapCallback, &hc, scan);

	ereport(DEBUG1,
			(errmsg_internal("bloomidx_check: " UINT64_FORMAT " rows of \"%s\" found in " UINT64_FORMAT " tuples of \"%s\"",
							 hc.rowsChecked, RelationGetRelationName(heap),
							 (uint64) walk->nkeys, RelationGetRelationName(index))));

	MemoryContextDelete(hc.tmpCtx);
}

/*
 * Warn if the index's options now give a shape or layout other than the
 * one it was built with (after ALTER INDEX ... SET, or an update of the
 * library that changed the defaults of options left out): the index keeps
 * its frozen shape until it is rebuilt.
 */
static void
BloomCheckOptionsMatch(Relation index, const BloomShape *built)
{
	BloomShape	wanted;
	BloomColumnElements ce;
	bool		same;
	int			i;

	BloomGetBuiltColumnElements(index, built, &ce);
	BloomResolveOptions(index, built->layout, &ce, &wanted);
	same = wanted.layout == built->layout &&
		wanted.nColumns == built->nColumns && wanted.sigBits == built->sigBits;
	for (i = 0; same && i < built->nColumns; i++)
		same = wanted.bitsPerColumn[i] == built->bitsPerColumn[i];
	if (!same)
		ereport(NOTICE,
				(errmsg("signature shape of index \"%s\" differs from the one its options now give",
						RelationGetRelationName(index)),
				 errdetail("Its options, or the defaults of the options it leaves out, changed since it was built; it keeps the shape it was built with."),
				 errhint("REINDEX the index to build it with the shape its options now give.")));
}

/*
 * How far the elements per value of a column of sets may drift from those
 * its index was sized for, either way, before bloomidx_check says so
 */
#define BLOOM_ELEMENTS_DRIFT	2.0

/*
 * Say which columns of sets have data that has outgrown the shape.  A
 * column whose elements were given: its mean elements per value in a
 * sample of the table (am_sample.c) is more than BLOOM_ELEMENTS_DRIFT
 * times, or less than 1 / BLOOM_ELEMENTS_DRIFT of, the elements given
 * (recorded in the metapage, or for an index built before they were, its
 * options').  A column whose elements were measured: the elements a build
 * would now size it for, from the sample's mean and spread
 * (BloomSizeMeasuredElements), are that far from those it was sized for.
 * Too few elements for the data fill the signatures and raise the
 * false-positive rate; too many make the index longer than it needs to be.
 */
static void
BloomCheckElementsFit(Relation heap, Relation index, const BloomShape *built)
{
	BloomColumnElements ce;
	BloomColumnElements now;
	BloomElementsSample sample;
	IndexInfo  *indexInfo;
	double		loadFactor;
	int			i;

	if (built->setColumns == 0)
		return;
	BloomGetColumnElements(index, built->nColumns, &ce);

	/* Read as the heapallindexed check does: rows the snapshot sees */
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = true;
	BloomMeasureElements(heap, index, indexInfo, built->setColumns, &sample);

	/* What a build would size the measured columns for now */
	now = ce;
	BloomSizeMeasuredElements(index, &sample, built->measuredColumns, &now,
							  &loadFactor);

	for (i = 0; i < built->nColumns; i++)
	{
		double		sized = built->elements[i] > 0 ?
			built->elements[i] : ce.elements[i];
		bool		given = (ce.givenColumns & (1U << i)) != 0;
		bool		measured = (now.measuredColumns & (1U << i)) != 0;
		double		fit = measured ? now.elements[i] : sample.mean[i];

		if ((built->setColumns & (1U << i)) == 0 || sample.mean[i] <= 0 ||
			(fit <= sized * BLOOM_ELEMENTS_DRIFT &&
			 fit >= sized / BLOOM_ELEMENTS_DRIFT))
			continue;
		if (measured)
			ereport(NOTICE,
					(errmsg("column %d of index \"%s\" would now be sized for %d elements per value, but was sized for %d",
							i + 1, RelationGetRelationName(index),
							(int) now.elements[i], (int) sized),
					 errdetail_plural("Its values have %.1f elements on average, measured in a sample of " INT64_FORMAT " value of table \"%s\".",
									  "Its values have %.1f elements on average, measured in a sample of " INT64_FORMAT " values of table \"%s\".",
									  sample.values[i], sample.mean[i],
									  sample.values[i],
									  RelationGetRelationName(heap)),
					 errhint("REINDEX the index to size it for the data it has now.")));
		else
			ereport(NOTICE,
					(errmsg("column %d of index \"%s\" has %.1f elements per value, but the index was sized for %d",
							i + 1, RelationGetRelationName(index),
							sample.mean[i], (int) sized),
					 errdetail_plural("Measured in a sample of " INT64_FORMAT " value of table \"%s\".",
									  "Measured in a sample of " INT64_FORMAT " values of table \"%s\".",
									  sample.values[i], sample.values[i],
									  RelationGetRelationName(heap)),
					 given ?
					 errhint("Create the index again with elements = %d for the operator class, or without elements to have it measured.",
							 (int) Max(rint(sample.mean[i]), 1)) :
					 errhint("REINDEX the index to size it for the data it has now.")));
	}
}

/*
 * Say which columns' stripe summaries the data has outgrown: each stripe's
 * summary of a column was sized for the distinct values the build or the
 * merge that started the stripe measured, and one whose bits set imply
 * more than BLOOM_SUMMARY_OVERLOAD times as many lets through many times
 * the values it lacks that its sizing gives (a merge sizes a stripe it
 * starts as the build's last full stripe, whatever the rows it writes
 * there).
 */
static void
BloomCheckSummariesFit(Relation index, const BloomShape *built)
{
	const BloomLayoutRoutine *layout = BloomGetLayout(built);
	BloomSummaryStatsData ss;
	int			c;

	if (layout->summarystats == NULL || !built->summaries)
		return;
	layout->summarystats(index, true, BLOOM_SUMMARY_OVERLOAD, &ss);
	for (c = 0; c < built->nColumns; c++)
	{
		if (ss.overloaded[c] == 0)
			continue;
		ereport(NOTICE,
				(ss.worstFull[c] ?
				 errmsg("column %d of index \"%s\" has at least %.0f distinct values in stripe %u, but the stripe's summary was sized for %.0f",
						c + 1, RelationGetRelationName(index),
						ss.worstKeys[c], ss.worstStripe[c], ss.worstSized[c]) :
				 errmsg("column %d of index \"%s\" has about %.0f distinct values in stripe %u, but the stripe's summary was sized for %.0f",
						c + 1, RelationGetRelationName(index),
						ss.worstKeys[c], ss.worstStripe[c], ss.worstSized[c]),
				 errdetail_plural("%d stripe of " INT64_FORMAT " holds more than %g times the distinct values of the column its summary was sized for, as the bits set in it show; the fullest summary lets through about %.1f%% of the values its stripe lacks, where its sizing gives %.1f%%.",
								  "%d stripes of " INT64_FORMAT " hold more than %g times the distinct values of the column their summaries were sized for, as the bits set in them show; the fullest summary lets through about %.1f%% of the values its stripe lacks, where its sizing gives %.1f%%.",
								  ss.overloaded[c], ss.overloaded[c], ss.stripes,
								  BLOOM_SUMMARY_OVERLOAD, ss.worstFpr[c] * 100,
								  ss.designedFpr * 100),
				 errhint("REINDEX the index to size its summaries for the data it has now.")));
	}
}

/*
 * bloomidx_check(index regclass, heapallindexed boolean): verify an index,
 * raising ERRCODE_INDEX_CORRUPTED at the first problem found, and return
 * quietly if there is none.
 */
Datum
bloomidx_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Oid			heapoid;
	Relation	heap = NULL;
	Relation	index;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel = 0;
	Snapshot	snapshot = InvalidSnapshot;
	BloomWalkData walk;
	BlockNumber heapBlocks;

	/*
	 * Lock the table before the index, as DML does, to avoid deadlocks
	 * (amcheck does the same).  If the index is dropped and its OID reused
	 * meanwhile, the check below notices.
	 */
	heapoid = IndexGetRelation(indexoid, true);
	if (OidIsValid(heapoid))
	{
		heap = table_open(heapoid, AccessShareLock);

		/*
		 * Run the index's expressions and predicate as the table's owner,
		 * with security-restricted operations locked down and GUC changes
		 * local to this command.
		 */
		GetUserIdAndSecContext(&save_userid, &save_sec_context);
		SetUserIdAndSecContext(heap->rd_rel->relowner,
							   save_sec_context | SECURITY_RESTRICTED_OPERATION);
		save_nestlevel = NewGUCNestLevel();
	}

	index = BloomOpenIndexRelation(indexoid, AccessShareLock, true);
	if (heap == NULL || heapoid != IndexGetRelation(indexoid, false))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not open table of index \"%s\"",
						RelationGetRelationName(index))));
	BloomCheckIndexRelation(index);
	BloomFlushGathered(index);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("Index is not valid."),
				 errhint("Finish or redo the CREATE INDEX CONCURRENTLY, or REINDEX the index.")));

	memset(&walk, 0, sizeof(walk));
	walk.index = index;

	if (heapallindexed)
	{
		/*
		 * Take the snapshot before reading the index (see the file header).
		 * At REPEATABLE READ or above the transaction's snapshot may be
		 * older than the index's indcheckxmin horizon, and then it may see
		 * rows that the index does not have to hold.
		 */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(index)),
					 errhint("Run the check in a READ COMMITTED transaction.")));

		walk.collectKeys = true;
	}

	BloomWalkIndex(&walk);

	/* Read after the walk: see the file header */
	heapBlocks = RelationGetNumberOfBlocks(heap);
	if (walk.tuples > 0 && walk.maxHeapBlock >= heapBlocks)
		BloomReportCorruption(index, walk.maxHeapBlockAt,
							  psprintf("A tuple points to heap block %u, but table \"%s\" has %u blocks.",
									   walk.maxHeapBlock,
									   RelationGetRelationName(heap),
									   heapBlocks));

	BloomCheckOptionsMatch(index, &walk.shape);
	BloomCheckElementsFit(heap, index, &walk.shape);
	BloomCheckSummariesFit(index, &walk.shape);
	if (walk.shape.legacyFold)
		BloomTrgmReportLegacyFold(index, false);

	if (heapallindexed)
	{
		BloomCheckHeapAllIndexed(heap, index, &walk, snapshot);
		UnregisterSnapshot(snapshot);
		bloom_free(walk.keys);
	}

	/* Roll back any GUC changes of the index's functions, restore userid */
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);

	PG_RETURN_VOID();
}
