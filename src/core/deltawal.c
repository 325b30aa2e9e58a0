/*-------------------------------------------------------------------------
 *
 * deltawal.c
 *	  Generic WAL records whose changed bytes the caller marks, for pages
 *	  where a few known places change.
 *
 * GenericXLogFinish finds a page's changes by comparing every used byte
 * before and after, one byte at a time: for a merge, which changes a few
 * words of each of a hundred slice and summary pages, that comparison was
 * half of an insert's time.  A BloomDeltaXLog record is written in the
 * generic WAL record format (RM_GENERIC_ID, replayed by generic_redo, so
 * replicas and crash recovery need nothing of bloomidx), from the bytes
 * the caller marks as it changes the page image: the caller must mark
 * every byte it changes outside the hole between pd_lower and pd_upper
 * (which is zeroed, as GenericXLogFinish does).  A build with assertions
 * (or -DBLOOMIDX_CHECK_DELTA_WAL) compares the pages and fails if a change
 * was not marked.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/deltawal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "page.h"

#if defined(USE_ASSERT_CHECKING) && !defined(BLOOMIDX_CHECK_DELTA_WAL)
#define BLOOMIDX_CHECK_DELTA_WAL
#endif

/* A byte of a page is a bit of its changed map: bytes a word of it */
#define DELTA_BYTES_PER_WORD	64

/* A fragment's header: its offset and length */
#define DELTA_FRAGMENT_HEADER	((int) (2 * sizeof(OffsetNumber)))

/*
 * Unmarked bytes between two runs of marked ones that make them two
 * fragments, at least: fewer are logged with them.  Twice a header: a
 * summary key changes a byte in each of a block's words it changes, and
 * copying many tiny fragments took more time than the bytes they saved
 * (on an insert of six random columns, 3% more WAL and 3% less CPU than
 * generic WAL's gap, a header).
 */
#ifndef DELTA_MERGE_GAP
#define DELTA_MERGE_GAP		(2 * DELTA_FRAGMENT_HEADER)
#endif

/*
 * A page's delta at most: fragments are separated by at least
 * DELTA_MERGE_GAP unmarked bytes (see BloomDeltaXLogFinish), and the hole
 * may split one
 */
#define DELTA_MAX_BYTES \
	(BLCKSZ + (BLCKSZ / (DELTA_MERGE_GAP + 1) + 2) * DELTA_FRAGMENT_HEADER)

typedef struct BloomDeltaPage
{
	Buffer		buffer;
	bool		full;			/* logged whole (BloomDeltaXLogRegisterNew) */
	uint64		changed[BLCKSZ / DELTA_BYTES_PER_WORD]; /* bytes marked */
} BloomDeltaPage;

struct BloomDeltaXLogData
{
	bool		isLogged;
	BloomDeltaPage pages[MAX_GENERIC_XLOG_PAGES];
	PGAlignedBlock images[MAX_GENERIC_XLOG_PAGES];
	char		delta[MAX_GENERIC_XLOG_PAGES * DELTA_MAX_BYTES];
};

/*
 * A record's state, kept in TopMemoryContext for the next record (a merge
 * writes hundreds); bloomDeltaFree is NULL while a record uses it.
 */
static BloomDeltaXLog bloomDeltaKept = NULL;
static BloomDeltaXLog bloomDeltaFree = NULL;

/*
 * Start a record of changes to pages of index.
 */
BloomDeltaXLog
BloomDeltaXLogStart(Relation index)
{
	BloomDeltaXLog x;
	int			i;

	if (bloomDeltaKept == NULL)
		bloomDeltaKept = bloomDeltaFree =
			MemoryContextAlloc(TopMemoryContext, sizeof(BloomDeltaXLogData));
	if (bloomDeltaFree != NULL)
	{
		x = bloomDeltaFree;
		bloomDeltaFree = NULL;
	}
	else
		x = palloc(sizeof(BloomDeltaXLogData));
	x->isLogged = RelationNeedsWAL(index);
	for (i = 0; i < MAX_GENERIC_XLOG_PAGES; i++)
		x->pages[i].buffer = InvalidBuffer;
	return x;
}

