/*-------------------------------------------------------------------------
 *
 * opclass_trgm.c
 *	  text_trgm_ops: strings as sets of trigrams, answering LIKE and ILIKE
 *	  (~~, ~~*) with a pattern that has a trigram, and = on the column.
 *
 * The trigrams are those pg_trgm extracts, but for the case: the string is
 * split into words (runs of word characters: ASCII letters and digits, and
 * every non-ASCII character), each character of a word is folded by the
 * extension's own fold (trgm_fold_table.h: the same for every collation,
 * without context, so that no lower() of any collation changes a
 * character's fold), the word is padded with two blanks before and one
 * after, and every three consecutive folded characters are a trigram,
 * hashed into one element of the signature.  src/README ("The trigrams'
 * fold") says why that answers LIKE, ILIKE and = under every deterministic
 * collation, and why a nondeterministic one is refused.  An index of
 * format 2 (page.h) folded each word with lower() under the column's
 * collation, which was exact under libc collations only: it keeps its
 * fold, and under other collations its queries test no bit.
 *
 * A LIKE pattern's trigrams are those every string it matches contains:
 * the pattern is split into words at wildcards ('%' and '_'), non-word
 * characters and its ends, a backslash takes the next character
 * literally, and a word is padded only on a side where the string it
 * matches must have a word boundary (a non-word character or the
 * pattern's end, not a wildcard).  Case is folded on both sides, so LIKE
 * and ILIKE test the same trigrams and the recheck decides case.  A pattern
 * with no trigram ('%', '%ab%') tests no bit; the cost model then sees a
 * scan of every row, and the planner prefers another plan.  = tests the
 * trigrams of the value, as stored.
 *
 * Memory: the trigrams go to the sink as they are found, so a value takes
 * no more than its longest word, folded, beside the value itself.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass/opclass_trgm.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomidx.h"
#include "trgm_fold_table.h"

PG_FUNCTION_INFO_V1(bloomidx_trgm_extract);
PG_FUNCTION_INFO_V1(bloomidx_trgm_extract_query);
PG_FUNCTION_INFO_V1(bloomidx_trgm_options);

/* Seed of the trigrams' hashes: a trigram is not the value of a column */
#define BLOOM_TRGM_SEED		UINT64CONST(0x7472676d)
/* ... and of the folded trigrams (format 3), other bytes than format 2's */
#define BLOOM_TRGM_FOLD_SEED	UINT64CONST(0x7472676d66)

/* The fold of a character of a multibyte encoding other than UTF8 */
#define BLOOM_TRGM_OPAQUE		UINT64CONST(0x80000000)
/* The code point of a byte with none (SQL_ASCII): a private use one */
#define BLOOM_TRGM_PRIVATE_BYTE	0xF700

/* The folded characters of a word kept on the stack; a longer one allocates */
#define BLOOM_TRGM_WORD_FOLDS	256

/* The database encoding's code points of bytes 0x80 .. 0xFF, or -1 */
static int	bloomTrgmByteEncoding = -1;
static uint32 bloomTrgmByteCodepoint[128];

/* The collation whose lower() of single bytes was checked, and its answer */
static Oid	bloomTrgmByteCollation = InvalidOid;
static bool bloomTrgmByteLowerSafe;

/* The indexes of format 2 this backend's planner reported (in TopMemoryContext) */
static List *bloomTrgmLegacyReported = NIL;

/*
 * The length in bytes of the character at p: an ASCII byte is a character
 * of its own in every server encoding, without asking pg_mblen.
 */
static inline int
BloomTrgmCharLen(const char *p)
{
	return IS_HIGHBIT_SET(*p) ? pg_mblen(p) : 1;
}

/*
 * Is the character at p (of clen bytes) a word character?  Every non-ASCII
 * character is, whatever the locale, so that the same characters split
 * words in values and patterns.
 */
