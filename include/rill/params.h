/* MCA-style parameters: one typed registry fed by defaults, files, environment,
 * command line and code. */
#ifndef RILL_PARAMS_H
#define RILL_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rill_param_type {
    RILL_PARAM_INT,    /**< int64_t with an inclusive [min, max] range */
    RILL_PARAM_SIZE,   /**< uint64_t byte count; accepts units k, M, G, T (powers of 1024) */
    RILL_PARAM_BOOL,   /**< accepts 1/0/true/false/yes/no/on/off (any case) */
    RILL_PARAM_STRING, /**< any string */
    RILL_PARAM_ENUM,   /**< one of a fixed list of names */
} rill_param_type_t;

/** Where the current value came from, weakest first. */
typedef enum rill_param_source {
    RILL_PARAM_SOURCE_DEFAULT = 0,
    RILL_PARAM_SOURCE_FILE,    /**< ~/.rill/mca-params.conf, then files in RILL_MCA_param_files */
    RILL_PARAM_SOURCE_ENV,     /**< RILL_MCA_<name> */
    RILL_PARAM_SOURCE_CMDLINE, /**< --mca <name> <value> */
    RILL_PARAM_SOURCE_SET,     /**< rill_param_set() from code */
} rill_param_source_t;

/** Visibility levels: rill_info shows USER by default and every level with --all. */
enum {
    RILL_PARAM_LEVEL_USER = 1,
    RILL_PARAM_LEVEL_TUNER = 2,
    RILL_PARAM_LEVEL_DEVELOPER = 3,
};

typedef struct rill_param rill_param_t; /**< opaque; owned by the registry, lives until exit */

/**
 * Load the value sources: the files, the RILL_MCA_* environment, and the
 * `--mca <name> <value>` pairs of the command line. Rill consumes only its own
 * options: they are removed from argc and argv (argv's array is edited in place;
 * the strings are copied). argc/argv may be NULL. Values are kept as text until
 * the parameter is registered. File format: `name = value` lines; '#' at the start
 * of a line or after a blank starts a comment; blank lines are ignored; within and
 * across files the last line for a name wins. A missing $HOME/.rill/mca-params.conf
 * is not an error. RILL_MCA_param_files itself is not a parameter.
 * Calling it again re-reads the files and the environment and replaces what the
 * earlier call loaded from files, environment and command line (not the
 * rill_param_set values), then re-resolves every registered parameter.
 * Every source is read even after an error, so `--mca` is always taken out of argv.
 * Errors: RILL_ERR_INVALID_ARG for `--mca` without a name and a value, or with an
 * empty name (or a re-resolved value that is not allowed), RILL_ERR_IO for a file named
 * in RILL_MCA_param_files that cannot be read or a file with a malformed line (no '=',
 * an empty or invalid name, a NUL byte; the message gives file:line). Main thread.
 */
RILL_API rill_status_t rill_params_load(int *argc, char ***argv);

/**
 * Register a parameter named <framework>_<component>_<name> (lower case, digits and
 * '_'). Registering the same name again with the same type returns the existing
 * handle. The value is resolved at once from the loaded sources; a bad value gives a
 * clear error naming the parameter, the value, its source and what is allowed, and
 * returns RILL_ERR_INVALID_ARG; the parameter is registered all the same, keeps its
 * default, and *param_p is set so that the caller can read it. On any other error
 * (invalid name, same name registered with another type, default not allowed, no
 * memory) *param_p is set to NULL and nothing is registered. Registering the same
 * name again with the same type keeps the first registration (its default, range,
 * help). name, help and enum value strings are copied. Main thread (registration is
 * not thread-safe); reading a value afterwards is safe from any thread.
 */
RILL_API rill_status_t rill_param_register_int(const char *name, const char *help, int level,
                                               int64_t def, int64_t min, int64_t max,
                                               rill_param_t **param_p);
RILL_API rill_status_t rill_param_register_size(const char *name, const char *help, int level,
                                                uint64_t def, uint64_t min, uint64_t max,
                                                rill_param_t **param_p);
RILL_API rill_status_t rill_param_register_bool(const char *name, const char *help, int level,
                                                bool def, rill_param_t **param_p);
RILL_API rill_status_t rill_param_register_string(const char *name, const char *help, int level,
                                                  const char *def, rill_param_t **param_p);
/** values: NULL-terminated list of allowed names; def must be one of them. Values from
 * the sources are matched case-insensitively. */
RILL_API rill_status_t rill_param_register_enum(const char *name, const char *help, int level,
                                                const char *const *values, const char *def,
                                                rill_param_t **param_p);

/** A parameter declared as a row of a table: what the rill_param_register_* call of its
 * type takes, and where its handle lands. A component declares its parameters in one static
 * table and registers them with rill_params_register_table. */
