/*-------------------------------------------------------------------------
 *
 * bloomidx.h
 *	  Declarations shared by the parts of the bloomidx access method.
 *
 * Prototypes are grouped by the file that defines them.  The on-disk
 * format is declared in page.h; the routine table of the layouts in
 * layout.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_H
#define BLOOMIDX_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/genam.h"
#include "access/itup.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "access/relscan.h"

#include "compat.h"

/* Limits */
#define BLOOMIDX_MAX_COLUMNS		32	/* index columns */
#define BLOOMIDX_MIN_LENGTH			16	/* signature bits */
#define BLOOMIDX_MAX_LENGTH			4096
#define BLOOMIDX_MAX_COLUMN_BITS	(BLOOMIDX_MAX_LENGTH - 1)
#define BLOOMIDX_MAX_DERIVED_BITS	16	/* k derived from length alone */
#define BLOOMIDX_MIN_FPR			1e-6	/* false_positive_rate */
#define BLOOMIDX_MAX_FPR			0.5
#define BLOOMIDX_DEFAULT_FPR		0.01	/* row layout */
#define BLOOMIDX_SLICED_DEFAULT_FPR	0.00035	/* sliced layout */
#define BLOOMIDX_SLICED_FILL		0.4	/* of a derived sliced shape */
#define BLOOMIDX_DEFAULT_LAYOUT		BLOOMIDX_LAYOUT_SLICED	/* of a new index */
#define BLOOMIDX_RECENT_BUFFERS		16384	/* BloomReadBufferRecent, at most */

/* Operator strategy and support function numbers */
#define BLOOMIDX_EQUAL_STRATEGY		1
#define BLOOMIDX_NSTRATEGIES		1
#define BLOOMIDX_HASH_PROC			1
#define BLOOMIDX_NPROC				1

/*
 * Reloptions as parsed from WITH (...).  Zero means "not given" (no user can
 * give it): length and colN are then derived (see BloomResolveOptions).
 */
typedef struct BloomOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			length;			/* signature length in bits, or 0 */
	double		falsePositiveRate;	/* target for one column, or 0 */
	int			bitsPerColumn[BLOOMIDX_MAX_COLUMNS];	/* bits per column, or 0 */
	int			layout;			/* BLOOMIDX_LAYOUT_ROW or _SLICED, or 0 */
} BloomOptions;

/*
 * The shape of an index's signatures, fixed when the index is built and
 * frozen in its metapage.
 */
typedef struct BloomShape
{
	int			nColumns;		/* index columns */
	int			sigBits;		/* signature length in bits */
	int			sigBytes;		/* signature length in bytes */
	int			sigWords;		/* 64-bit words covering a signature */
	int			bitsPerColumn[BLOOMIDX_MAX_COLUMNS];	/* k of each column */
	double		targetFpr;		/* rate asked for (0 if length/colN given) */
	int			layout;			/* BLOOMIDX_LAYOUT_ROW or _SLICED */
} BloomShape;

/* Where a block of the index was last found in shared buffers */
typedef struct BloomRecentBuffer
{
	BlockNumber blkno;
	Buffer		buffer;
} BloomRecentBuffer;

/*
 * Everything needed to hash an index's columns: its shape, read from the
 * metapage, and the hash support functions.  Kept in rd_amcache.
 */
typedef struct BloomStateData
{
	BloomShape	shape;
	int			tuplesPerPage;	/* signature slots on a data page */
	FmgrInfo	hashFn[BLOOMIDX_MAX_COLUMNS];
	Oid			collations[BLOOMIDX_MAX_COLUMNS];
	BlockNumber knownBlocks;	/* a length the index had (BloomBlocksCovering) */
	BloomRecentBuffer *recent;	/* by block number modulo a power of two, or
								 * NULL: see BloomReadBufferRecent */
	uint32		recentMask;		/* that power of two, minus 1 */
} BloomStateData;

typedef BloomStateData *BloomState;

/* A set of masks of which a signature must contain at least one */
typedef struct BloomAlternatives
{
	int			nmasks;
	uint64	   *masks;			/* nmasks * sigWords words */
} BloomAlternatives;

/*
 * A scan's query, made from its keys: a signature matches if it has every
 * bit of mask and, for each group of alternatives, every bit of one of
 * them.
 */