static inline bool
BloomTrgmIsWordChar(const char *p, int clen)
{
	unsigned char c = (unsigned char) *p;

	if (clen > 1 || IS_HIGHBIT_SET(c))
		return true;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

/*
 * Give sink the trigrams of word (bytes, not padded) as an index of format
 * 2 has them: lowered under collation, with two blanks before it if padLeft
 * and one after it if padRight.
 */
static void
BloomTrgmAddLoweredWord(BloomElementSink *sink, const char *word, int len,
				 bool padLeft, bool padRight, Oid collation)
{
	char	   *lowered = str_tolower(word, len, collation);
	int			lowlen = strlen(lowered);
	char	   *buf = palloc(lowlen + 3);
	int			n = 0;
	const char *start[3] = {NULL, NULL, NULL};
	int			have = 0;
	char	   *p;
	char	   *end;

	if (padLeft)
	{
		buf[n++] = ' ';
		buf[n++] = ' ';
	}
	memcpy(buf + n, lowered, lowlen);
	n += lowlen;
	if (padRight)
		buf[n++] = ' ';
	end = buf + n;

	/* Slide a window of three characters over the padded word */
	for (p = buf; p < end; p += pg_mblen(p))
	{
		start[0] = start[1];
		start[1] = start[2];
		start[2] = p;
		if (++have >= 3)
		{
			const char *tend = p + pg_mblen(p);

			BloomAddElement(sink,
							hash_bytes_extended((const unsigned char *) start[0],
												tend - start[0],
												BLOOM_TRGM_SEED));
		}
	}
	pfree(buf);
	pfree(lowered);
}

/*
 * The fold of a code point (trgm_fold_table.h): its class's representative,
 * or -1 for a character that folds to nothing.
 */
static int64
BloomTrgmFoldCodepoint(uint32 c)
{
	int			lo = 0;
	int			hi = lengthof(bloom_trgm_fold_runs) - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		const BloomTrgmFoldRun *run = &bloom_trgm_fold_runs[mid];

		if (c < run->first)
			hi = mid - 1;
		else if (c > run->last)
			lo = mid + 1;
		else if (run->kind == BLOOM_TRGM_FOLD_DROP)
			return -1;
		else if (run->kind == BLOOM_TRGM_FOLD_TARGET)
			return run->value;
		else if ((c - run->first) % run->stride == 0)
			return (int64) c + run->value;
		else
			return c;
	}
	return c;
}

/*
 * Fill in the code points of the database encoding's bytes 0x80 .. 0xFF, a
 * single-byte encoding: through its conversion to UTF8, LATIN1's its own;
 * a private use code point where there is none (SQL_ASCII, or a byte the
 * encoding leaves undefined).
 */
static void
BloomTrgmInitByteCodepoints(void)
{
	int			encoding = GetDatabaseEncoding();
	Oid			proc = InvalidOid;
	int			b;

	if (encoding == bloomTrgmByteEncoding)
		return;
	if (encoding != PG_SQL_ASCII && encoding != PG_LATIN1)
		proc = FindDefaultConversionProc(encoding, PG_UTF8);
	for (b = 0x80; b <= 0xFF; b++)
	{
		unsigned char src[1] = {(unsigned char) b};
		unsigned char dst[MAX_CONVERSION_GROWTH + 1];
		uint32		cp = BLOOM_TRGM_PRIVATE_BYTE + b;

		if (encoding == PG_LATIN1)
			cp = b;
		else if (OidIsValid(proc) &&
				 pg_do_encoding_conversion_buf(proc, encoding, PG_UTF8,
											   src, 1, dst, sizeof(dst),
											   true) == 1)
			cp = utf8_to_unicode(dst);
		bloomTrgmByteCodepoint[b - 0x80] = cp;
	}
	bloomTrgmByteEncoding = encoding;
}

