/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What changed between PostgreSQL 15 and 19 that bloomidx uses, in one
 *	  place.
 *
 * The code is written for the newest major; for each change this header
 * gives the older majors the newer spelling (a macro or a small inline,
 * the major that made the change in its comment), so no other file tests
 * PG_VERSION_NUM.  Include it after postgres.h; bloomidx.h and filter.h
 * do.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_COMPAT_H
#define BLOOMIDX_COMPAT_H

#include "access/amapi.h"
#include "access/tableam.h"
#include "commands/vacuum.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "fmgr.h"
#include "optimizer/optimizer.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

/*
 * 16: the functions SQL calls and the module's entry points are exported,
 * everything else hidden (the Makefile passes -fvisibility=hidden on every
 * major).  PostgreSQL 16 marks PGDLLEXPORT and PG_FUNCTION_INFO_V1's
 * functions visible itself; on 15 PGDLLEXPORT is empty outside Windows, so
 * both are defined here as 16 defines them.  A backend loads modules with
 * RTLD_GLOBAL: an exported helper such as BloomNewBuffer, which
 * contrib/bloom exports too, could otherwise bind to another module's
 * function.
 */
#if PG_VERSION_NUM < 160000 && !defined(WIN32) && defined(__GNUC__)
#undef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))

#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable
#endif

/* 16: the varlena macros moved from postgres.h to varatt.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 16: RelFileNode became RelFileLocator (rd_node became rd_locator) */
#if PG_VERSION_NUM >= 160000
#define BloomRelationLocator(rel)	((rel)->rd_locator)
#else
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)	RelFileNodeEquals(a, b)
#define BloomRelationLocator(rel)	((rel)->rd_node)
#endif

/* 16: pg_class_ownercheck() became object_ownercheck(RelationRelationId, ...) */
#if PG_VERSION_NUM < 160000
#define object_ownercheck(classid, objectid, roleid) \
	(AssertMacro((classid) == RelationRelationId), \
	 pg_class_ownercheck((objectid), (roleid)))
#endif

/* 17: estimate_array_length() takes the planner's root and returns double */
#if PG_VERSION_NUM < 170000
#define estimate_array_length(root, arrayexpr) \
	((double) estimate_array_length(arrayexpr))
#endif

/* 18: vacuum_delay_point() says whether ANALYZE calls it */
#if PG_VERSION_NUM < 180000
#define vacuum_delay_point(is_analyze)	vacuum_delay_point()
#endif

/*
 * 18: pg_attribute_noreturn(), after a declaration, gave way to
 * pg_noreturn, before it
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 19: table_beginscan_parallel() takes the scan's option flags */
#if PG_VERSION_NUM < 190000
#define table_beginscan_parallel(rel, pscan, flags) \
	table_beginscan_parallel(rel, pscan)
#endif

/*
 * 18: EXPLAIN ANALYZE shows how many times a scan searched the index
 * ("Index Searches"), which the access method counts
 */