typedef struct BloomScanOpaqueData
{
	MemoryContext queryCxt;		/* the query below; reset on rescan */
	bool		noMatch;		/* no signature can match */
	uint64	   *mask;			/* bits every match has, sigWords words */
	int			nwords;			/* words of mask that are not zero */
	int		   *words;			/* their indexes */
	int			nalternatives;
	BloomAlternatives *alternatives;
	BlockNumber heapBlocks;		/* the table's length when last read, 0 at
								 * first (see BloomCheckScanTids) */
} BloomScanOpaqueData;

typedef BloomScanOpaqueData *BloomScanOpaque;

/*
 * What a layout says of its size, for the cost model and bloomidx_stats
 * (the sliced layout: stripes and pending pages).
 */
typedef struct BloomLayoutSizesData
{
	double		stripes;		/* stripes listed and not emptied */
	double		pendingPages;
	uint64		firstRow;		/* rows firstRow .. nextRow - 1 are in the */
	uint64		nextRow;		/* stripes still listed */
} BloomLayoutSizesData;


/* options.c */
extern void BloomInitOptions(void);
extern bytea *bloomidx_options(Datum reloptions, bool validate);
extern void BloomResolveOptions(Relation index, int unsetLayout,
								BloomShape *shape);
extern void BloomReportOptions(Relation index, const BloomShape *shape);

/* am_build.c */
extern IndexBuildResult *bloomidx_build(Relation heap, Relation index,
										struct IndexInfo *indexInfo);
extern void bloomidx_buildempty(Relation index);
extern char *bloomidx_buildphasename(int64 phasenum);

/* Sub-phases of a build in pg_stat_progress_create_index (amphasename) */
#define BLOOMIDX_PHASE_SCAN			2	/* scanning the table */
#define BLOOMIDX_PHASE_FINISH		3	/* parallel: the leader combines the work */
#define BLOOMIDX_PHASE_WAL			4	/* WAL-logging the index's pages */

/* am_insert.c */
extern bool bloomidx_insert(Relation index, Datum *values, bool *isnull,
							ItemPointer ht_ctid, Relation heapRel,
							IndexUniqueCheck checkUnique,
							bool indexUnchanged,
							struct IndexInfo *indexInfo);
extern void bloomidx_insertcleanup(Relation index, IndexInfo *indexInfo);

/* am_scan.c */
extern IndexScanDesc bloomidx_beginscan(Relation r, int nkeys, int norderbys);
extern void bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
							ScanKey orderbys, int norderbys);
extern int64 bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void bloomidx_endscan(IndexScanDesc scan);
extern FmgrInfo *BloomKeyHashFunction(Relation index, BloomState state,
									  int col, Oid keytype, FmgrInfo *flinfo,
									  bool missing_ok);
extern BufferAccessStrategy BloomScanStrategy(double pages);

/* am_vacuum.c */
extern IndexBulkDeleteResult *bloomidx_bulkdelete(IndexVacuumInfo *info,
												  IndexBulkDeleteResult *stats,
												  IndexBulkDeleteCallback callback,
												  void *callback_state);
extern IndexBulkDeleteResult *bloomidx_vacuumcleanup(IndexVacuumInfo *info,
													 IndexBulkDeleteResult *stats);

/* cost.c */
extern void bloomidx_costestimate(PlannerInfo *root, IndexPath *path,
								  double loop_count, Cost *indexStartupCost,
								  Cost *indexTotalCost,
								  Selectivity *indexSelectivity,
								  double *indexCorrelation,
								  double *indexPages);
extern double BloomIndexFill(Relation index, const BloomShape *shape);
extern double BloomClauseFpr(const BloomShape *shape, double fill, int col,
							 double nvalues);
extern double BloomEqualityFpr(const BloomShape *shape, double fill, int ncols,
							   const int *cols);

/* validate.c */
extern bool bloomidx_validate(Oid opclassoid);

/* sliced_batch.c (rows gathered by inserts into sliced indexes) */
extern void BloomBatchInit(void);
extern void BloomMergeDefineSettings(void);
extern void BloomBatchFlush(Relation index);

/* state.c */
extern BloomState BloomGetState(Relation index);
extern Buffer BloomReadBufferRecent(Relation index, BlockNumber blkno,
									BufferAccessStrategy bas);
extern void BloomInitState(BloomState state, Relation index,
						   const BloomShape *shape);
extern void BloomCheckIndexRelation(Relation rel);
extern int	BloomFormSignatureWords(BloomState state, Datum *values,
									bool *isnull, uint64 *words);
extern int	BloomFormSignature(BloomState state, Datum *values, bool *isnull,
							   uint8 *sig);

#endif							/* BLOOMIDX_H */