/*
 * The fold of the character at p (clen bytes) in the database encoding:
 * through its code point in UTF8 and single-byte encodings, its bytes,
 * unfolded, in other multibyte ones; -1 if it folds to nothing.  Not
 * inlined: the hot path folds ASCII itself, and inlined into
 * BloomTrgmIlikeIsSafe the UTF8 branch, never taken there, reads past a
 * one-byte buffer in the compiler's eyes (-Warray-bounds).
 */
static pg_noinline int64
BloomTrgmFoldChar(const unsigned char *p, int clen)
{
	if (clen == 1 && !IS_HIGHBIT_SET(*p))
		return bloom_trgm_fold_ascii[*p];
	if (GetDatabaseEncoding() == PG_UTF8)
		return BloomTrgmFoldCodepoint(utf8_to_unicode(p));
	if (clen == 1)
	{
		BloomTrgmInitByteCodepoints();
		return BloomTrgmFoldCodepoint(bloomTrgmByteCodepoint[*p - 0x80]);
	}
	return BLOOM_TRGM_OPAQUE | (hash_bytes(p, clen) & 0x7FFFFFFF);
}

/* Store fold as the n-th character of bytes, 32-bit little-endian */
static inline void
BloomTrgmPutFold(unsigned char *bytes, int n, uint32 fold)
{
	bytes[4 * n] = (unsigned char) fold;
	bytes[4 * n + 1] = (unsigned char) (fold >> 8);
	bytes[4 * n + 2] = (unsigned char) (fold >> 16);
	bytes[4 * n + 3] = (unsigned char) (fold >> 24);
}

/*
 * Give sink the trigrams of word (bytes, not padded), each character
 * folded, with two blanks before it if padLeft and one after it if
 * padRight.  A trigram is hashed as its three folds, 32-bit little-endian.
 */
static void
BloomTrgmAddFoldedWord(BloomElementSink *sink, const char *word, int len,
					   bool padLeft, bool padRight)
{
	unsigned char local[4 * BLOOM_TRGM_WORD_FOLDS];
	unsigned char *bytes = local;
	const char *end = word + len;
	const char *p = word;
	int			n = 0;
	int			i;

	if (len + 3 > BLOOM_TRGM_WORD_FOLDS)
		bytes = palloc(4 * ((Size) len + 3));
	if (padLeft)
	{
		BloomTrgmPutFold(bytes, n++, ' ');
		BloomTrgmPutFold(bytes, n++, ' ');
	}
	while (p < end)
	{
		int			clen = BloomTrgmCharLen(p);
		int64		f;

		if (clen == 1 && !IS_HIGHBIT_SET(*p))
			f = bloom_trgm_fold_ascii[(unsigned char) *p];
		else
			f = BloomTrgmFoldChar((const unsigned char *) p, clen);
		if (f >= 0)
			BloomTrgmPutFold(bytes, n++, (uint32) f);
		p += clen;
	}
	if (padRight)
		BloomTrgmPutFold(bytes, n++, ' ');
	for (i = 0; i + 2 < n; i++)
		BloomAddElement(sink, hash_bytes_extended(bytes + 4 * i, 12,
												  BLOOM_TRGM_FOLD_SEED));
	if (bytes != local)
		pfree(bytes);
}

/*
 * Give sink the trigrams of word (bytes, not padded) as the index has them
 * (its format's fold), padded on the sides asked.
 */
static void
BloomTrgmAddWord(BloomElementSink *sink, const char *word, int len,
				 bool padLeft, bool padRight, Oid collation)
{
	if (sink->legacyFold)
		BloomTrgmAddLoweredWord(sink, word, len, padLeft, padRight, collation);
	else
		BloomTrgmAddFoldedWord(sink, word, len, padLeft, padRight);
}

/*
 * Give sink the trigrams of a string as stored: every word padded on both
 * sides.
 */