/*
 * A record ends: its state is kept for the next one, or freed.  An error
 * between a record's start and its end leaves the kept state in use, and
 * the records after it palloc theirs.
 */
static void
BloomDeltaXLogRelease(BloomDeltaXLog x)
{
	if (x == bloomDeltaKept)
		bloomDeltaFree = x;
	else
		pfree(x);
}

/*
 * Register a buffer (locked exclusively) in the record: returns the image
 * of its page that the caller changes, marking what it changes.
 */
Page
BloomDeltaXLogRegister(BloomDeltaXLog x, Buffer buffer)
{
	int			i;

	for (i = 0; i < MAX_GENERIC_XLOG_PAGES; i++)
	{
		BloomDeltaPage *p = &x->pages[i];

		if (p->buffer == buffer)
			return (Page) x->images[i].data;
		if (BufferIsInvalid(p->buffer))
		{
			p->buffer = buffer;
			p->full = false;
			memset(p->changed, 0, sizeof(p->changed));
			memcpy(x->images[i].data, BufferGetPage(buffer), BLCKSZ);
			return (Page) x->images[i].data;
		}
	}
	elog(ERROR, "maximum number %d of generic xlog buffers is exceeded",
		 MAX_GENERIC_XLOG_PAGES);
	return NULL;				/* keep compiler quiet */
}

/*
 * Register a buffer whose page the caller initializes (a new page): it is
 * logged whole, as GENERIC_XLOG_FULL_IMAGE does, and needs no marks.
 */
Page
BloomDeltaXLogRegisterNew(BloomDeltaXLog x, Buffer buffer)
{
	Page		image = BloomDeltaXLogRegister(x, buffer);

	x->pages[((char *) image - x->images[0].data) / BLCKSZ].full = true;
	return image;
}

/* The page of the record whose image holds [ptr, ptr + len) */
static inline int
BloomDeltaPageOf(BloomDeltaXLog x, Page image, const void *ptr, Size len)
{
	Size		i = ((char *) image - x->images[0].data) / BLCKSZ;
	Size		off = (const char *) ptr - (const char *) image;

	if (i >= MAX_GENERIC_XLOG_PAGES || image != (Page) x->images[i].data ||
		off + len > BLCKSZ)
		elog(ERROR, "bloomidx: a change marked outside a registered page");
	return (int) i;
}

/* Mark bytes [lo, hi] of page i changed */
static inline void
BloomDeltaMarkRange(BloomDeltaXLog x, int i, int lo, int hi)
{
	uint64	   *changed = x->pages[i].changed;

	while (lo <= hi)
	{
		int			n = Min(hi - lo + 1,
							DELTA_BYTES_PER_WORD - lo % DELTA_BYTES_PER_WORD);
		uint64		bits = n == 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << n) - 1;

		changed[lo / DELTA_BYTES_PER_WORD] |= bits << (lo % DELTA_BYTES_PER_WORD);
		lo += n;
	}
}

/*
 * Mark bytes [ptr, ptr + len) of a registered page's image as changed.
 */
void
BloomDeltaXLogMark(BloomDeltaXLog x, Page image, const void *ptr, Size len)
{
	int			i = BloomDeltaPageOf(x, image, ptr, len);
	int			off = (const char *) ptr - (const char *) image;

	if (len > 0)
		BloomDeltaMarkRange(x, i, off, off + (int) len - 1);
}

/*
 * Mark as changed byte ptr + j of a registered page's image for each bit j
 * set in mask (ptr + 32 within the page).
 */
