/* Internal entry points of the parameter registry (base/params.c). */
#ifndef RILL_BASE_PARAMS_INTERNAL_H
#define RILL_BASE_PARAMS_INTERNAL_H

#include "rill/params.h"
#include "strbuf.h"

/**
 * Free every registered parameter, every loaded source (files, environment,
 * command line, rill_param_set values) and the record of names already warned
 * about, leaving the registry as at process start. Every rill_param_t handle and
 * every string a getter or rill_params_info returned becomes invalid. For tests
 * that need a clean registry. Main thread, with no other thread reading a value.
 */
void rill_params_reset(void);

/*
 * The readers behind rill_params_load, without I/O, for tests and the fuzz target
 * (tests/fuzz). Each adds to what is loaded (nothing is cleared) and resolves nothing:
 * call rill_params_resolve afterwards. Main thread.
 */

/**
 * Parse text as the content of a parameter file named origin (used in messages and
 * source details as "origin:line"): `name = value` lines as rill_params_load reads them;
 * text may hold any bytes (a line with a NUL byte is malformed). The entries go to the
 * file source. RILL_ERR_IO if a line is malformed (each one reported with origin:line),
 * RILL_ERR_NO_MEMORY.
 */
rill_status_t rill_params_read_text(const char *origin, const char *text, size_t len);

/**
 * Take the RILL_MCA_<name>=<value> strings of envp (NULL-terminated, as `environ`; other
 * strings are skipped) into the environment source. RILL_ERR_NO_MEMORY only.
 */
rill_status_t rill_params_read_env(char *const *envp);

/** Re-resolve every registered parameter from what is loaded (the end of
 * rill_params_load). RILL_ERR_INVALID_ARG if a value is not allowed (reported). */
rill_status_t rill_params_resolve(void);

/* params_report.c */

/** At params_verbose >= 1, log (component params) the parameters whose value is not their
 * default, each with its source; at >= 2 every parameter. rill_init calls it once every
 * framework registered. Main thread. */
void rill_params_log(void);

/** Append every registered parameter to sb as a JSON array of objects: name, type, value
 * (as text), source, where (file:line, the variable, "--mca", or null), default, allowed,
 * level. For the runtime report and the traces' metadata. Main thread. */
void rill_params_json(rill_strbuf_t *sb);

#endif
