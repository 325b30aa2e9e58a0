/*-------------------------------------------------------------------------
 *
 * visibility.h
 *	  Which of bloomidx's symbols the shared library exports.
 *
 * The Makefile compiles bloomidx with -fvisibility=hidden, so that only
 * what PostgreSQL looks up by name is exported: the functions SQL calls
 * (with their pg_finfo_ records), _PG_init, the module magic, and the
 * parallel build's entry point.  A backend loads modules with RTLD_GLOBAL:
 * an exported helper such as BloomNewBuffer, which contrib/bloom exports
 * too, could otherwise bind to another module's function.
 *
 * PostgreSQL 16 does this for every extension.  On earlier versions
 * PGDLLEXPORT is empty outside Windows and PG_FUNCTION_INFO_V1 does not
 * mark the function itself, so both are redefined here as PostgreSQL 16
 * defines them.  Every file that defines SQL-callable functions includes
 * this header (bloomidx.h does) before its PG_FUNCTION_INFO_V1 lines.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_VISIBILITY_H
#define BLOOMIDX_VISIBILITY_H

#include "fmgr.h"

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

#endif							/* BLOOMIDX_VISIBILITY_H */
