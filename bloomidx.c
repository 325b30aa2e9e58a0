/*-------------------------------------------------------------------------
 *
 * bloomidx.c
 *	  Front door of the bloomidx extension: module magic, module load and
 *	  the access method handler.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  bloomidx.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "commands/vacuum.h"

#include "bloomidx.h"
#include "layout.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

PG_FUNCTION_INFO_V1(bloomidx_handler);

/*
 * Module load: register the index options, then each layout's settings and
 * hooks (src/core/layout.c).
 */
void
_PG_init(void)
{
	BloomInitOptions();
	BloomInitLayouts();
}

/*
 * What bloomidx can do and where its callbacks are: the routine table the
 * handler returns.
 */
static const IndexAmRoutine bloomidx_routine = {
	.type = T_IndexAmRoutine,
	.amstrategies = BLOOMIDX_NSTRATEGIES,
	.amsupport = BLOOMIDX_NPROC,
	.amoptsprocnum = BLOOMIDX_OPTIONS_PROC,
	.amcanorder = false,
	.amcanorderbyop = false,
	.amcanbackward = false,
	.amcanunique = false,
	.amcanmulticol = true,
	.amoptionalkey = true,
	.amsearcharray = true,
	.amsearchnulls = true,
	.amstorage = false,
	.amclusterable = false,
	.ampredlocks = false,
	.amcanparallel = false,
	.amcaninclude = false,
	.amusemaintenanceworkmem = false,
	.amparallelvacuumoptions =
	VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP,
	.amkeytype = InvalidOid,
	BLOOM_AMROUTINE_SINCE_17(.amcanbuildparallel = true,
							 .aminsertcleanup = bloomidx_insertcleanup,)

	.ambuild = bloomidx_build,
	.ambuildempty = bloomidx_buildempty,
	.aminsert = bloomidx_insert,
	.ambulkdelete = bloomidx_bulkdelete,
	.amvacuumcleanup = bloomidx_vacuumcleanup,
	.amcanreturn = NULL,
	.amcostestimate = bloomidx_costestimate,
	.amoptions = bloomidx_options,
	.amproperty = NULL,
	.ambuildphasename = bloomidx_buildphasename,
	.amvalidate = bloomidx_validate,
	.amadjustmembers = NULL,
	.ambeginscan = bloomidx_beginscan,
	.amrescan = bloomidx_rescan,
	.amgettuple = NULL,
	.amgetbitmap = bloomidx_getbitmap,
	.amendscan = bloomidx_endscan,
	.ammarkpos = NULL,
	.amrestrpos = NULL,
	.amestimateparallelscan = NULL,
	.aminitparallelscan = NULL,
	.amparallelrescan = NULL,
};

/*
 * Handler of the access method.
 */
Datum
bloomidx_handler(PG_FUNCTION_ARGS)
{
	return BloomReturnAmRoutine(&bloomidx_routine);
}
