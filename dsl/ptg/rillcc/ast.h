/* rillcc's syntax tree of a .rill file (docs/ptg.md): globals, task classes with their
 * parameters, affinity, flows and dependencies, priority, flop estimate and bodies. Built by
 * the parser (parser.y), checked by check.c. Every node keeps where it was written, for
 * messages "file:line:column". */
#ifndef RILLCC_AST_H
#define RILLCC_AST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct loc {
    int line, col;
} loc_t;

/* ---------------------------------------------------------------- expressions */

typedef enum {
    E_INT,   /* ival */
    E_FLOAT, /* text */
    E_ID,    /* text */
    E_UN,    /* op, a */
    E_BIN,   /* op, a, b */
    E_TERN,  /* a ? b : c */
    E_CALL,  /* text (a C function of the prologue) (args): its value as an int64_t */
} expr_kind_t;

struct arg;

typedef struct expr {
    expr_kind_t kind;
    loc_t loc;
    long long ival;
    char *text;
    int op;    /* the operator's token (a character, or a parser token for two-character ones) */
    int depth; /* the subtree's height (1: a leaf), at most RILLCC_MAX_DEPTH */
    struct expr *a, *b, *c;
    struct arg *args; /* E_CALL: its arguments (lo of each) */
} expr_t;

/** The deepest expression tree (and parentheses) the parser takes: every walk of a tree
 * (checks, generation, dump) recurses on it, so its depth bounds their stacks; a longer
 * chain is an error at the operator that goes past it. */
#define RILLCC_MAX_DEPTH 1000

/* ---------------------------------------------------------------- dependencies */

/** An argument of a target: one value, or a range lo .. hi (a broadcast). */
typedef struct arg {
    expr_t *lo, *hi; /* hi: NULL for one value */
    struct arg *next;
} arg_t;

typedef enum {
    T_TASK, /* flow of a task: flow name, class name, args */
    T_DATA, /* a tile of a collection: collection name, args */
    T_NONE, /* NEW (a temporary) or NULL (nothing) */
} target_kind_t;

typedef struct target {
    target_kind_t kind;
    loc_t loc;
    char *flow;  /* T_TASK */
    char *name;  /* T_TASK: class; T_DATA: collection; T_NONE: "NEW" or "NULL" */
    arg_t *args; /* T_TASK, T_DATA */
    int nargs;
} target_t;

typedef struct dep {
    int dir; /* '<' input (<-), '>' output (->) */
    loc_t loc;
    expr_t *guard;   /* NULL: always */
    target_t *then;  /* taken when the guard holds (or always) */
    target_t *other; /* after ':' (may be NULL) */
    struct dep *next;
} dep_t;

/* ---------------------------------------------------------------- task classes */

typedef enum { F_READ, F_WRITE, F_RW, F_CTL } flow_kind_t;

typedef struct flow {
    flow_kind_t kind;
    char *name;
    char *type; /* [type = "C type"]: what the body sees the data as (NULL: double *) */
    loc_t loc;
    dep_t *deps;
    struct flow *next;
} flow_t;

/** A definition in a class's header: a parameter's range (lo .. hi [.. step]) or a local
 * value (lo alone, is_local). */
typedef struct def {
    char *name;
    loc_t loc;
    expr_t *lo, *hi, *step;
    bool is_param; /* named in the class's parameter list */
    struct def *next;
} def_t;

typedef struct body {
    char *type; /* NULL: CPU; "CUDA" */
    char *code;
    loc_t loc;     /* of BODY */
    int code_line; /* the code's first line (#line in the generated C) */
    struct body *next;
} body_t;

typedef struct tclass {
    char *name;
    loc_t loc;
    char **params;
    loc_t *param_locs;
    int nparams;
    def_t *defs;
    char *aff_name; /* affinity: collection and args */
    arg_t *aff_args;
    int aff_nargs;
    loc_t aff_loc;
    flow_t *flows;
    expr_t *priority;
    expr_t *flops;
    expr_t *urgent; /* non-zero: the task is on the critical path (RILL_DTD_URGENT) */
    body_t *bodies;
    struct tclass *next;
} tclass_t;