static void
BloomTrgmAddString(BloomElementSink *sink, const char *str, int len,
				   Oid collation)
{
	const char *end = str + len;
	const char *p = str;

	while (p < end)
	{
		const char *word;
		int			clen;

		CHECK_FOR_INTERRUPTS();
		for (;;)
		{
			if (p >= end)
				return;
			clen = BloomTrgmCharLen(p);
			if (BloomTrgmIsWordChar(p, clen))
				break;
			p += clen;
		}
		word = p;
		do
		{
			p += clen;
			if (p >= end)
				break;
			clen = BloomTrgmCharLen(p);
		} while (BloomTrgmIsWordChar(p, clen));
		BloomTrgmAddWord(sink, word, p - word, true, true, collation);
	}
}

/*
 * Give sink the trigrams every string matching a LIKE pattern contains.
 * A word ends at a wildcard (no padding on that side), at a non-word
 * character, literal or escaped, or at the pattern's end (padding).
 */
static void
BloomTrgmAddPattern(BloomElementSink *sink, const char *pat, int len,
					Oid collation)
{
	const char *end = pat + len;
	const char *p = pat;
	char	   *word = palloc(len + 1);
	bool		escaped = false;	/* the character at p is escaped */

	while (p < end)
	{
		bool		afterWildcard = false;
		bool		beforeWildcard = false;
		int			wlen = 0;

		CHECK_FOR_INTERRUPTS();

		/* Find the first word character, literal or escaped */
		while (p < end)
		{
			int			clen = BloomTrgmCharLen(p);

			if (escaped)
			{
				if (BloomTrgmIsWordChar(p, clen))
					break;
				escaped = false;
				afterWildcard = false;
			}
			else if (*p == '\\')
				escaped = true;
			else if (*p == '%' || *p == '_')
				afterWildcard = true;
			else if (BloomTrgmIsWordChar(p, clen))
				break;
			else
				afterWildcard = false;
			p += clen;
		}
		if (p >= end)
			break;

		/* Gather the word's characters up to where it ends */
		while (p < end)
		{
			int			clen = BloomTrgmCharLen(p);

			if (escaped)
			{
				if (!BloomTrgmIsWordChar(p, clen))
					break;		/* an escaped non-word character */
				escaped = false;
			}
			else if (*p == '\\')
			{
				escaped = true;
				p += clen;
				continue;
			}
			else if (*p == '%' || *p == '_')
			{
				beforeWildcard = true;
				break;
			}
			else if (!BloomTrgmIsWordChar(p, clen))
				break;
			memcpy(word + wlen, p, clen);
			wlen += clen;
			p += clen;
		}

		/*
		 * A word that ends at an escaped character ends at a boundary (an
		 * escaped word character would have continued it); the escaped
		 * character is read as a literal by the next round.  A pattern
		 * that ends in a lone backslash is not a valid pattern: its end is
		 * no boundary, so that the operator is reached and complains.
		 */
		if (escaped && p >= end)
			beforeWildcard = true;
		BloomTrgmAddWord(sink, word, wlen, !afterWildcard, !beforeWildcard,
						 collation);
	}
	pfree(word);
}

/* The collation the trigrams are case-folded under */
static inline Oid
BloomTrgmCollation(FunctionCallInfo fcinfo)
{
	Oid			collation = PG_GET_COLLATION();

	return OidIsValid(collation) ? collation : DEFAULT_COLLATION_OID;
}

/* The provider of a collation, the database's for the default one */
static char
BloomTrgmProvider(Oid collation)
{
	HeapTuple	tuple;
	char		provider;

	tuple = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for collation %u", collation);
	provider = ((Form_pg_collation) GETSTRUCT(tuple))->collprovider;
	ReleaseSysCache(tuple);
	if (provider != COLLPROVIDER_DEFAULT)
		return provider;
	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	provider = ((Form_pg_database) GETSTRUCT(tuple))->datlocprovider;
	ReleaseSysCache(tuple);
	return provider;
}

