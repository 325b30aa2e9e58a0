/*-------------------------------------------------------------------------
 *
 * bloomidx.h
 *	  Declarations shared by the parts of the bloomidx access method.
 *
 * Prototypes are grouped by the file that defines them.  The on-disk
 * format is declared in page.h; the routine table of the layouts in
 * layout.h.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  bloomidx.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_H
#define BLOOMIDX_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/genam.h"
#include "access/itup.h"
#include "access/reloptions.h"
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
#define BLOOMIDX_MAX_SET_ELEMENTS	1000000	/* elements of a set opclass */
#define BLOOMIDX_MAX_QUERY_ELEMENTS	64	/* its query_elements */
#define BLOOMIDX_RECENT_BUFFERS		16384	/* BloomReadBufferRecent, at most */

/*
 * Operator strategy and support function numbers.  Equality is the
 * strategy of every equality operator class; the others are those of the
 * operator classes whose values are sets of elements (elements.c).
 */
#define BLOOMIDX_EQUAL_STRATEGY		1	/* = */
#define BLOOMIDX_CONTAINS_STRATEGY	2	/* @> */
#define BLOOMIDX_OVERLAP_STRATEGY	3	/* && */
#define BLOOMIDX_LIKE_STRATEGY		4	/* ~~ */
#define BLOOMIDX_ILIKE_STRATEGY		5	/* ~~* */
#define BLOOMIDX_NSTRATEGIES		5
#define BLOOMIDX_HASH_PROC			1	/* int8 hash(type, int8) */
#define BLOOMIDX_EXTRACT_PROC		2	/* optional: a value's elements */
#define BLOOMIDX_EXTRACT_QUERY_PROC	3	/* optional: a key's elements */
#define BLOOMIDX_OPTIONS_PROC		4	/* optional: the class's options */
#define BLOOMIDX_NPROC				4

/*
 * The options of an operator class whose values are sets (its support
 * function 4 parses them): the elements a value has and a query tests, for
 * sizing the signature (options.c).
 */
typedef struct BloomSetOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			elements;
	int			queryElements;
} BloomSetOptions;

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
	int			layout;			/* a layout (page.h), or 0 */
	int			summaries;		/* BLOOMIDX_SUMMARIES_ON or _OFF, or 0 */
} BloomOptions;

/* Values of the summaries option (0: not given) */
#define BLOOMIDX_SUMMARIES_ON		1
#define BLOOMIDX_SUMMARIES_OFF		2

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
	int			layout;			/* its layout (page.h, layout.h) */
	uint32		setColumns;		/* bit i: column i's values are sets */
	bool		legacyFold;		/* format 2: text_trgm_ops folded case with
								 * lower() (opclass_trgm.c) */
	bool		summaries;		/* format 4: the sliced layout keeps stripe
								 * summaries of the equality columns */

	/*
	 * Columns of sets: the elements a value has and a query tests that the
	 * shape was sized for, each the operator class's option or, for
	 * elements left out, measured from the table when the index was built
	 * (bit i of measuredColumns); recorded in the metapage, 0 where not (a
	 * column of equality, or an index built before they were recorded).
	 */
	int			elements[BLOOMIDX_MAX_COLUMNS];
	int			queryElements[BLOOMIDX_MAX_COLUMNS];
	uint32		measuredColumns;

	/*
	 * With measured columns, how much more a row loads its signature, for
	 * the false-positive rate, than the mean row of the sample does: rows
	 * of sets of spread sizes fail more often than rows of the mean size
	 * would (BloomSizeMeasuredElements); 0 where not recorded (taken as 1).
	 */
	float4		loadFactor;

	/*
	 * Not on disk: the bits a typical query of each column tests (k, or k
	 * times queryElements for a column of sets; BloomShapeSetQueryBits),
	 * and while a shape is derived, the bits a typical row sets (0: the
	 * sum of the k)
	 */
	int			queryBits[BLOOMIDX_MAX_COLUMNS];
	double		rowBits;
} BloomShape;

/*
 * Bytes of the keys after each signature in a slot of a data page: in
 * format 4 (page.h) one 32-bit key per column of an equality operator
 * class (a column of sets has none), else none
 */
static inline int
BloomShapeKeyBytes(const BloomShape *shape)
{
	int			nkeys = 0;
	int			i;

	if (!shape->summaries)
		return 0;
	for (i = 0; i < shape->nColumns; i++)
		if ((shape->setColumns & (1U << i)) == 0)
			nkeys++;
	return (int) sizeof(uint32) * nkeys;
}

/*
 * Bytes of a slot of a data page: the signature, then the keys (page.h)
 */
static inline int
BloomShapeSlotBytes(const BloomShape *shape)
{
	return shape->sigBytes + BloomShapeKeyBytes(shape);
}

/*
 * Bounds of the bits a signature of this shape has set: each column sets
 * its k bits, a column of sets k bits per element (any number, none for an
 * empty set).
 */
