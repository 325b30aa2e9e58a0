/*-------------------------------------------------------------------------
 *
 * am_vacuum.c
 *	  VACUUM of a bloomidx index (ambulkdelete, amvacuumcleanup) and
 *	  bloomidx_merge(), handed to the index's layout.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "utils/acl.h"
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

	return BloomGetLayout(&state->shape)->bulkdelete(info, stats, callback,
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
	stats = BloomGetLayout(&state->shape)->vacuumcleanup(info, stats);
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
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

	index = relation_open(indexoid, RowExclusiveLock);
	BloomCheckIndexRelation(index);
	/* Like VACUUM, this is for the owner */
	if (!pg_class_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX,
					   RelationGetRelationName(index));

	layout = BloomGetLayout(&BloomGetState(index)->shape);
	if (layout->merge == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" uses the %s layout, which has nothing to merge",
						RelationGetRelationName(index), layout->name),
				 errhint("bloomidx_merge() is for indexes built WITH (layout = sliced).")));

	merged = layout->merge(index, true);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT64(merged);
}
