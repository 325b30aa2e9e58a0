/*-------------------------------------------------------------------------
 *
 * options.c
 *	  The index options of bloomidx: their registration, parsing and checks,
 *	  and the signature shape they give an index.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/reloptions.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "fpmodel.h"
#include "page.h"
#include "signature.h"

/* Kind of relation options for bloomidx indexes */
static relopt_kind bloomidx_relopt_kind;

/* Parse table for the options, filled in by BloomInitOptions */
static relopt_parse_elt bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 3];

/* Values of the layout option */
static relopt_enum_elt_def bloomidx_layout_values[] =
{
	{"row", BLOOMIDX_LAYOUT_ROW},
	{"sliced", BLOOMIDX_LAYOUT_SLICED},
	{(const char *) NULL}
};

/*
 * Register the index options (at module load).
 *
 * length and col1 ... col32 have contrib/bloom's bounds, so the core refuses
 * what contrib/bloom refuses, with the same message.  Their defaults, like
 * that of false_positive_rate and layout, lie outside the bounds or the
 * values: a user cannot give them, so they mean "not given" (see
 * BloomResolveOptions).
 */
void
BloomInitOptions(void)
{
	int			i;
	char		buf[16];

	bloomidx_relopt_kind = add_reloption_kind();

	add_int_reloption(bloomidx_relopt_kind, "length",
					  "Signature length in bits, rounded up to a multiple of 16",
					  0, 1, BLOOMIDX_MAX_LENGTH, AccessExclusiveLock);
	bloomidx_relopt_tab[0].optname = "length";
	bloomidx_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	bloomidx_relopt_tab[0].offset = offsetof(BloomOptions, length);

	add_real_reloption(bloomidx_relopt_kind, "false_positive_rate",
					   "Target false-positive rate of an equality on one column",
					   0, BLOOMIDX_MIN_FPR, BLOOMIDX_MAX_FPR, AccessExclusiveLock);
	bloomidx_relopt_tab[1].optname = "false_positive_rate";
	bloomidx_relopt_tab[1].opttype = RELOPT_TYPE_REAL;
	bloomidx_relopt_tab[1].offset = offsetof(BloomOptions, falsePositiveRate);

	add_enum_reloption(bloomidx_relopt_kind, "layout",
					   "Page layout: one signature per row, or bit-sliced",
					   bloomidx_layout_values, 0,
					   "Valid values are \"row\" and \"sliced\".",
					   AccessExclusiveLock);
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].optname = "layout";
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].opttype = RELOPT_TYPE_ENUM;
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].offset = offsetof(BloomOptions, layout);

	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
	{
		snprintf(buf, sizeof(buf), "col%d", i + 1);
		bloomidx_relopt_tab[i + 2].optname = MemoryContextStrdup(TopMemoryContext, buf);
		bloomidx_relopt_tab[i + 2].opttype = RELOPT_TYPE_INT;
		bloomidx_relopt_tab[i + 2].offset =
			offsetof(BloomOptions, bitsPerColumn) + sizeof(int) * i;
		add_int_reloption(bloomidx_relopt_kind,
						  bloomidx_relopt_tab[i + 2].optname,
						  "Bits set in the signature for this column",
						  0, 1, BLOOMIDX_MAX_COLUMN_BITS, AccessExclusiveLock);
	}
}

/*
 * Check the rules that tie options together.
 *
 * The range of each option is checked by the core (build_reloptions).  The
 * rules left depend on the options alone, never on the index's columns,
 * so that ALTER INDEX ... SET, which checks the options without the index,
 * refuses everything a rebuild would refuse.
 */
static void
BloomCheckOptions(const BloomOptions *opts)
{
	bool		anyColumn = false;
	int			i;

	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
		if (opts->bitsPerColumn[i] != 0)
			anyColumn = true;

	if (opts->falsePositiveRate != 0 && (opts->length != 0 || anyColumn))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate cannot be combined with length or colN"),
				 errhint("Give either false_positive_rate, or length and col1 ... col%d.",
						 BLOOMIDX_MAX_COLUMNS)));
}

/*
 * Parse and check the options of a bloomidx index (amoptions).
 */
bytea *
bloomidx_options(Datum reloptions, bool validate)
{
	BloomOptions *opts;

	opts = (BloomOptions *) build_reloptions(reloptions, validate,
											 bloomidx_relopt_kind,
											 sizeof(BloomOptions),
											 bloomidx_relopt_tab,
											 lengthof(bloomidx_relopt_tab));
	if (validate && opts != NULL)
		BloomCheckOptions(opts);
	return (bytea *) opts;
}