#if PG_VERSION_NUM >= 180000
#define BloomCountIndexSearch(scan) \
	do { \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define BloomCountIndexSearch(scan)	((void) 0)
#endif

/*
 * 17: read streams (read_stream.h) read the blocks a callback names ahead
 * of their use, in larger reads (and, from 18 on, asynchronous ones).
 * Before 17, the same calls read one block at a time, as a loop of
 * ReadBufferExtended would, and hint the blocks the callback names next
 * to the kernel with PrefetchBuffer (posix_fadvise), as many ahead as the
 * tablespace's effective_io_concurrency (maintenance_io_concurrency for
 * READ_STREAM_MAINTENANCE) allows; not a block that follows the one before
 * it, which the kernel reads ahead by itself.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#else
#include "pgstat.h"
#include "utils/spccache.h"

#define READ_STREAM_DEFAULT			0x00
#define READ_STREAM_MAINTENANCE		0x01
#define READ_STREAM_FULL			0x04

/* Blocks a stream hints ahead at most, less one */
#define BLOOM_STREAM_AHEAD			64

typedef struct ReadStream ReadStream;
typedef BlockNumber (*ReadStreamBlockNumberCB) (ReadStream *stream,
												void *callback_private_data,
												void *per_buffer_data);
struct ReadStream
{
	Relation	rel;
	ForkNumber	forknum;
	BufferAccessStrategy strategy;
	ReadStreamBlockNumberCB callback;
	void	   *callback_private_data;
	int			maxAhead;		/* blocks hinted ahead at most */
	int			first;			/* oldest block taken and not yet read */
	int			ntaken;			/* blocks taken and not yet read */
	bool		ended;			/* the callback said no more */
	BlockNumber lastTaken;
	BlockNumber blocks[BLOOM_STREAM_AHEAD];
	Buffer		recent[BLOOM_STREAM_AHEAD]; /* where a hint found it */
};

static inline ReadStream *
read_stream_begin_relation(int flags, BufferAccessStrategy strategy,
						   Relation rel, ForkNumber forknum,
						   ReadStreamBlockNumberCB callback,
						   void *callback_private_data,
						   size_t per_buffer_data_size)
{
	ReadStream *stream = palloc(sizeof(ReadStream));
	Oid			spc = rel->rd_rel->reltablespace;
	int			ios;

	Assert(per_buffer_data_size == 0);
	stream->rel = rel;
	stream->forknum = forknum;
	stream->strategy = strategy;
	stream->callback = callback;
	stream->callback_private_data = callback_private_data;
	ios = (flags & READ_STREAM_MAINTENANCE) ?
		get_tablespace_maintenance_io_concurrency(spc) :
		get_tablespace_io_concurrency(spc);
	stream->maxAhead = Min(ios, BLOOM_STREAM_AHEAD - 1);
	stream->first = 0;
	stream->ntaken = 0;
	stream->ended = false;
	stream->lastTaken = InvalidBlockNumber;
	return stream;
}

static inline Buffer
read_stream_next_buffer(ReadStream *stream, void **per_buffer_data)
{
	BlockNumber blkno;
	Buffer		recent;

	/* Take blocks from the callback, hinting those after the next */
	while (!stream->ended && stream->ntaken <= stream->maxAhead)
	{
		int			i = (stream->first + stream->ntaken) % BLOOM_STREAM_AHEAD;

		blkno = stream->callback(stream, stream->callback_private_data, NULL);
		if (blkno == InvalidBlockNumber)
		{
			stream->ended = true;
			break;
		}
		stream->blocks[i] = blkno;
		stream->recent[i] = InvalidBuffer;
		if (stream->ntaken > 0 && blkno != stream->lastTaken + 1)
			stream->recent[i] = PrefetchBuffer(stream->rel, stream->forknum,
											   blkno).recent_buffer;
		stream->lastTaken = blkno;
		stream->ntaken++;
	}
	if (stream->ntaken == 0)
		return InvalidBuffer;

	blkno = stream->blocks[stream->first];
	recent = stream->recent[stream->first];
	stream->first = (stream->first + 1) % BLOOM_STREAM_AHEAD;
	stream->ntaken--;
	if (BufferIsValid(recent) && !RelationUsesLocalBuffers(stream->rel) &&
		ReadRecentBuffer(BloomRelationLocator(stream->rel), stream->forknum,
						 blkno, recent))
	{
		/* Counted as ReadBufferExtended counts a hit */
		pgstat_count_buffer_read(stream->rel);
		pgstat_count_buffer_hit(stream->rel);
		return recent;
	}
	return ReadBufferExtended(stream->rel, stream->forknum, blkno, RBM_NORMAL,
							  stream->strategy);
}

static inline void
read_stream_end(ReadStream *stream)
{
	pfree(stream);
}
#endif

/*
 * Fields of IndexAmRoutine that later majors added, for the handler's
 * static routine table: each macro keeps its fields on the majors that
 * have them.
 *
 * 17: amcanbuildparallel (index_build plans workers only for an access
 * method that sets it), aminsertcleanup (called once the executor is done
 * inserting into an index).
 */
#if PG_VERSION_NUM >= 170000
#define BLOOM_AMROUTINE_SINCE_17(...)	__VA_ARGS__
#define BLOOM_HAVE_AMINSERTCLEANUP	true
#else
#define BLOOM_AMROUTINE_SINCE_17(...)
#define BLOOM_HAVE_AMINSERTCLEANUP	false
#endif

/*
 * 19: the handler returns a routine table the core does not free, so a
 * static one; before, the relcache copied it and pfree'd what the handler
 * returned, so it gets a palloc'd copy.
 */
static inline Datum
BloomReturnAmRoutine(const IndexAmRoutine *routine)
{
#if PG_VERSION_NUM >= 190000
	return PointerGetDatum(routine);
#else
	IndexAmRoutine *copy = palloc(sizeof(IndexAmRoutine));

	memcpy(copy, routine, sizeof(IndexAmRoutine));
	return PointerGetDatum(copy);
#endif
}

/*
 * Workers a build of index gets.  17: index_build plans them (for an
 * access method with amcanbuildparallel) into indexInfo; before, the
 * access method planned them as B-trees did.
 */
static inline int
BloomBuildWorkers(Relation heap, Relation index, IndexInfo *indexInfo)
{
#if PG_VERSION_NUM >= 170000
	return indexInfo->ii_ParallelWorkers;
#else
	return plan_create_index_workers(RelationGetRelid(heap),
									 RelationGetRelid(index));
#endif
}

#endif							/* BLOOMIDX_COMPAT_H */
