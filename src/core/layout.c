/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The one place that knows the layouts: it maps an index's layout to
 *	  the layout's routines, and names the layouts for the layout option.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/memutils.h"

#include "layout.h"
#include "page.h"

/*
 * Every layout: each one's routine table (defined in its folder,
 * src/layout/NAME/), and its entry.  The layouts are numbered 1 .. the
 * table's length, in the table's order.
 */
extern const BloomLayoutRoutine BloomRowLayout;
extern const BloomLayoutRoutine BloomSlicedLayout;
#ifdef BLOOMIDX_TEST_LAYOUT
extern const BloomLayoutRoutine BloomTestLayout;
#endif

static const BloomLayoutRoutine *const BloomLayouts[] = {
	&BloomRowLayout,
	&BloomSlicedLayout,
#ifdef BLOOMIDX_TEST_LAYOUT
	&BloomTestLayout,
#endif
};

/*
 * Values of the layout option (options.c), from the table: filled on the
 * first call, which registers the option at module load.
 */
relopt_enum_elt_def *
BloomLayoutOptionValues(void)
{
	static relopt_enum_elt_def values[lengthof(BloomLayouts) + 1];
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
	{
		values[i].string_val = BloomLayouts[i]->name;
		values[i].symbol_val = BloomLayouts[i]->id;
	}
	values[i].string_val = NULL;
	return values;
}

/*
 * The option's detail message for a value that is none of these: Valid
 * values are "a", "b" and "c".
 */
const char *
BloomLayoutValuesMessage(void)
{
	static char *message = NULL;

	if (message == NULL)
	{
		StringInfoData buf;
		int			i;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "Valid values are ");
		for (i = 0; i < lengthof(BloomLayouts); i++)
			appendStringInfo(&buf, "%s\"%s\"",
							 i == 0 ? "" : i == lengthof(BloomLayouts) - 1 ? " and " : ", ",
							 BloomLayouts[i]->name);
		appendStringInfoChar(&buf, '.');
		message = MemoryContextStrdup(TopMemoryContext, buf.data);
		pfree(buf.data);
	}
	return message;
}

/* How many layouts there are, and each in the table's order */
int
BloomNumLayouts(void)
{
	return lengthof(BloomLayouts);
}

/* The highest layout number: the metapage of an index names 1 to this */
int
BloomMaxLayoutId(void)
{
	return lengthof(BloomLayouts);
}

const BloomLayoutRoutine *
BloomLayoutByIndex(int i)
{
	Assert(i >= 0 && i < lengthof(BloomLayouts));
	return BloomLayouts[i];
}

/*
 * The routines of a layout, by the number the metapage and the options
 * record.
 */
const BloomLayoutRoutine *
BloomLayoutById(int layout)
{
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (BloomLayouts[i]->id == layout)
			return BloomLayouts[i];
	elog(ERROR, "unrecognized bloomidx layout %d", layout);
	return NULL;				/* keep compiler quiet */
}

/*
 * The layout a signature of sigBits bits falls back to when the one asked
 * for cannot take it: the first of the table that can (NULL: none).
 */
const BloomLayoutRoutine *
BloomLayoutForLength(int sigBits)
{
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (sigBits <= BloomLayouts[i]->maxSigBits)
			return BloomLayouts[i];
	return NULL;
}

/*
 * The routines of the layout frozen in an index's shape (its metapage).
 */
const BloomLayoutRoutine *
BloomGetLayout(const BloomShape *shape)
{
	return BloomLayoutById(shape->layout);
}

/*
 * Module load: each layout registers its settings and hooks.
 */
void
BloomInitLayouts(void)
{
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
	{
		if (BloomLayouts[i]->id != i + 1)
			elog(ERROR, "bloomidx layout \"%s\" is number %d, not %d, in the table",
				 BloomLayouts[i]->name, BloomLayouts[i]->id, i + 1);
		if (BloomLayouts[i]->init != NULL)
			BloomLayouts[i]->init();
	}
}

/*
 * Set every layout's fields of a new metapage (BloomInitMetaPage zeroed
 * them): every index has them all, whatever its layout.
 */
void
BloomInitMetaAreas(struct BloomMetaPageData *meta)
{
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (BloomLayouts[i]->metainit != NULL)
			BloomLayouts[i]->metainit(meta);
}

/*
 * Describe what is wrong with a layout's range of the metapage's layouts'
 * area, checking every layout's, or return NULL; raise *needBlocks to one
 * past the highest block they list.
 */
char *
BloomMetaAreasProblem(struct BloomMetaPageData *meta, BlockNumber *needBlocks)
{
	char	   *problem;
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (BloomLayouts[i]->metaareaproblem != NULL &&
			(problem = BloomLayouts[i]->metaareaproblem(meta, needBlocks)) != NULL)
			return problem;
	return NULL;
}

/*
 * Describe a block listed in a layout's range of the metapage past the
 * index's length nblocks, or return NULL.
 */
char *
BloomMetaAreasBlocksProblem(struct BloomMetaPageData *meta, BlockNumber nblocks)
{
	char	   *problem;
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (BloomLayouts[i]->metaareablocksproblem != NULL &&
			(problem = BloomLayouts[i]->metaareablocksproblem(meta, nblocks)) != NULL)
			return problem;
	return NULL;
}

/*
 * Write out the rows of the index that any layout gathered in this backend
 * and has not yet written to the index's pages.  Needs no metapage read: a
 * layout that gathered nothing for the index returns at once.
 */
void
BloomFlushGathered(Relation index)
{
	int			i;

	for (i = 0; i < lengthof(BloomLayouts); i++)
		if (BloomLayouts[i]->flush != NULL)
			BloomLayouts[i]->flush(index);
}
