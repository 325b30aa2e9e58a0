/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The one place that picks the routines of an index's layout.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "layout.h"
#include "page.h"

/*
 * The routines of the layout frozen in an index's shape (its metapage).
 */
const BloomLayoutRoutine *
BloomGetLayout(const BloomShape *shape)
{
	switch (shape->layout)
	{
		case BLOOMIDX_LAYOUT_ROW:
			return &BloomRowLayout;
		case BLOOMIDX_LAYOUT_SLICED:
			return &BloomSlicedLayout;
	}
	elog(ERROR, "unrecognized bloomidx layout %d", shape->layout);
	return NULL;				/* keep compiler quiet */
}