/* ---------------------------------------------------------------- the file */

typedef struct global {
    char *name;
    char *type; /* the C type, as written */
    loc_t loc;
    struct global *next;
} global_t;

/** A global names tiles when its type is a pointer to the tiled matrix (tiles A(m, n)) or
 * to a keyed collection (data D(key), each of the collection's datum size). */
static inline bool global_is_matrix(const global_t *g)
{
    return g && strstr(g->type, "rill_matrix_t") && strchr(g->type, '*');
}
static inline bool global_is_keyed(const global_t *g)
{
    return g && strstr(g->type, "rill_collection_t") && strchr(g->type, '*');
}
static inline bool global_is_collection(const global_t *g)
{
    return global_is_matrix(g) || global_is_keyed(g);
}
/** The indices of one tile or datum of collection g: 2 (row, column) or 1 (the key). */
static inline int global_indices(const global_t *g)
{
    return global_is_keyed(g) ? 1 : 2;
}

/** A global of an integer type (not double, not a pointer): a symbol of check.c's affine
 * forms; the generated code divides it through rill_ptg_div. */
static inline bool global_is_integer(const global_t *g)
{
    return !strchr(g->type, '*') && !strstr(g->type, "double") && !strstr(g->type, "float") &&
           (strstr(g->type, "int") || strstr(g->type, "long") || strstr(g->type, "short") ||
            strstr(g->type, "size_t") || strstr(g->type, "unsigned"));
}

/** A global that is a number (an integer, or a double or float that is no pointer). The
 * others (a struct, a pointer that is not a collection) are opaque: expressions can only
 * hand them to a function of the prologue, f(graph, t). */
static inline bool global_is_number(const global_t *g)
{
    return global_is_integer(g) ||
           (!strchr(g->type, '*') && (strstr(g->type, "double") || strstr(g->type, "float")));
}

typedef struct program {
    const char *file;
    char *prologue; /* %{ ... %}, copied into the generated C */
    loc_t prologue_loc;
    global_t *globals;
    tclass_t *classes;
} program_t;

/** At most this many bytes of source (16 MiB): a .rill file is a few KiB; a larger input
 * is a mistake (a device, a generated blob), and reading it whole would take the memory
 * (main.c refuses it before reading; rillcc_compile too, for other callers). */
#define RILLCC_MAX_INPUT (16u << 20)

/** The tree being built, and where diagnostics go (parser.y, lexer.l, check.c). */
extern program_t rillcc_prog;
extern int rillcc_errors;

/** "file:line:col: error: message" and the offending line with a caret under the column. */
void rillcc_error(loc_t loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rillcc_warning(loc_t loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* constructors (ast.c): out of memory ends the compiler with a message */
void *rillcc_alloc(size_t size);
/** A binary operator's C text: the parser's token for two-character ones, else the
 * character itself (written into one, which must outlive the use). */
const char *rillcc_op_text(int op, char one[2]);
char *rillcc_strdup(const char *s);
expr_t *expr_new(expr_kind_t kind, loc_t loc);

/** Free every node of the last compilation (the tree, its strings). */
void rillcc_free_all(void);

/** Compile the text src (len bytes; name in messages): parse, check, and with dump print
 * the tree there. Returns the number of errors (reported on stderr). The tree stays until
 * rillcc_free_all. Not reentrant (one compilation at a time per process). */
int rillcc_compile(const char *name, const char *src, size_t len, FILE *dump);

/** Semantic checks of the whole program (check.c): 0 when it is valid. */
int rillcc_check(program_t *p);
/** Write the C of a checked program (gen.c): the classes into c_out, the globals' struct
 * and NAME_taskpool_create into h_out (included by the C as h_name). name: a C identifier.
 * Returns the number of errors (constructs the generator does not handle yet). */
int rillcc_generate(const program_t *p, const char *name, FILE *c_out, FILE *h_out,
                    const char *h_name, const char *c_name);

/** Print the program back (--dump: the tree the checks saw). */
void rillcc_dump(const program_t *p, FILE *out);

#endif