/*
 * The signature shape's defaults for a layout: the false-positive rate
 * when neither false_positive_rate nor length is given, and the length
 * derived from m bits.  The row layout tests whole 64-bit words, so its
 * signatures are rounded up to words, and it defaults to 1%.  A sliced
 * scan reads only the slices it tests, so a longer signature costs it
 * space but no time: it defaults to a lower rate and takes any length,
 * the shortest from m up whose one-column rate, by the false-positive
 * model of the cost estimates, is at most the target fpr (0: none).
 *
 * A sliced scan reads a slice page per bit an equality tests, each of which
 * removes the rows whose bit is clear: with 40% of the bits set rather than
 * half, a column needs k = ln(1/p) / ln(2.5) bits rather than log2(1/p)
 * for the same rate (3/4 as many pages to read for a one-column query,
 * each leaving 40% of the rows rather than half), in a signature about 3%
 * longer.  Fewer bits still would cut the pages further but cost more
 * space for the rate, and a one-column query's false positives, each a
 * heap fetch, cost more than its slices.
 */
static double
BloomDefaultFpr(int layout)
{
	return layout == BLOOMIDX_LAYOUT_SLICED ?
		BLOOMIDX_SLICED_DEFAULT_FPR : BLOOMIDX_DEFAULT_FPR;
}

static int
BloomDerivedLength(int layout, double m, double fpr, const BloomShape *shape)
{
	int			bits;
	int			fewest = 0;
	int			i;

	if (layout != BLOOMIDX_LAYOUT_SLICED)
		return Max(64, TYPEALIGN(64, (int) ceil(m)));

	bits = Max(BLOOMIDX_MIN_LENGTH, (int) ceil(m));
	for (i = 1; i < shape->nColumns; i++)
	{
		if (shape->bitsPerColumn[i] < shape->bitsPerColumn[fewest])
			fewest = i;
	}
	for (; fpr > 0 && bits < BLOOMIDX_SLICED_MAX_LENGTH; bits++)
	{
		BloomModelShape model;
		int			totalBits = 0;

		for (i = 0; i < shape->nColumns; i++)
			totalBits += shape->bitsPerColumn[i];
		model.sigBits = bits;
		model.sigWords = (bits + 63) / 64;
		model.nColumns = shape->nColumns;
		model.bitsPerColumn = shape->bitsPerColumn;
		if (BloomModelEqualityFpr(&model, BloomExpectedFill(bits, 1, totalBits),
								  1, &fewest) <= fpr)
			break;
	}
	return bits;
}

static void BloomResolveShape(const BloomOptions *opts, int n, int layout,
							  BloomShape *shape);

/*
 * Turn an index's options into the shape of its signatures.
 *
 * A given length and colN mean what they mean to contrib/bloom: length is
 * the signature's length in bits, rounded up to a multiple of 16, and colN
 * the number of bits column N sets, even if that is as many as the
 * signature has; colN past the index's last column is ignored.
 *
 * Whatever is not given is derived so that an equality on one column has
 * the target false-positive rate (by default 1% for the row layout, 0.035%
 * for the sliced one).  The row layout: k = round(log2(1 / p)) bits a
 * column and m = n * ln(1 / p) / ln(2)^2 bits in all, rounded up to whole
 * 64-bit words.  The sliced layout: k = round(ln(1 / p) / ln(2.5)) bits a
 * column (40% of the bits set; see BloomDerivedLength) and the
 * shortest length from m up whose modelled rate is p.  With colN
 * but no length, the signature is sized so that about half of its bits are
 * set, at most BLOOMIDX_MAX_LENGTH bits.  With length but no colN, each
 * column gets the k that is optimal for that length, up to 16 (beyond
 * which the false-positive rate is negligible and hashing just costs more).
 *
 * The layout is the one given, else unsetLayout: BLOOMIDX_DEFAULT_LAYOUT
 * for an index being built, the layout frozen in the metapage when an
 * existing index's options are compared with its shape (an index built
 * before the default changed must not seem to ask for another layout).
 * The sliced layout takes signatures of at most BLOOMIDX_SLICED_MAX_LENGTH
 * bits; a longer one gets the row layout, shaped by the row layout's rules,
 * whether the sliced layout was given or is the default
 * (BloomReportOptions says so).
 *
 * No option set that passed bloomidx_options is refused here.
 */
void
BloomResolveOptions(Relation index, int unsetLayout, BloomShape *shape)
{
	BloomOptions defaults;
	BloomOptions *opts = (BloomOptions *) index->rd_options;
	int			n = RelationGetNumberOfAttributes(index);

	if (n > BLOOMIDX_MAX_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("bloomidx indexes support at most %d columns, not %d",
						BLOOMIDX_MAX_COLUMNS, n),
				 errhint("Split the columns over several indexes.")));

	if (opts == NULL)
	{
		memset(&defaults, 0, sizeof(defaults));
		opts = &defaults;
	}
	BloomCheckOptions(opts);

	BloomResolveShape(opts, n, opts->layout != 0 ? opts->layout : unsetLayout,
					  shape);
	if (shape->layout == BLOOMIDX_LAYOUT_SLICED &&
		shape->sigBits > BLOOMIDX_SLICED_MAX_LENGTH)
		BloomResolveShape(opts, n, BLOOMIDX_LAYOUT_ROW, shape);
}

/*
 * The shape that the options give an index of n columns in the given
 * layout (see BloomResolveOptions).
 */