typedef struct rill_param_decl {
    const char *name;
    rill_param_type_t type;
    int level;
    const char *help; /**< what it does and when to change it */
    union {
        struct {
            int64_t def, min, max;
        } i; /**< RILL_PARAM_INT */
        struct {
            uint64_t def, min, max;
        } u;    /**< RILL_PARAM_SIZE */
        bool b; /**< RILL_PARAM_BOOL */
        struct {
            const char *def;
            const char *const *values; /**< ENUM: the allowed names, NULL-terminated */
        } s;                           /**< RILL_PARAM_STRING, RILL_PARAM_ENUM */
    } v;
    unsigned flags;       /**< RILL_PARAM_SAME_ON_ALL_RANKS */
    rill_param_t **param; /**< the handle, for reading the value (NULL: not kept) */
} rill_param_decl_t;

/** rill_param_decl_t.flags: rill_param_set_same_on_all_ranks once registered. */
#define RILL_PARAM_SAME_ON_ALL_RANKS 1u

/** Register every row of decls[0 .. n) as its type's rill_param_register_* call would, and
 * mark it when its flags say so. Every row is tried; the first error is returned (a bad
 * value from a source is said for each parameter that has one). Main thread. */
RILL_API rill_status_t rill_params_register_table(const rill_param_decl_t *decls, size_t n);

/** Current values. get_string works for STRING (may be NULL if that is the default)
 * and ENUM (the chosen name), and returns NULL for other types; get_enum returns the
 * index of the chosen name. A string returned stays valid until process exit, even if
 * the value changes. Any thread. */
RILL_API int64_t rill_param_get_int(const rill_param_t *param);
RILL_API uint64_t rill_param_get_size(const rill_param_t *param);
RILL_API bool rill_param_get_bool(const rill_param_t *param);
RILL_API const char *rill_param_get_string(const rill_param_t *param);
RILL_API int rill_param_get_enum(const rill_param_t *param);

/**
 * Mark a registered parameter as one every rank must set alike: rill_init compares its
 * value across the ranks and, when they differ, stops every rank with a message naming it
 * and each rank's value and source. For parameters from which each rank decides alone
 * something the others rely on (how a tile moves between two ranks: each would wait for a
 * message the other never sends). rill_info shows the mark. RILL_ERR_INVALID_ARG for NULL.
 * Main thread, before rill_init's check (at registration).
 */
RILL_API rill_status_t rill_param_set_same_on_all_ranks(rill_param_t *param);

/** Find a registered parameter by name. RILL_ERR_NOT_FOUND if none. */
RILL_API rill_status_t rill_param_lookup(const char *name, rill_param_t **param_p);

/**
 * Set a parameter from code (the strongest source). The value is parsed as text
 * ("64k", "yes", "lfq"); a bad value is RILL_ERR_INVALID_ARG with the same message as
 * other sources and leaves the parameter unchanged. Setting a name not yet registered
 * stores the value for its registration. Main thread.
 */
RILL_API rill_status_t rill_param_set(const char *name, const char *value);

/**
 * Warn, once per name, about every RILL_MCA_* variable, file entry and --mca name that
 * no registered parameter matches, naming the nearest known name when one is close (a
 * few edits away, or the same name with a `_suffix` more or less); a RILL_MCA_=value
 * variable (empty name) is reported as such. Returns the number of unknown names.
 * Called by rill_init after every framework registered.
 */
RILL_API int rill_params_warn_unknown(void);

/** Read-only description of one parameter, for tools such as rill_info. */
typedef struct rill_param_info {
    const char *name;
    const char *help;
    rill_param_type_t type;
    int level;
    rill_param_source_t source;
    const char *source_detail; /**< "file:line", "RILL_MCA_x", "--mca", or NULL (default,
                                    set); valid until the value changes */
    char value[256];           /**< current value as text (sizes in bytes) */
    char allowed[256];         /**< what is allowed, as text ("0..64", "lfq|gpq", "bool") */
    char def[128];             /**< the default as text */
    bool same_on_all_ranks;    /**< rill_param_set_same_on_all_ranks */
} rill_param_info_t;

/** Number of registered parameters, and the i-th in name order. */
RILL_API size_t rill_params_count(void);
RILL_API rill_status_t rill_params_info(size_t i, rill_param_info_t *info_p);

/** Name of a source ("default", "file", "env", "cmdline", "set"). */
RILL_API const char *rill_param_source_string(rill_param_source_t source);
/** Name of a level ("user", "tuner", "developer"; "?" for another value). */
RILL_API const char *rill_param_level_string(int level);
/** Name of a type ("int", "size", "bool", "string", "enum"; "?" for another value). */
RILL_API const char *rill_param_type_string(rill_param_type_t type);

#ifdef __cplusplus
}
#endif
#endif
