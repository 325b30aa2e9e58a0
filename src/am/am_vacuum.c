/*-------------------------------------------------------------------------
 *
 * am_vacuum.c
 *	  VACUUM of a bloomidx index (ambulkdelete, amvacuumcleanup) and
 *	  bloomidx_merge(), handed to the index's layout.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/am_vacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/objectaddress.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"

PG_FUNCTION_INFO_V1(bloomidx_merge);

/*
 * Remove the signatures of dead rows (ambulkdelete).
 */
IndexBulkDeleteResult *
bloomidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	BloomState	state = BloomGetState(info->index);

	BloomFlushGathered(info->index);
	return BloomGetStateLayout(info->index, state)->bulkdelete(info, stats, callback,
													 callback_state);
}

/*
 * Count pages and tuples, and recycle free pages (amvacuumcleanup).
 */
IndexBulkDeleteResult *
bloomidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	BloomState	state;

	if (info->analyze_only)
		return stats;

	state = BloomGetState(info->index);
	BloomFlushGathered(info->index);
	stats = BloomGetStateLayout(info->index, state)->vacuumcleanup(info, stats);
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
}

/*
 * Refuse a caller who owns neither the index's table nor, for a relation
 * that is no index, the relation itself.
 */
static void
BloomCheckOwner(Oid relid)
{
	Oid			heapoid = IndexGetRelation(relid, true);
	Oid			owned = OidIsValid(heapoid) ? heapoid : relid;
	char	   *name = get_rel_name(relid);

	/* Before the check, which on 16 and later fails on no relation as XX000 */
	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!object_ownercheck(RelationRelationId, owned, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER,
					   get_relkind_objtype(get_rel_relkind(relid)), name);
}

/*
 * bloomidx_merge(index regclass): merge the pending rows of a sliced
 * index into its slices now; returns the number of rows merged.
 */
Datum
bloomidx_merge(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	const BloomLayoutRoutine *layout;
	int64		merged;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("bloomidx_merge() cannot be run during recovery.")));

	/*
	 * Like VACUUM and REINDEX, this is for the table's owner; checked
	 * before the lock, as they do, so that a refused caller does not queue
	 * behind DDL.  The syscache needs no lock; an OID that is no relation
	 * fails here, one that is no index below.
	 */
	BloomCheckOwner(indexoid);
	index = BloomOpenIndexRelation(indexoid, RowExclusiveLock, false);
	BloomCheckIndexRelation(index);
	/* Under the lock, for an index dropped and its OID reused meanwhile */
	BloomCheckOwner(indexoid);

	BloomFlushGathered(index);
	layout = BloomGetStateLayout(index, BloomGetState(index));
	if (layout->merge == NULL)
	{
		/* The hint names the layouts that merge */
		StringInfoData merging;
		int			i;

		initStringInfo(&merging);
		for (i = 0; i < BloomNumLayouts(); i++)
			if (BloomLayoutByIndex(i)->merge != NULL)
				appendStringInfo(&merging, "%sWITH (layout = %s)",
								 merging.len > 0 ? " or " : "",
								 BloomLayoutByIndex(i)->name);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" uses the %s layout, which has nothing to merge",
						RelationGetRelationName(index), layout->name),
				 errhint("bloomidx_merge() is for indexes built %s.", merging.data)));
	}

	merged = layout->merge(index, true);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT64(merged);
}