static void
BloomResolveShape(const BloomOptions *opts, int n, int layout,
				  BloomShape *shape)
{
	double		fpr;
	int			defaultBits;
	int			totalBits = 0;
	int			i;

	memset(shape, 0, sizeof(BloomShape));
	shape->nColumns = n;
	shape->layout = layout;

	fpr = opts->falsePositiveRate;
	if (fpr == 0 && opts->length == 0)
		fpr = BloomDefaultFpr(layout);

	if (fpr != 0 && layout == BLOOMIDX_LAYOUT_SLICED)
		defaultBits = Max(1, (int) rint(log(1.0 / fpr) /
										log(1.0 / BLOOMIDX_SLICED_FILL)));
	else if (fpr != 0)
		defaultBits = Max(1, (int) rint(log2(1.0 / fpr)));
	else
		defaultBits = Min(Max(1, (int) rint(M_LN2 * opts->length / n)),
						  BLOOMIDX_MAX_DERIVED_BITS);

	for (i = 0; i < n; i++)
	{
		shape->bitsPerColumn[i] = opts->bitsPerColumn[i] != 0 ?
			opts->bitsPerColumn[i] : defaultBits;
		totalBits += shape->bitsPerColumn[i];
	}

	if (opts->length != 0)
		shape->sigBits = TYPEALIGN(16, opts->length);
	else
	{
		double		m;

		if (opts->falsePositiveRate != 0 || totalBits == n * defaultBits)
			m = n * log(1.0 / fpr) / (M_LN2 * M_LN2);
		else
			m = totalBits / M_LN2;
		m = Min(m, BLOOMIDX_MAX_LENGTH);
		shape->sigBits = BloomDerivedLength(layout, m,
											opts->falsePositiveRate != 0 ||
											totalBits == n * defaultBits ? fpr : 0,
											shape);
	}
	shape->sigBits = Min(shape->sigBits, BLOOMIDX_MAX_LENGTH);
	shape->sigBytes = (shape->sigBits + 7) / 8;
	shape->sigWords = (shape->sigBits + 63) / 64;
	shape->targetFpr = opts->length == 0 && totalBits == n * defaultBits ? fpr : 0;
}

/*
 * Say which of an index's options, legal as they are, build an index other
 * than the one they seem to ask for: colN past the last column, a column
 * that sets as many bits as the signature has, the sliced layout with a
 * signature too long for it.  Called when the index is built, with the
 * shape BloomResolveOptions made.
 */
void
BloomReportOptions(Relation index, const BloomShape *shape)
{
	BloomOptions *opts = (BloomOptions *) index->rd_options;
	int			n = RelationGetNumberOfAttributes(index);
	int			i;

	if (opts == NULL)
	{
		/* Without options the default shape always fits the default layout */
		Assert(shape->layout == BLOOMIDX_DEFAULT_LAYOUT);
		return;
	}

	for (i = n; i < BLOOMIDX_MAX_COLUMNS; i++)
		if (opts->bitsPerColumn[i] != 0)
			ereport(NOTICE,
					(errmsg_plural("col%d of index \"%s\" is ignored because the index has only %d column",
								   "col%d of index \"%s\" is ignored because the index has only %d columns",
								   n, i + 1, RelationGetRelationName(index), n)));

	for (i = 0; i < n; i++)
		if (shape->bitsPerColumn[i] >= shape->sigBits)
			ereport(NOTICE,
					(errmsg("col%d of index \"%s\" sets %d bits in a signature of %d bits",
							i + 1, RelationGetRelationName(index),
							shape->bitsPerColumn[i], shape->sigBits),
					 errdetail("Most bits of every signature are set, so the index filters out few rows."),
					 errhint("Give col%d a value below %d, or a longer length.",
							 i + 1, shape->sigBits)));

	/*
	 * The sliced layout, given or the default, falls back to the row layout
	 * for a long signature.  Without a layout given, the hint says how to
	 * ask for the row layout and be quiet.
	 */
	if (opts->layout == BLOOMIDX_LAYOUT_SLICED &&
		shape->layout != BLOOMIDX_LAYOUT_SLICED)
		ereport(NOTICE,
				(errmsg("index \"%s\" gets the row layout because its signature of %d bits is longer than the sliced layout's maximum of %d",
						RelationGetRelationName(index), shape->sigBits,
						BLOOMIDX_SLICED_MAX_LENGTH),
				 errhint("For the sliced layout, give length = %d or less, or fewer bits per column.",
						 BLOOMIDX_SLICED_MAX_LENGTH)));
	else if (opts->layout == 0 && shape->layout != BLOOMIDX_DEFAULT_LAYOUT)
		ereport(NOTICE,
				(errmsg("index \"%s\" gets the row layout because its signature of %d bits is longer than the sliced layout's maximum of %d",
						RelationGetRelationName(index), shape->sigBits,
						BLOOMIDX_SLICED_MAX_LENGTH),
				 errdetail("The sliced layout is the default, and signatures it cannot take get the row layout."),
				 errhint("Give layout = 'row' to ask for the row layout, or length = %d or less, or fewer bits per column, for the sliced layout.",
						 BLOOMIDX_SLICED_MAX_LENGTH)));
}