/*
 * Does ILIKE's lowering leave every character's fold as it was, under
 * collation?  In UTF8, yes, whatever the collation (src/README,
 * scripts/check-trgm-fold.sh).  In a single-byte encoding ILIKE lowers
 * byte by byte: under a libc collation, whose tolower() may map any byte
 * to any byte (a LATIN1 locale on SQL_ASCII), each byte is checked, once
 * a collation; ICU and the builtin provider lower as Unicode does, which
 * the fold is built from.  In other multibyte encodings the fold leaves
 * non-ASCII characters as they are, which lower() need not: no.
 */
static bool
BloomTrgmIlikeIsSafe(Oid collation)
{
	int			b;

	if (GetDatabaseEncoding() == PG_UTF8)
		return true;
	if (pg_database_encoding_max_length() > 1)
		return false;
	if (BloomTrgmProvider(collation) != COLLPROVIDER_LIBC)
		return true;
	if (collation == bloomTrgmByteCollation)
		return bloomTrgmByteLowerSafe;

	bloomTrgmByteLowerSafe = true;
	for (b = 1; b <= 0xFF && bloomTrgmByteLowerSafe; b++)
	{
		char		byte = (char) b;
		char	   *lowered = str_tolower(&byte, 1, collation);

		if (strlen(lowered) != 1 ||
			BloomTrgmFoldChar((unsigned char *) lowered, 1) !=
			BloomTrgmFoldChar((unsigned char *) &byte, 1))
			bloomTrgmByteLowerSafe = false;
		pfree(lowered);
	}
	bloomTrgmByteCollation = collation;
	return bloomTrgmByteLowerSafe;
}

/*
 * Can a query of the given strategy under collation be answered from the
 * trigrams?  Never under a nondeterministic collation, which makes strings
 * of other trigrams equal (ignorable characters, accents); an index of
 * format 2 only under libc collations, whose lower() is context-free, as
 * its fold was; ILIKE as BloomTrgmIlikeIsSafe says.
 */
static bool
BloomTrgmQueryIsSafe(BloomElementSink *sink, Oid collation, int strategy)
{
	if (!get_collation_isdeterministic(collation))
		return false;
	if (sink->legacyFold)
		return BloomTrgmProvider(collation) == COLLPROVIDER_LIBC;
	if (strategy == BLOOMIDX_ILIKE_STRATEGY)
		return BloomTrgmIlikeIsSafe(collation);
	return true;
}

/* Is column attno (1-based) of index a text_trgm_ops column? */
static bool
BloomTrgmIsColumn(Relation index, int attno)
{
	return OidIsValid(index_getprocid(index, attno, BLOOMIDX_EXTRACT_PROC)) &&
		index_getprocinfo(index, attno, BLOOMIDX_EXTRACT_PROC)->fn_addr ==
		bloomidx_trgm_extract;
}

/*
 * Refuse to build an index with a text_trgm_ops column under a
 * nondeterministic collation (CREATE INDEX, REINDEX): no query under it
 * could use the index.
 */
void
BloomTrgmCheckBuild(Relation index)
{
	int			i;

	for (i = 0; i < IndexRelationGetNumberOfKeyAttributes(index); i++)
	{
		Oid			collation = index->rd_indcollation[i];

		if (!OidIsValid(collation) ||
			get_collation_isdeterministic(collation) ||
			!BloomTrgmIsColumn(index, i + 1))
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("text_trgm_ops cannot index column \"%s\" under nondeterministic collation \"%s\"",
						NameStr(TupleDescAttr(RelationGetDescr(index), i)->attname),
						get_collation_name(collation)),
				 errdetail("Under a nondeterministic collation, strings with other trigrams are equal or match a pattern."),
				 errhint("Index the column under a deterministic collation (COLLATE \"C\", for instance), which the queries must then use, or index = with the text equality operator class.")));
	}
}