void
BloomDeltaXLogMarkBytes(BloomDeltaXLog x, Page image, const void *ptr,
						uint32 mask)
{
	int			i = BloomDeltaPageOf(x, image, ptr, 32);
	int			off = (const char *) ptr - (const char *) image;
	uint64	   *changed = x->pages[i].changed;
	int			sh = off % DELTA_BYTES_PER_WORD;

	changed[off / DELTA_BYTES_PER_WORD] |= (uint64) mask << sh;
	if (sh > DELTA_BYTES_PER_WORD - 32)
		changed[off / DELTA_BYTES_PER_WORD + 1] |=
			(uint64) mask >> (DELTA_BYTES_PER_WORD - sh);
}

/*
 * Mark bytes [ptr, ptr + len) of a registered page's image as changed,
 * less those at either end that are still the page's.
 */
void
BloomDeltaXLogMarkChanged(BloomDeltaXLog x, Page image, const void *ptr,
						  Size len)
{
	int			i = BloomDeltaPageOf(x, image, ptr, len);
	int			lo = (const char *) ptr - (const char *) image;
	int			hi = lo + (int) len - 1;
	const char *page = BufferGetPage(x->pages[i].buffer);

	while (lo <= hi && image[lo] == page[lo])
		lo++;
	while (hi > lo && image[hi] == page[hi])
		hi--;
	if (lo <= hi)
		BloomDeltaMarkRange(x, i, lo, hi);
}

/*
 * The first byte from c on whose mark is set (or clear), BLCKSZ if none.
 */
static inline int
BloomDeltaNext(const uint64 *changed, int c, bool set)
{
	while (c < BLCKSZ)
	{
		uint64		w = set ? changed[c / DELTA_BYTES_PER_WORD] :
			~changed[c / DELTA_BYTES_PER_WORD];

		w >>= c % DELTA_BYTES_PER_WORD;
		if (w != 0)
			return c + pg_rightmost_one_pos64(w);
		c = (c / DELTA_BYTES_PER_WORD + 1) * DELTA_BYTES_PER_WORD;
	}
	return BLCKSZ;
}

/*
 * Copy bytes [lo, hi) of a page image to the page, and append them to a
 * delta as one fragment.  Most fragments are a few bytes of a summary
 * block: those are copied a byte at a time.
 */
static inline char *
BloomDeltaFragment(char *out, Page page, const char *image, int lo, int hi)
{
	OffsetNumber header[2];
	int			n = hi - lo;

	if (n <= 0)
		return out;
	header[0] = (OffsetNumber) lo;
	header[1] = (OffsetNumber) n;
	memcpy(out, header, sizeof(header));
	out += sizeof(header);
	if (n <= 16)
	{
		int			j;

		for (j = 0; j < n; j++)
			out[j] = page[lo + j] = image[lo + j];
	}
	else
	{
		memcpy(page + lo, image + lo, n);
		memcpy(out, image + lo, n);
	}
	return out + n;
}

#ifdef BLOOMIDX_CHECK_DELTA_WAL
/*
 * Fail if a byte of a page that the record keeps (outside the new hole)
 * changed where no mark says so, or if the page's hole was not zero.
 */
static void
BloomDeltaCheck(const BloomDeltaPage *p, const char *image, const char *page)
{
	int			lower = ((PageHeader) image)->pd_lower;
	int			upper = ((PageHeader) image)->pd_upper;
	int			b;

	for (b = ((PageHeader) page)->pd_lower; b < ((PageHeader) page)->pd_upper; b++)
	{
		if (page[b] != 0)
			elog(ERROR, "bloomidx: byte %d of block %u is in its hole but not zero",
				 b, BufferGetBlockNumber(p->buffer));
	}
	for (b = 0; b < BLCKSZ; b++)
	{
		if (b >= lower && b < upper)
			continue;
		if (image[b] != page[b] &&
			(p->changed[b / DELTA_BYTES_PER_WORD] &
			 (UINT64CONST(1) << (b % DELTA_BYTES_PER_WORD))) == 0)
			elog(ERROR, "bloomidx: byte %d of block %u changed unmarked",
				 b, BufferGetBlockNumber(p->buffer));
	}
}
#endif