static inline int
BloomShapeMinBitsSet(const BloomShape *shape)
{
	return shape->setColumns != 0 ? 0 : 1;
}

static inline int
BloomShapeMaxBitsSet(const BloomShape *shape)
{
	int			total = 0;
	int			i;

	if (shape->setColumns != 0)
		return shape->sigBits;
	for (i = 0; i < shape->nColumns; i++)
		total += shape->bitsPerColumn[i];
	return Min(total, shape->sigBits);
}

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
	FmgrInfo	extractFn[BLOOMIDX_MAX_COLUMNS];	/* fn_oid 0 if none */
	FmgrInfo	extractQueryFn[BLOOMIDX_MAX_COLUMNS];	/* fn_oid 0 if none */
	bool		hasSets;		/* a column has an extract function */
	bool		layoutChecked;	/* the layout's metapage fields were checked
								 * (BloomGetStateLayout) */
	Oid			collations[BLOOMIDX_MAX_COLUMNS];
	uint8		hashKind[BLOOMIDX_MAX_COLUMNS];	/* BloomHashKind of hashFn */
	BlockNumber knownBlocks;	/* a length the index had (BloomBlocksCovering) */
	BloomRecentBuffer *recent;	/* by block number modulo a power of two, or
								 * NULL: see BloomReadBufferRecent */
	uint32		recentMask;		/* that power of two, minus 1 */
} BloomStateData;

typedef BloomStateData *BloomState;

/*
 * How a column's values are hashed (BloomStateData.hashKind): through the
 * hash support function's fmgr call, or, when that function is one of
 * PostgreSQL's integer hashes, by what it computes, called directly.
 */
typedef enum BloomHashKind
{
	BLOOM_HASH_FMGR = 0,
	BLOOM_HASH_INT2,			/* hashint2extended */
	BLOOM_HASH_INT4,			/* hashint4extended (int4, date) */
	BLOOM_HASH_INT8,			/* hashint8extended */
	BLOOM_HASH_OID				/* hashoidextended */
} BloomHashKind;

/*
 * Where an operator class's extract functions put a value's or a key's
 * elements (elements.c): BloomAddElement for each element's hash.  A
 * query's extraction says first whether a match has all of them or any.
 */
typedef enum BloomElementMode
{
	BLOOM_ELEMENTS_ALL,
	BLOOM_ELEMENTS_ANY
} BloomElementMode;

typedef struct BloomElementSink BloomElementSink;

struct BloomElementSink
{
	void		(*add) (BloomElementSink *sink, uint64 hash);
	BloomElementMode mode;
	int64		nelements;		/* elements added so far */
	bool		legacyFold;		/* the index is of format 2 (page.h): an
								 * operator class extracts as it did then */
};

static inline void
BloomAddElement(BloomElementSink *sink, uint64 hash)
{
	sink->add(sink, hash);
	sink->nelements++;
}

/*
 * How a column's values and queries count for the shape: a value of an
 * equality operator class is one element, and a query tests one; a set
 * operator class's options (BloomSetOptions) say how many elements a value
 * has and a query tests, the elements of a column that leaves the option
 * out being measured when the index is built (BloomMeasureElements).
 */
typedef struct BloomColumnElements
{
	double		elements[BLOOMIDX_MAX_COLUMNS];
	double		queryElements[BLOOMIDX_MAX_COLUMNS];
	uint32		setColumns;		/* bit i: column i has an extract function */
	uint32		givenColumns;	/* bit i: its elements option is given */
	uint32		measuredColumns;	/* bit i: its elements were measured */
} BloomColumnElements;

/*
 * The elements per value of an index's columns of sets in a sample of its
 * table (BloomMeasureElements): the mean over the non-NULL values of each
 * column sampled (0 if none has an element), what the sample read, and
 * each sampled row's elements in each column measured (0 for NULL), the
 * first BLOOM_SAMPLE_MAX_COUNTS rows, for sizing the signature from how
 * the rows' sizes spread (BloomSizeMeasuredElements)
 */
typedef struct BloomElementsSample
{
	double		mean[BLOOMIDX_MAX_COLUMNS];
	int64		values[BLOOMIDX_MAX_COLUMNS];	/* non-NULL values sampled */
	int64		rows;			/* index rows sampled */
	BlockNumber blocks;			/* table blocks read */
	uint32	   *counts[BLOOMIDX_MAX_COLUMNS];	/* [nCounts], NULL if not
												 * measured */
	int			nCounts;		/* rows in counts[] */
} BloomElementsSample;

/* Masks of a query key, within work_mem (elements.c) */
typedef struct BloomMaskList
{
	Relation	index;			/* for messages */
	Size		priorBytes;		/* taken by the query's other keys */
	int			sigWords;
	int			nmasks;
	int			maxmasks;
	uint64	   *masks;			/* maxmasks * sigWords words */
} BloomMaskList;

/*
 * The hashes of a key on a column of an equality operator class, as its
 * signature bits are made from (NULL: BLOOM_NULL_HASH): a match has one of
 * them, for a layout that summarizes the columns' values.
 */
