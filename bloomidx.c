/*-------------------------------------------------------------------------
 *
 * bloomidx.c
 *	  Front door of the bloomidx extension: module magic, module load and
 *	  the access method handler.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "commands/vacuum.h"

#include "bloomidx.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

PG_FUNCTION_INFO_V1(bloomidx_handler);

/*
 * Module load: register the index options; install the hooks that write
 * the rows inserts gather (src/sliced_batch.c).
 */
void
_PG_init(void)
{
	BloomInitOptions();
	BloomBatchInit();
}

/*
 * Handler of the access method: tells the core what bloomidx can do and
 * where its callbacks are.
 */
Datum
bloomidx_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BLOOMIDX_NSTRATEGIES;
	amroutine->amsupport = BLOOMIDX_NPROC;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = bloomidx_build;
	amroutine->ambuildempty = bloomidx_buildempty;
	amroutine->aminsert = bloomidx_insert;
	amroutine->ambulkdelete = bloomidx_bulkdelete;
	amroutine->amvacuumcleanup = bloomidx_vacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = bloomidx_costestimate;
	amroutine->amoptions = bloomidx_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = bloomidx_buildphasename;
	amroutine->amvalidate = bloomidx_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = bloomidx_beginscan;
	amroutine->amrescan = bloomidx_rescan;
	amroutine->amgettuple = NULL;
	amroutine->amgetbitmap = bloomidx_getbitmap;
	amroutine->amendscan = bloomidx_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