/*
 * Report with a NOTICE the text_trgm_ops columns of an index of format 2
 * (page.h) whose queries test no trigram, and so read the whole index:
 * those under a collation other than a deterministic libc one, under
 * which that format's fold, lower(), was not exact (BloomTrgmQueryIsSafe).
 * With oncePerBackend, only the first call for an index in a backend
 * reports it (the planner's).
 */
void
BloomTrgmReportLegacyFold(Relation index, bool oncePerBackend)
{
	Oid			indexoid = RelationGetRelid(index);
	int			i;

	if (oncePerBackend && list_member_oid(bloomTrgmLegacyReported, indexoid))
		return;
	for (i = 0; i < IndexRelationGetNumberOfKeyAttributes(index); i++)
	{
		Oid			collation = index->rd_indcollation[i];

		if (!BloomTrgmIsColumn(index, i + 1))
			continue;
		if (!OidIsValid(collation))
			collation = DEFAULT_COLLATION_OID;
		if (get_collation_isdeterministic(collation) &&
			BloomTrgmProvider(collation) == COLLPROVIDER_LIBC)
			continue;
		ereport(NOTICE,
				(errmsg("index \"%s\" tests no trigram for queries on column \"%s\"",
						RelationGetRelationName(index),
						NameStr(TupleDescAttr(RelationGetDescr(index), i)->attname)),
				 errdetail("The index is of format version 2, which folded case with lower() under the column's collation, exact only under a deterministic libc collation; under collation \"%s\" every query reads the whole index.",
						   get_collation_name(collation)),
				 errhint("REINDEX the index to build it with the fold every collation allows.")));
	}
	if (oncePerBackend)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		bloomTrgmLegacyReported = lappend_oid(bloomTrgmLegacyReported, indexoid);
		MemoryContextSwitchTo(old);
	}
}

/*
 * bloomidx_trgm_extract(text, internal): the trigrams of a stored string
 * (support function 2).
 */
Datum
bloomidx_trgm_extract(PG_FUNCTION_ARGS)
{
	text	   *value = PG_GETARG_TEXT_PP(0);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(1);

	BloomTrgmAddString(sink, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value),
					   BloomTrgmCollation(fcinfo));
	PG_RETURN_VOID();
}

/*
 * bloomidx_trgm_extract_query(text, int2, internal): the trigrams a query
 * tests, all of which a match has (support function 3).
 */
Datum
bloomidx_trgm_extract_query(PG_FUNCTION_ARGS)
{
	text	   *query = PG_GETARG_TEXT_PP(0);
	int16		strategy = PG_GETARG_INT16(1);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(2);

	sink->mode = BLOOM_ELEMENTS_ALL;
	if (!BloomTrgmQueryIsSafe(sink, BloomTrgmCollation(fcinfo), strategy))
		PG_RETURN_VOID();		/* no trigram: every row is a candidate */
	switch (strategy)
	{
		case BLOOMIDX_EQUAL_STRATEGY:
			BloomTrgmAddString(sink, VARDATA_ANY(query),
							   VARSIZE_ANY_EXHDR(query),
							   BloomTrgmCollation(fcinfo));
			break;
		case BLOOMIDX_LIKE_STRATEGY:
		case BLOOMIDX_ILIKE_STRATEGY:
			BloomTrgmAddPattern(sink, VARDATA_ANY(query),
								VARSIZE_ANY_EXHDR(query),
								BloomTrgmCollation(fcinfo));
			break;
		default:
			elog(ERROR, "text_trgm_ops has no strategy %d", strategy);
	}
	PG_RETURN_VOID();
}

/*
 * bloomidx_trgm_options(internal): elements (default 32 trigrams a value)
 * and query_elements (default 3, the trigrams of a five-character
 * pattern) (support function 4).
 */
Datum
bloomidx_trgm_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	BloomSetOptionsInit(relopts, 32, 3);
	PG_RETURN_VOID();
}