typedef struct BloomKeyHashes
{
	int			col;
	int			nhashes;
	uint64	   *hashes;
} BloomKeyHashes;

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
	int			nkeyhashes;		/* keys on equality columns, for summaries */
	BloomKeyHashes *keyhashes;
	BlockNumber heapBlocks;		/* the table's length when last read, 0 at
								 * first (see BloomCheckScanTids) */
} BloomScanOpaqueData;

typedef BloomScanOpaqueData *BloomScanOpaque;


/* options.c */
extern void BloomInitOptions(void);
extern bytea *bloomidx_options(Datum reloptions, bool validate);
extern void BloomResolveOptions(Relation index, int unsetLayout,
								const BloomColumnElements *ce,
								BloomShape *shape);
extern void BloomResolveSignature(Relation index, int unsetLayout,
								  const BloomColumnElements *ce,
								  bool approximate, BloomShape *shape);
extern void BloomReportOptions(Relation index, const BloomShape *shape);

/* am_build.c */
extern IndexBuildResult *bloomidx_build(Relation heap, Relation index,
										struct IndexInfo *indexInfo);
extern void bloomidx_buildempty(Relation index);
extern char *bloomidx_buildphasename(int64 phasenum);

/* am_sample.c */
extern void BloomMeasureElements(Relation heap, Relation index,
								 struct IndexInfo *indexInfo, uint32 columns,
								 BloomElementsSample *sample);
extern void BloomSizeMeasuredElements(Relation index,
									  const BloomElementsSample *sample,
									  uint32 measure, BloomColumnElements *ce,
									  double *loadFactor);

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
extern double BloomShapeEffectiveFill(const BloomShape *shape, double fill);
extern double BloomClauseFpr(const BloomShape *shape, double fill, int col,
							 double nvalues);
extern double BloomEqualityFpr(const BloomShape *shape, double fill, int ncols,
							   const int *cols);

/* validate.c */
extern bool bloomidx_validate(Oid opclassoid);

/* opclass_trgm.c */
extern void BloomTrgmCheckBuild(Relation index);
extern void BloomTrgmReportLegacyFold(Relation index, bool oncePerBackend);

/* elements.c */
extern bool BloomInitOptionalProcs(Relation index, int nColumns,
								   uint16 procnum, FmgrInfo *fns);
extern void BloomValueElements(BloomState state, int col, Datum value,
							   bool isnull, BloomElementSink *sink);
extern int64 BloomValueMask(BloomState state, int col, Datum value,
							bool isnull, uint64 *mask);
extern void BloomKeyElements(BloomState state, int col, FmgrInfo *hashFn,
							 int strategy, Datum value, BloomElementSink *sink);
extern int64 BloomKeyMask(BloomState state, int col, FmgrInfo *hashFn,
						  int strategy, Datum value, uint64 *mask,
						  BloomElementMode *mode);
extern void BloomSetOptionsInit(local_relopts *relopts, int elements,
								int queryElements);
extern void BloomGetColumnElements(Relation index, int n,
								   BloomColumnElements *ce);
extern void BloomGetBuiltColumnElements(Relation index,
										const BloomShape *built,
										BloomColumnElements *ce);
extern void BloomShapeFillQueryElements(Relation index, BloomShape *shape);
extern int64 BloomCountElements(FmgrInfo *extractFn, Oid collation,
								Datum value);
extern void BloomInitMaskList(BloomMaskList *list, Relation index,
							  const BloomShape *shape);
extern void BloomMaskListReserve(BloomMaskList *list, int n);
extern bool BloomKeyAlternatives(BloomState state, int col, FmgrInfo *hashFn,
								 int strategy, const Datum *values,
								 int nvalues, BloomMaskList *list);

/* state.c */
extern BloomState BloomGetState(Relation index);
extern Buffer BloomReadBufferRecent(Relation index, BlockNumber blkno,
									BufferAccessStrategy bas);
extern BufferAccessStrategy BloomScanStrategy(double pages);
extern FmgrInfo *BloomKeyHashFunction(Relation index, BloomState state,
									  int col, Oid keytype, FmgrInfo *flinfo,
									  bool missing_ok);
extern void BloomInitState(BloomState state, Relation index,
						   const BloomShape *shape);
extern void BloomCheckIndexRelation(Relation rel);
extern Relation BloomOpenIndexRelation(Oid relid, LOCKMODE lockmode,
									   bool mustBeIndex);
extern int	BloomFormSignatureWords(BloomState state, Datum *values,
									bool *isnull, uint64 *words);
extern int	BloomFormSignatureWordsMixed(BloomState state, Datum *values,
										 bool *isnull, uint64 *words,
										 uint64 *mixed);
extern int	BloomFormSignature(BloomState state, Datum *values, bool *isnull,
							   uint8 *sig);
extern int	BloomFormSignatureMixed(BloomState state, Datum *values,
									bool *isnull, uint8 *sig, uint64 *mixed);

#endif							/* BLOOMIDX_H */
