/* bloomidx--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomidx" to load this file. \quit

-------------------------------------------------------------------------------
-- Section: index access method (src/build.c ... src/validate.c)
-------------------------------------------------------------------------------

-------------------------------------------------------------------------------
-- Section: ad hoc bloom filters (src/filter.c)
-------------------------------------------------------------------------------

-------------------------------------------------------------------------------
-- Section: inspection and verification (src/inspect.c)
-------------------------------------------------------------------------------