/*
 * Apply the changes to the buffers and WAL-log them in one generic WAL
 * record holding the marked bytes, the pages' holes zeroed as generic WAL
 * does; ends the record.  Only the marked bytes are copied to a logged
 * relation's pages: the others are the page's own.
 */
XLogRecPtr
BloomDeltaXLogFinish(BloomDeltaXLog x)
{
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	char	   *delta = x->delta;
	int			i;

#ifdef BLOOMIDX_CHECK_DELTA_WAL
	for (i = 0; i < MAX_GENERIC_XLOG_PAGES; i++)
	{
		if (BufferIsValid(x->pages[i].buffer) && !x->pages[i].full)
			BloomDeltaCheck(&x->pages[i], x->images[i].data,
							BufferGetPage(x->pages[i].buffer));
	}
#endif

	if (x->isLogged)
		XLogBeginInsert();
	START_CRIT_SECTION();
	for (i = 0; i < MAX_GENERIC_XLOG_PAGES; i++)
	{
		BloomDeltaPage *p = &x->pages[i];
		char	   *image = x->images[i].data;
		Page		page;
		char	   *start = delta;
		int			c = 0;
		int			lower = ((PageHeader) image)->pd_lower;
		int			upper = ((PageHeader) image)->pd_upper;
		int			oldLower,
					oldUpper;

		if (BufferIsInvalid(p->buffer))
			continue;
		page = BufferGetPage(p->buffer);
		if (!x->isLogged)
		{
			/* As GenericXLogFinish does: the image, hole and all */
			memcpy(page, image, BLCKSZ);
			MarkBufferDirty(p->buffer);
			continue;
		}
		if (p->full)
		{
			/* As GenericXLogFinish does with GENERIC_XLOG_FULL_IMAGE */
			memcpy(page, image, lower);
			memset(page + lower, 0, upper - lower);
			memcpy(page + upper, image + upper, BLCKSZ - upper);
			MarkBufferDirty(p->buffer);
			XLogRegisterBuffer(i, p->buffer, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
			continue;
		}

		/*
		 * Each run of marked bytes, with the runs that follow it closer than
		 * a fragment's header would cost (as generic WAL does), less the new
		 * hole, is copied to the page and is a fragment; then the new hole
		 * is zeroed where the old page's was not (it was zero, as generic
		 * WAL leaves it).
		 */
		oldLower = ((PageHeader) page)->pd_lower;
		oldUpper = ((PageHeader) page)->pd_upper;
		while ((c = BloomDeltaNext(p->changed, c, true)) < BLCKSZ)
		{
			int			lo = c;
			int			hi;

			for (;;)
			{
				hi = BloomDeltaNext(p->changed, c, false);
				c = BloomDeltaNext(p->changed, hi, true);
				if (c >= BLCKSZ || c - hi >= DELTA_MERGE_GAP)
					break;
			}
			delta = BloomDeltaFragment(delta, page, image, lo, Min(hi, lower));
			delta = BloomDeltaFragment(delta, page, image, Max(lo, upper), hi);
		}
		if (lower < Min(upper, oldLower))
			memset(page + lower, 0, Min(upper, oldLower) - lower);
		if (upper > Max(lower, oldUpper))
			memset(page + Max(lower, oldUpper), 0, upper - Max(lower, oldUpper));
		MarkBufferDirty(p->buffer);
		XLogRegisterBuffer(i, p->buffer, REGBUF_STANDARD);
		if (delta > start)
			XLogRegisterBufData(i, start, delta - start);
	}
	if (x->isLogged)
	{
		lsn = XLogInsert(RM_GENERIC_ID, 0);
		for (i = 0; i < MAX_GENERIC_XLOG_PAGES; i++)
		{
			if (BufferIsValid(x->pages[i].buffer))
				PageSetLSN(BufferGetPage(x->pages[i].buffer), lsn);
		}
	}
	END_CRIT_SECTION();
	BloomDeltaXLogRelease(x);
	return lsn;
}
