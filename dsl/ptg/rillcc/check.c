/* rillcc's semantic checks (docs/ptg.md, "What rillcc checks"): names, scopes, the order of
 * definitions, collections against values, and that the two sides of every dependency
 * between tasks agree. Each problem is reported at its place; checking goes on so one run
 * reports them all. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "parser.h"
#include "rill/ptg.h" /* the runtime's limits of a class */

static program_t *prog;

static global_t *global_find(const char *name)
{
    for (global_t *g = prog->globals; g; g = g->next)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

static tclass_t *class_find(const char *name)
{
    for (tclass_t *c = prog->classes; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static flow_t *flow_find(const tclass_t *c, const char *name)
{
    for (flow_t *f = c->flows; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static def_t *def_find(const tclass_t *c, const char *name)
{
    for (def_t *d = c->defs; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

/* ---------------------------------------------------------------- expressions */

/** An expression's value when it is a constant: integers and operators only (no names,
 * whose values come with the taskpool, nor numbers with a fraction), as C computes it on
 * int64_t. */
typedef struct cval {
    bool known;
    long long v;
} cval_t;

static const cval_t unknown = { false, 0 };

/* op on the constants x and y, or unknown where C's result would be undefined: that is
 * reported at e (the operator), as a task computing it would die (SIGFPE) or be wrong */
static cval_t fold_bin(const expr_t *e, long long x, long long y)
{
    long long r = 0;
    switch (e->op) {
    case '+':
    case '-':
    case '*':
        if (e->op == '+'   ? __builtin_add_overflow(x, y, &r)
            : e->op == '-' ? __builtin_sub_overflow(x, y, &r)
                           : __builtin_mul_overflow(x, y, &r)) {
            rillcc_error(e->loc,
                         "this constant expression overflows 64-bit integers (%lld %c %lld): "
                         "its values lie in [-9223372036854775808, 9223372036854775807]",
                         x, e->op, y);
            return unknown;
        }
        return (cval_t){ true, r };
    case '/':
    case '%':
        if (y == 0 || (x == LLONG_MIN && y == -1))
            return unknown; /* reported by the caller, known divisor or not */
        return (cval_t){ true, e->op == '/' ? x / y : x % y };
    case '<':
        return (cval_t){ true, x < y };
    case '>':
        return (cval_t){ true, x > y };
    case LE:
        return (cval_t){ true, x <= y };
    case GE:
        return (cval_t){ true, x >= y };
    case EQ:
        return (cval_t){ true, x == y };
    case NE:
        return (cval_t){ true, x != y };
    case AND:
        return (cval_t){ true, x && y };
    case OR:
        return (cval_t){ true, x || y };
    }
    return unknown;
}

static cval_t check_expr(const expr_t *e, const tclass_t *c, const def_t *upto, bool integer,
                         const char *where);

/* A call f(args): f is a C function of the prologue (its value an int64_t), not a name of
 * the program; each argument one value, a global of any type (a collection, a struct: what
 * the function needs to compute the value) or an expression. */
/* ---------------------------------------------------------------- reserved names
 *
 * The generated C declares the globals as a struct's members and, in each body, the
 * globals, parameters, locals and flows as variables next to its own: G (the globals),
 * rill_t_ (the task), rill_bytes_FLOW, RILL_BYTES, task (a CUDA body's runtime task), and
 * the types size_t and int. Its other functions compute the expressions with v (the
 * variables), a (a target's arguments), n, p, ... and names ending in '_' or lo_N, hi_N,
 * st_N, ok_aN: a function called in an expression must not be one of those. */

static const char *const c_keywords[] = {
    "auto",       "break",     "case",           "char",
    "const",      "continue",  "default",        "do",
    "double",     "else",      "enum",           "extern",
    "float",      "for",       "goto",           "if",
    "inline",     "int",       "long",           "register",
    "restrict",   "return",    "short",          "signed",
    "sizeof",     "static",    "struct",         "switch",
    "typedef",    "union",     "unsigned",       "void",
    "volatile",   "while",     "_Alignas",       "_Alignof",
    "_Atomic",    "_Bool",     "_Complex",       "_Generic",
    "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    "alignas",    "alignof",   "bool",           "constexpr",
    "false",      "nullptr",   "static_assert",  "thread_local",
    "true",       "typeof",    "typeof_unqual",
};

/* the generated functions' own names, which a called function's name would be hidden by */
static const char *const gen_locals[] = {
    "g", "v", "a", "p", "t", "n", "out", "visit", "arg", "want", "cap", "cls", "from", "flow",
};

/* name_N / name_aN (lo_0, ok_a2): the generated ranges' and arguments' names */
static bool gen_numbered(const char *s)
{
    static const char *const pre[] = { "lo_", "hi_", "st_", "ok_" };
    for (size_t k = 0; k < sizeof(pre) / sizeof(pre[0]); k++)
        if (!strncmp(s, pre[k], 3)) {
            const char *d = s + 3 + (s[3] == 'a');
            if (!*d)
                return false;
            while (*d >= '0' && *d <= '9')
                d++;
            return !*d;
        }
    return false;
}

/* Why name, declared as what (a global, a parameter, ..., or a function for a call), cannot
 * be in the generated C (NULL: it can). cuda: a CUDA body sees it (task is taken there). */
static const char *reserved_why(const char *name, bool call, bool cuda)
{
    for (size_t k = 0; k < sizeof(c_keywords) / sizeof(c_keywords[0]); k++)
        if (!strcmp(name, c_keywords[k]))
            return "it is a C keyword";
    if (!strcmp(name, "G"))
        return "G is the generated code's pointer to the globals";
    if (call) {
        for (size_t k = 0; k < sizeof(gen_locals) / sizeof(gen_locals[0]); k++)
            if (!strcmp(name, gen_locals[k]))
                return "the generated functions that compute expressions have a variable of "
                       "that name, which would hide the function";
        size_t n = strlen(name);
        if ((n && name[n - 1] == '_') || gen_numbered(name))
            return "the generated functions name their variables so (names ending in '_', "
                   "lo_N, hi_N, st_N, ok_aN)";
        return NULL;
    }
    if (!strncmp(name, "rill_", 5) || !strncmp(name, "RILL_", 5))
        return "names starting with rill_ or RILL_ are Rill's and the generated code's "
               "(rill_t_, rill_bytes_FLOW, RILL_BYTES)";
    if (!strcmp(name, "size_t"))
        return "a body declares its flows' sizes as size_t";
    if (cuda && !strcmp(name, "task"))
        return "a CUDA body sees the runtime's task as task";
    return NULL;
}

/* An error when name (declared at loc as what) is reserved. */
static void check_reserved(loc_t loc, const char *name, const char *what, bool call, bool cuda)
{
    const char *why = reserved_why(name, call, cuda);
    if (why)
        rillcc_error(loc, "the name '%s' of %s is reserved in the generated C: %s; rename it", name,
                     what, why);
}

/* whether class c has a CUDA body (any class, for c NULL) */
static bool has_cuda(const tclass_t *c)
{
    for (const tclass_t *k = c ? c : prog->classes; k; k = c ? NULL : k->next)
        for (const body_t *b = k->bodies; b; b = b->next)
            if (b->type && !strcmp(b->type, "CUDA"))
                return true;
    return false;
}

static void check_call(const expr_t *e, const tclass_t *c, const def_t *upto)
{
    check_reserved(e->loc, e->text, "a function", true, false);
    if (global_find(e->text) || (c && def_find(c, e->text)))
        rillcc_error(e->loc,
                     "'%s' is a value, not a function: a call f(...) names a C function of the "
                     "prologue",
                     e->text);
    else if (class_find(e->text))
        rillcc_error(e->loc,
                     "'%s' is a task class: a call f(...) names a C function of the prologue "
                     "(a task's flow in a dependency is written 'FLOW %s(args)')",
                     e->text, e->text);
    for (const arg_t *a = e->args; a; a = a->next) {
        if (a->hi)
            rillcc_error(a->lo->loc,
                         "a range in the arguments of %s(...): a function gets one "
                         "value per argument",
                         e->text);
        const global_t *g = a->lo->kind == E_ID ? global_find(a->lo->text) : NULL;
        if (!g || global_is_number(g)) /* a global of another type is handed over as it is */
            check_expr(a->lo, c, upto, false, "an argument");
    }
}

/** Check the names of e: a global value, or a definition of c; with upto (a definition's
 * own range) only those defined before it. integer: the value must be an integer (ranges,
 * indices), so a number with a fraction is a type clash there. A division or modulo by a
 * constant 0 (or INT64_MIN / -1) is an error: the task computing it would die of SIGFPE.
 * Returns e's value when it is a constant (folded once, bottom up, as the tree is walked).
 * The recursion is as deep as the tree: at most RILLCC_MAX_DEPTH (parser.y). */
static cval_t check_expr(const expr_t *e, const tclass_t *c, const def_t *upto, bool integer,
                         const char *where)
{
    if (!e)
        return unknown;
    switch (e->kind) {
    case E_INT:
        return (cval_t){ true, e->ival };
    case E_FLOAT:
        if (integer)
            rillcc_error(e->loc,
                         "%s is an integer, but '%s' is not: use an integer "
                         "expression here",
                         where, e->text);
        return unknown;
    case E_ID: {
        global_t *g = global_find(e->text);
        if (g) {
            if (global_is_collection(g))
                rillcc_error(e->loc,
                             "'%s' is a collection (%s), not a value: it cannot be used in an "
                             "expression (a tile of it is written %s(%s) in a dependency)",
                             e->text, g->type, e->text, global_is_keyed(g) ? "key" : "m, n");
            else if (!global_is_number(g))
                rillcc_error(e->loc,
                             "'%s' has type %s, not a number: it can only be handed to a "
                             "function of the prologue (f(%s, ...))",
                             e->text, g->type, e->text);
            return unknown;
        }
        if (c) {
            for (const def_t *d = c->defs; d; d = d->next) {
                if (strcmp(d->name, e->text) != 0)
                    continue;
                if (upto) { /* only definitions before upto, and not upto itself */
                    bool before = false;
                    for (const def_t *b = c->defs; b && b != upto; b = b->next)
                        if (b == d)
                            before = true;
                    if (d == upto) {
                        rillcc_error(e->loc, "the definition of '%s' uses '%s' itself", upto->name,
                                     e->text);
                        return unknown;
                    }
                    if (!before) {
                        rillcc_error(e->loc,
                                     "the definition of '%s' uses '%s', which is defined after "
                                     "it (line %d): define '%s' first",
                                     upto->name, e->text, d->loc.line, e->text);
                        return unknown;
                    }
                }
                return unknown;
            }
        }
        if (c && class_find(e->text))
            rillcc_error(e->loc, "'%s' is a task class, not a value", e->text);
        else
            rillcc_error(e->loc,
                         "unknown identifier '%s': not a global%s%s%s (globals are declared "
                         "'NAME [type = \"C type\"]')",
                         e->text, c ? ", nor a parameter or local of " : "", c ? c->name : "",
                         upto ? " defined before" : "");
        return unknown;
    }
    case E_UN: {
        cval_t x = check_expr(e->a, c, upto, integer, where);
        if (!x.known)
            return unknown;
        if (e->op == '!')
            return (cval_t){ true, !x.v };
        if (x.v == LLONG_MIN) {
            rillcc_error(e->loc, "this constant expression overflows 64-bit integers "
                                 "(-(-9223372036854775808))");
            return unknown;
        }
        return (cval_t){ true, -x.v };
    }
    case E_BIN: {
        cval_t x = check_expr(e->a, c, upto, integer, where);
        cval_t y = check_expr(e->b, c, upto, integer, where);
        if ((e->op == '/' || e->op == '%') && y.known && y.v == 0)
            rillcc_error(e->loc,
                         "%s by zero: the divisor is a constant 0 (a task computing it would "
                         "die of SIGFPE); divide by a non-zero value",
                         e->op == '/' ? "division" : "modulo");
        else if ((e->op == '/' || e->op == '%') && y.known && y.v == -1 && x.known &&
                 x.v == LLONG_MIN)
            rillcc_error(e->loc,
                         "-9223372036854775808 %c -1 overflows 64-bit integers (a task "
                         "computing it would die of SIGFPE)",
                         e->op);
        if (x.known && y.known)
            return fold_bin(e, x.v, y.v);
        /* C's && and || stop at their left operand */
        if (x.known && ((e->op == AND && !x.v) || (e->op == OR && x.v)))
            return (cval_t){ true, e->op == OR };
        return unknown;
    }
    case E_CALL:
        check_call(e, c, upto);
        return unknown;
    case E_TERN: {
        cval_t x = check_expr(e->a, c, upto, false, where);
        cval_t y = check_expr(e->b, c, upto, integer, where);
        cval_t z = check_expr(e->c, c, upto, integer, where);
        return x.known ? (x.v ? y : z) : unknown;
    }
    }
    return unknown;
}

/* A range lo .. hi [.. step] runs upward (the generated loops: for (v = lo; v <= hi; v +=
 * step), and a task is valid when lo <= v <= hi): with a constant step it must be
 * positive, and a constant end must leave room for the last v += step (else the loop never
 * ends). lo > hi is an empty range (no task), not an error. what: the range's owner. */
static void check_range(const char *what, const expr_t *hi_e, cval_t hi, const expr_t *step_e,
                        cval_t step)
{
    if (step_e && step.known && step.v == 0)
        rillcc_error(step_e->loc, "the step of %s is 0: the range would never end", what);
    else if (step_e && step.known && step.v < 0)
        rillcc_error(step_e->loc,
                     "the step of %s is %lld: a range lo .. hi .. step runs upward from lo "
                     "to hi, so its step must be positive (lo > hi is an empty range)",
                     what, step.v);
    else if (hi.known && hi.v > LLONG_MAX - (step_e ? (step.known ? step.v : 1) : 1))
        rillcc_error(hi_e->loc,
                     "%s ends at %lld: its loop would overflow 64-bit integers past it; end "
                     "it at most at %lld",
                     what, hi.v, LLONG_MAX - (step_e && step.known ? step.v : 1));
}

/* ---------------------------------------------------------------- dependencies */

static const char *flow_kind_name(flow_kind_t k)
{
    static const char *const n[] = { "READ", "WRITE", "RW", "CTL" };
    return n[k];
}

/** Whether class c's flow f has a dependency in direction dir on flow fname of class cname. */
static bool has_dep_on(const tclass_t *c, const flow_t *f, int dir, const char *fname,
                       const char *cname)
{
    for (const dep_t *d = f->deps; d; d = d->next) {
        if (d->dir != dir)
            continue;
        const target_t *ts[2] = { d->then, d->other };
        for (int i = 0; i < 2; i++)
            if (ts[i] && ts[i]->kind == T_TASK && strcmp(ts[i]->flow, fname) == 0 &&
                strcmp(ts[i]->name, cname) == 0)
                return true;
    }
    (void)c;
    return false;
}

/* "a tile of A has 2 indices (row, column), not 3" (or a datum of a keyed collection, 1) */
static const char *indices_text(const global_t *g, int nargs)
{
    static char msg[300];
    if (global_is_keyed(g))
        snprintf(msg, sizeof(msg),
                 "a datum of %s (a keyed collection) has 1 index (its key), "
                 "not %d",
                 g->name, nargs);
    else
        snprintf(msg, sizeof(msg), "a tile of %s has 2 indices (row, column), not %d", g->name,
                 nargs);
    return msg;
}

static void check_target(const tclass_t *c, const flow_t *f, const dep_t *d, const target_t *t)
{
    const char *arrow = d->dir == '<' ? "<-" : "->";
    for (const arg_t *a = t->args; a; a = a->next) {
        check_expr(a->lo, c, NULL, true, "an index");
        cval_t hi = check_expr(a->hi, c, NULL, true, "an index");
        if (a->hi)
            check_range("this range", a->hi, hi, NULL, unknown);
        /* ranges: an output to a set of tasks (a broadcast), or a control flow waiting for
         * a set of tasks (a gather); a data input comes from one place */
        if (a->hi && (t->kind == T_DATA || (d->dir == '<' && f->kind != F_CTL)))
            rillcc_error(a->lo->loc,
                         "a range here: %s; a range (lo .. hi) sends to a set of tasks (an "
                         "output '->' to a task) or, on a control flow, waits for a set",
                         t->kind == T_DATA ? "a tile is one place"
                                           : "a data input comes from one place");
    }
    switch (t->kind) {
    case T_NONE:
        if (f->kind == F_CTL)
            rillcc_error(t->loc, "a control flow carries no data: %s is for data flows", t->name);
        else if (d->dir == '<' && strcmp(t->name, "NEW") == 0 && f->kind == F_READ)
            rillcc_error(t->loc, "a READ flow cannot start from NEW (an uninitialised "
                                 "tile): make it RW or WRITE, or read it from somewhere");
        return;
    case T_DATA: {
        global_t *g = global_find(t->name);
        if (!g) {
            rillcc_error(t->loc, "unknown collection '%s' in '%s %s' of %s's flow %s%s", t->name,
                         arrow, t->name, c->name, f->name,
                         class_find(t->name) ? " (a task's flow is written 'FLOW CLASS(args)')"
                                             : "");
            return;
        }
        if (!global_is_collection(g)) {
            rillcc_error(t->loc,
                         "'%s' has type %s, not a collection: only a global of type "
                         "'rill_matrix_t *' (tiles A(m, n)) or 'rill_collection_t *' (data "
                         "D(key)) names data",
                         t->name, g->type);
            return;
        }
        if (f->kind == F_CTL)
            rillcc_error(t->loc,
                         "a control flow (CTL) carries no data: it cannot %s a tile "
                         "of %s",
                         d->dir == '<' ? "read" : "write", t->name);
        if (t->nargs != global_indices(g))
            rillcc_error(t->loc, "%s", indices_text(g, t->nargs));
        return;
    }
    case T_TASK: {
        tclass_t *o = class_find(t->name);
        if (!o) {
            rillcc_error(t->loc, "unknown task class '%s' in '%s %s %s(...)' of %s's flow %s",
                         t->name, arrow, t->flow, t->name, c->name, f->name);
            return;
        }
        if (t->nargs != o->nparams)
            rillcc_error(t->loc, "%s has %d parameter%s, but %d argument%s given here", o->name,
                         o->nparams, o->nparams == 1 ? "" : "s", t->nargs,
                         t->nargs == 1 ? " is" : "s are");
        flow_t *of = flow_find(o, t->flow);
        if (!of) {
            rillcc_error(t->loc, "task class %s has no flow '%s'", o->name, t->flow);
            return;
        }
        if ((of->kind == F_CTL) != (f->kind == F_CTL))
            rillcc_error(t->loc,
                         "%s's flow %s is %s and %s's flow %s is %s: a control flow connects "
                         "only to control flows",
                         c->name, f->name, flow_kind_name(f->kind), o->name, of->name,
                         flow_kind_name(of->kind));
        /* the other side must name this one back, in the other direction */
        int back = d->dir == '<' ? '>' : '<';
        if (!has_dep_on(o, of, back, f->name, c->name))
            rillcc_error(t->loc,
                         "the two sides of this dependency disagree: %s's flow %s %s %s's "
                         "flow %s, but %s's flow %s has no '%s %s %s(...)'",
                         c->name, f->name, d->dir == '<' ? "receives from" : "sends to", o->name,
                         of->name, o->name, of->name, back == '<' ? "<-" : "->", f->name, c->name);
        return;
    }
    }
}

/* ---------------------------------------------------------------- task classes */

static void check_class(tclass_t *c)
{
    /* parameters: distinct, each with a definition */
    for (int i = 0; i < c->nparams; i++) {
        if (i == RILL_PTG_MAX_VARS)
            rillcc_error(c->param_locs[i],
                         "%s has %d parameters: the runtime takes at most %d parameters and "
                         "locals together (RILL_PTG_MAX_VARS, rill/ptg.h)",
                         c->name, c->nparams, RILL_PTG_MAX_VARS);
        for (int j = 0; j < i; j++)
            if (strcmp(c->params[i], c->params[j]) == 0)
                rillcc_error(c->param_locs[i], "parameter '%s' of %s is listed twice", c->params[i],
                             c->name);
        def_t *d = def_find(c, c->params[i]);
        if (!d)
            rillcc_error(c->param_locs[i],
                         "parameter '%s' of %s has no range: add '%s = lo .. hi' under the "
                         "class's name",
                         c->params[i], c->name, c->params[i]);
        else
            d->is_param = true;
        if (global_find(c->params[i]))
            rillcc_error(c->param_locs[i], "parameter '%s' of %s hides the global of that name",
                         c->params[i], c->name);
    }
    /* definitions: in order, each using only globals and earlier definitions; a task holds
     * them in an array of the runtime (rill_ptg_task_t's v), which refuses a larger class
     * at taskpool creation without naming the file */
    int ndefs = 0;
    for (def_t *d = c->defs; d; d = d->next) {
        if (++ndefs == RILL_PTG_MAX_VARS + 1 && c->nparams <= RILL_PTG_MAX_VARS)
            rillcc_error(d->loc,
                         "%s has more than %d parameters and locals ('%s' is number %d): the "
                         "runtime takes at most %d (RILL_PTG_MAX_VARS, rill/ptg.h)",
                         c->name, RILL_PTG_MAX_VARS, d->name, ndefs, RILL_PTG_MAX_VARS);
        for (def_t *e = c->defs; e != d; e = e->next)
            if (strcmp(e->name, d->name) == 0)
                rillcc_error(d->loc, "'%s' is defined twice in %s (first at line %d)", d->name,
                             c->name, e->loc.line);
        check_reserved(d->loc, d->name, d->is_param ? "a parameter" : "a local", false,
                       has_cuda(c));
        if (!d->is_param && d->hi)
            rillcc_error(d->loc,
                         "'%s' has a range but is not a parameter of %s: add it to %s(...) or "
                         "give it one value",
                         d->name, c->name, c->name);
        check_expr(d->lo, c, d, true, "a parameter's range");
        cval_t hi = check_expr(d->hi, c, d, true, "a parameter's range");
        cval_t step = check_expr(d->step, c, d, true, "a parameter's step");
        if (d->hi) {
            char what[300];
            snprintf(what, sizeof(what), "'%s'", d->name);
            check_range(what, d->hi, hi, d->step, step);
        }
    }
    /* affinity */
    global_t *g = global_find(c->aff_name);
    if (!g)
        rillcc_error(c->aff_loc,
                     "unknown collection '%s' in the affinity of %s (': A(m, n)' "
                     "names the tile whose rank runs the task)",
                     c->aff_name, c->name);
    else if (!global_is_collection(g))
        rillcc_error(c->aff_loc,
                     "'%s' has type %s, not a collection: the affinity names a "
                     "tile of a global of type 'rill_matrix_t *' or a datum of a "
                     "'rill_collection_t *'",
                     c->aff_name, g->type);
    else if (c->aff_nargs != global_indices(g))
        rillcc_error(c->aff_loc, "%s", indices_text(g, c->aff_nargs));
    for (const arg_t *a = c->aff_args; a; a = a->next) {
        check_expr(a->lo, c, NULL, true, "an index");
        if (a->hi)
            rillcc_error(a->lo->loc, "the affinity is one tile: no range here");
    }
    /* flows: at most the runtime's RILL_PTG_MAX_FLOWS (rill_ptg_task_t's data) */
    int nflows = 0;
    for (flow_t *f = c->flows; f; f = f->next) {
        if (++nflows == RILL_PTG_MAX_FLOWS + 1)
            rillcc_error(f->loc,
                         "%s has more than %d flows ('%s' is number %d): the runtime takes at "
                         "most %d (RILL_PTG_MAX_FLOWS, rill/ptg.h)",
                         c->name, RILL_PTG_MAX_FLOWS, f->name, nflows, RILL_PTG_MAX_FLOWS);
        for (flow_t *e = c->flows; e != f; e = e->next)
            if (strcmp(e->name, f->name) == 0)
                rillcc_error(f->loc, "flow '%s' of %s is declared twice (first at line %d)",
                             f->name, c->name, e->loc.line);
        check_reserved(f->loc, f->name, "a flow", false, has_cuda(c));
        /* a body sees globals, parameters, locals and flows under their names */
        if (global_find(f->name))
            rillcc_error(f->loc,
                         "flow '%s' of %s has the name of a global: a body could not "
                         "tell them apart; rename the flow",
                         f->name, c->name);
        else if (def_find(c, f->name))
            rillcc_error(f->loc,
                         "flow '%s' of %s has the name of one of its parameters or "
                         "locals; rename the flow",
                         f->name, c->name);
        int inputs = 0;
        for (dep_t *d = f->deps; d; d = d->next) {
            inputs += d->dir == '<';
            check_expr(d->guard, c, NULL, false, "a guard");
            check_target(c, f, d, d->then);
            if (d->other)
                check_target(c, f, d, d->other);
        }
        if (inputs == 0 && (f->kind == F_READ || f->kind == F_RW))
            rillcc_error(f->loc,
                         "flow '%s' of %s is %s but has no input: add '<- A(m, n)' (a tile), "
                         "'<- FLOW CLASS(args)' (a task's output) or '<- NEW'",
                         f->name, c->name, flow_kind_name(f->kind));
        else if (inputs == 0 && f->kind == F_WRITE) /* its body would get NULL */
            rillcc_error(f->loc,
                         "flow '%s' of %s is WRITE but has no input, so its body would get "
                         "NULL: add '<- NEW' (a fresh tile to write), '<- A(m, n)' (the tile "
                         "it writes) or '<- FLOW CLASS(args)'",
                         f->name, c->name);
        if (f->kind == F_CTL && f->type)
            rillcc_error(f->loc,
                         "control flow '%s' of %s has a type: it carries no data (a type "
                         "is what a body sees a data flow as)",
                         f->name, c->name);
        else if (f->type && !strchr(f->type, '*'))
            rillcc_error(f->loc,
                         "flow '%s' of %s has type \"%s\": a body sees its data through a "
                         "pointer; write the pointer type, e.g. \"%s *\"",
                         f->name, c->name, f->type, f->type);
        if (f->kind == F_CTL && !f->deps)
            rillcc_warning(f->loc, "control flow '%s' of %s connects to nothing", f->name, c->name);
    }
    check_expr(c->priority, c, NULL, false, "a priority");
    check_expr(c->flops, c, NULL, false, "a flop estimate");
    check_expr(c->urgent, c, NULL, true, "an urgency");
    /* bodies: at most one per type; types CPU (none) and CUDA */
    for (body_t *b = c->bodies; b; b = b->next) {
        if (b->type && strcmp(b->type, "CUDA") != 0)
            rillcc_error(b->loc,
                         "unknown body type '%s' in %s: a body is for the CPU (no "
                         "[type]) or [type = CUDA]",
                         b->type, c->name);
        for (body_t *e = c->bodies; e != b; e = e->next)
            if ((!e->type && !b->type) || (e->type && b->type && !strcmp(e->type, b->type)))
                rillcc_error(b->loc, "%s has two %s bodies: one per type", c->name,
                             b->type ? b->type : "CPU");
    }
}

/* ---------------------------------------------------------------- the tasks of a dependency */

/* When P(p1..pn)'s flow X says '-> Y C(e1..em)', task C(e) receives it only if one of C's
 * inputs '<- X P(f1..fn)' of flow Y names P(p) back: f with C's parameters q := e must give
 * p (and the other way round for an input). Decided where the arguments are affine (integer
 * linear combinations of parameters, locals, integer globals and constants): both sides
 * become linear forms, and a side that differs from p by a non-zero constant can never name
 * it, whatever the parameters and the guards. Anything else (a product of names, a division,
 * a ?:, a range's element) may match: the check says nothing then (no false errors). */

#define LIN_TERMS 8 /* more distinct names in one argument: not decided */

typedef struct lin {
    bool ok; /* affine (else: unknown) */
    long long k;
    int n;
    const char *sym[LIN_TERMS]; /* a parameter of the sending side, a global, or a range's */
    long long coef[LIN_TERMS];  /* element ("#k"), never 0 */
} lin_t;

static lin_t lin_const(long long k)
{
    lin_t l = { .ok = true, .k = k };
    return l;
}

static lin_t lin_sym(const char *sym)
{
    lin_t l = { .ok = true, .n = 1 };
    l.sym[0] = sym;
    l.coef[0] = 1;
    return l;
}

/* *a += m * b (m: 1 or -1, or a constant factor) */
static void lin_addmul(lin_t *a, const lin_t *b, long long m)
{
    if (!a->ok || !b->ok) {
        a->ok = false;
        return;
    }
    long long t;
    if (__builtin_mul_overflow(b->k, m, &t) || __builtin_add_overflow(a->k, t, &a->k)) {
        a->ok = false;
        return;
    }
    for (int i = 0; i < b->n; i++) {
        if (__builtin_mul_overflow(b->coef[i], m, &t)) {
            a->ok = false;
            return;
        }
        int j = 0;
        while (j < a->n && strcmp(a->sym[j], b->sym[i]) != 0)
            j++;
        if (j == a->n) {
            if (a->n == LIN_TERMS) {
                a->ok = false;
                return;
            }
            a->sym[a->n] = b->sym[i];
            a->coef[a->n++] = 0;
        }
        if (__builtin_add_overflow(a->coef[j], t, &a->coef[j])) {
            a->ok = false;
            return;
        }
        if (a->coef[j] == 0) { /* dropped: a form has no zero term */
            a->n--;
            a->sym[j] = a->sym[a->n];
            a->coef[j] = a->coef[a->n];
        }
    }
}

/** The names of one class as forms: vars[i] is definition i's (a parameter's symbol or
 * binding, a local's definition). */
typedef struct scope {
    const tclass_t *c;
    lin_t vars[RILL_PTG_MAX_VARS];
} scope_t;

/* e as a linear form in scope s (recursion as deep as the tree: RILLCC_MAX_DEPTH) */
static void lin_of(const expr_t *e, const scope_t *s, lin_t *out)
{
    lin_t r;
    *out = (lin_t){ .ok = false };
    switch (e->kind) {
    case E_INT:
        *out = lin_const(e->ival);
        return;
    case E_FLOAT:
    case E_TERN:
    case E_CALL: /* what a function gives is the run's to know */
        return;
    case E_ID: {
        int i = 0;
        for (const def_t *d = s->c->defs; d && i < RILL_PTG_MAX_VARS; d = d->next, i++)
            if (strcmp(d->name, e->text) == 0) {
                *out = s->vars[i];
                return;
            }
        const global_t *g = global_find(e->text);
        if (g && global_is_integer(g))
            *out = lin_sym(g->name);
        return;
    }
    case E_UN:
        if (e->op != '-')
            return;
        lin_of(e->a, s, &r);
        *out = lin_const(0);
        lin_addmul(out, &r, -1);
        return;
    case E_BIN:
        if (e->op != '+' && e->op != '-' && e->op != '*')
            return;
        lin_of(e->a, s, out);
        lin_of(e->b, s, &r);
        if (e->op != '*') {
            lin_addmul(out, &r, e->op == '+' ? 1 : -1);
            return;
        }
        if (!out->ok || !r.ok || (out->n && r.n)) { /* a product of names */
            out->ok = false;
            return;
        }
        if (out->n == 0) { /* k * r */
            long long k = out->k;
            *out = lin_const(0);
            lin_addmul(out, &r, k);
        } else {
            lin_t a = *out;
            *out = lin_const(0);
            lin_addmul(out, &a, r.k);
        }
        return;
    }
}

/* the locals of s->c from its parameters' forms (set by the caller), in order */
static void scope_locals(scope_t *s)
{
    int i = 0;
    for (const def_t *d = s->c->defs; d && i < RILL_PTG_MAX_VARS; d = d->next, i++)
        if (!d->is_param)
            lin_of(d->lo, s, &s->vars[i]);
}

static int def_pos(const tclass_t *c, const char *name)
{
    int i = 0;
    for (const def_t *d = c->defs; d; d = d->next, i++)
        if (strcmp(d->name, name) == 0)
            return i;
    return -1;
}

/* bounded text for messages */
typedef struct text {
    char buf[400];
    size_t o;
} text_t;

static void put(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_t *t, const char *fmt, ...)
{
    if (t->o >= sizeof(t->buf) - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->o, sizeof(t->buf) - t->o, fmt, ap);
    va_end(ap);
    t->o = n < 0 ? t->o : t->o + (size_t)n;
    if (t->o >= sizeof(t->buf) - 1) {
        t->o = sizeof(t->buf) - 1;
        memcpy(t->buf + sizeof(t->buf) - 4, "...", 4);
    }
}

static int op_prec(const expr_t *e)
{
    if (e->kind == E_TERN)
        return 1;
    if (e->kind == E_UN)
        return 8;
    if (e->kind != E_BIN)
        return 9;
    switch (e->op) {
    case OR:
        return 2;
    case AND:
        return 3;
    case EQ:
    case NE:
        return 4;
    case '<':
    case '>':
    case LE:
    case GE:
        return 5;
    case '+':
    case '-':
        return 6;
    default:
        return 7;
    }
}

/* e as written, with the parentheses its operators need */
static void put_expr(text_t *t, const expr_t *e, int outer)
{
    int p = op_prec(e);
    if (p < outer)
        put(t, "(");
    char one[2];
    switch (e->kind) {
    case E_INT:
        put(t, "%lld", e->ival);
        break;
    case E_FLOAT:
    case E_ID:
        put(t, "%s", e->text);
        break;
    case E_UN:
        put(t, "%c", e->op);
        put_expr(t, e->a, 8);
        break;
    case E_BIN:
        put_expr(t, e->a, p);
        put(t, " %s ", rillcc_op_text(e->op, one));
        put_expr(t, e->b, p + 1);
        break;
    case E_CALL:
        put(t, "%s(", e->text);
        for (const arg_t *a = e->args; a; a = a->next) {
            put_expr(t, a->lo, 0);
            put(t, "%s", a->next ? ", " : "");
        }
        put(t, ")");
        break;
    case E_TERN:
        put_expr(t, e->a, 2);
        put(t, " ? ");
        put_expr(t, e->b, 1);
        put(t, " : ");
        put_expr(t, e->c, 1);
        break;
    }
    if (p < outer)
        put(t, ")");
}

static void put_target(text_t *t, int dir, const target_t *tg)
{
    put(t, "%s %s %s(", dir == '<' ? "<-" : "->", tg->flow, tg->name);
    for (const arg_t *a = tg->args; a; a = a->next) {
        put_expr(t, a->lo, 0);
        if (a->hi) {
            put(t, " .. ");
            put_expr(t, a->hi, 0);
        }
        put(t, "%s", a->next ? ", " : "");
    }
    put(t, ")");
}

static void put_lin(text_t *t, const lin_t *l)
{
    for (int i = 0; i < l->n; i++) {
        long long c = l->coef[i];
        if (i == 0)
            put(t, "%s", c < 0 ? "-" : "");
        else
            put(t, " %c ", c < 0 ? '-' : '+');
        if (c != 1 && c != -1)
            put(t, "%llu*", c < 0 ? 0ULL - (unsigned long long)c : (unsigned long long)c);
        put(t, "%s", l->sym[i]);
    }
    if (l->n == 0)
        put(t, "%lld", l->k);
    else if (l->k)
        put(t, " %c %llu", l->k < 0 ? '-' : '+',
            l->k < 0 ? 0ULL - (unsigned long long)l->k : (unsigned long long)l->k);
}

/* d (in class c) is a difference: it is a constant other than 0 */
static bool lin_differs(const lin_t *d)
{
    return d->ok && d->n == 0 && d->k != 0;
}

static const char *const fresh[RILL_PTG_MAX_VARS] = { "#0",  "#1",  "#2",  "#3", "#4",  "#5",
                                                      "#6",  "#7",  "#8",  "#9", "#10", "#11",
                                                      "#12", "#13", "#14", "#15" };

/* Whether candidate ct (of class o, naming class c's task) can name task c(params) back, its
 * class's parameters bound by t's arguments (in c's scope s); got: ct's arguments so bound,
 * printable when every one is affine and names no range's element */
static bool can_match(const tclass_t *c, const scope_t *s, const target_t *t, const tclass_t *o,
                      const target_t *ct, text_t *got)
{
    scope_t os = { .c = o };
    int k = 0;
    for (const arg_t *a = t->args; a && k < o->nparams; a = a->next, k++) {
        int i = def_pos(o, o->params[k]);
        if (i < 0 || i >= RILL_PTG_MAX_VARS)
            return true;
        if (a->hi) /* one element of the range: a name of its own */
            os.vars[i] = lin_sym(fresh[k]);
        else
            lin_of(a->lo, s, &os.vars[i]);
    }
    scope_locals(&os);
    bool printable = true, differs = false;
    lin_t shown[RILL_PTG_MAX_VARS][2];
    k = 0;
    for (const arg_t *a = ct->args; a && k < c->nparams; a = a->next, k++) {
        lin_t p = lin_sym(c->params[k]), lo, hi;
        lin_of(a->lo, &os, &lo);
        shown[k][0] = lo;
        lin_t dlo = lo;
        lin_addmul(&dlo, &p, -1);
        if (!a->hi) {
            differs |= lin_differs(&dlo);
        } else {
            lin_of(a->hi, &os, &hi);
            shown[k][1] = hi;
            lin_t dhi = hi;
            lin_addmul(&dhi, &p, -1);
            /* p is in [lo, hi] only if lo - p <= 0 <= hi - p */
            differs |= (dlo.ok && dlo.n == 0 && dlo.k > 0) || (dhi.ok && dhi.n == 0 && dhi.k < 0);
            printable &= hi.ok;
            for (int j = 0; j < hi.n; j++)
                printable &= hi.sym[j][0] != '#';
        }
        printable &= lo.ok;
        for (int j = 0; j < lo.n; j++)
            printable &= lo.sym[j][0] != '#';
    }
    if (!differs)
        return true;
    if (printable) {
        put(got, "%s(", c->name);
        for (int j = 0; j < k; j++) {
            put_lin(got, &shown[j][0]);
            const arg_t *a = ct->args;
            for (int m = 0; m < j; m++)
                a = a->next;
            if (a->hi) {
                put(got, " .. ");
                put_lin(got, &shown[j][1]);
            }
            put(got, "%s", j + 1 < k ? ", " : "");
        }
        put(got, ")");
    }
    return false;
}

/* class c's flow f's dependency d, target t (a task): some dependency of the other side can
 * name this task back, else an error at t with both sides' text */
static void check_target_args(const tclass_t *c, const flow_t *f, const dep_t *d, const target_t *t)
{
    const tclass_t *o = class_find(t->name);
    const flow_t *of = o ? flow_find(o, t->flow) : NULL;
    if (!of || t->nargs != o->nparams)
        return;
    scope_t s = { .c = c };
    for (int k = 0; k < c->nparams; k++) {
        int i = def_pos(c, c->params[k]);
        if (i >= 0 && i < RILL_PTG_MAX_VARS)
            s.vars[i] = lin_sym(c->params[k]);
    }
    scope_locals(&s);
    int back = d->dir == '<' ? '>' : '<', n = 0;
    const target_t *first = NULL;
    int first_line = 0;
    text_t got = { .o = 0 };
    for (const dep_t *od = of->deps; od; od = od->next) {
        if (od->dir != back)
            continue;
        const target_t *ts[2] = { od->then, od->other };
        for (int i = 0; i < 2; i++) {
            const target_t *ct = ts[i];
            if (!ct || ct->kind != T_TASK || strcmp(ct->flow, f->name) != 0 ||
                strcmp(ct->name, c->name) != 0 || ct->nargs != c->nparams)
                continue;
            text_t g = { .o = 0 };
            if (can_match(c, &s, t, o, ct, &g))
                return;
            if (n++ == 0) {
                first = ct;
                first_line = od->loc.line;
                got = g;
            }
        }
    }
    if (!first)
        return; /* no dependency back at all: reported by check_target */
    text_t me = { .o = 0 }, them = { .o = 0 }, dep = { .o = 0 }, other = { .o = 0 };
    put(&me, "%s(", c->name);
    for (int k = 0; k < c->nparams; k++)
        put(&me, "%s%s", c->params[k], k + 1 < c->nparams ? ", " : "");
    put(&me, ")");
    put_target(&dep, d->dir, t);
    put_target(&them, back, first);
    if (got.o)
        put(&other, ", which names %s there", got.buf);
    rillcc_error(t->loc,
                 "the two sides of this dependency disagree on the task: %s's '%s' is "
                 "answered by %s's flow %s with '%s' (line %d)%s, not %s%s; the arguments on "
                 "one side must give back the task on the other",
                 me.buf, dep.buf, o->name, of->name, them.buf, first_line, other.buf, me.buf,
                 n > 1 ? " (nor do its other dependencies on it)" : "");
}

static void check_args_agree(void)
{
    for (const tclass_t *c = prog->classes; c; c = c->next)
        for (const flow_t *f = c->flows; f; f = f->next)
            for (const dep_t *d = f->deps; d; d = d->next) {
                const target_t *ts[2] = { d->then, d->other };
                for (int i = 0; i < 2; i++)
                    if (ts[i] && ts[i]->kind == T_TASK)
                        check_target_args(c, f, d, ts[i]);
            }
}

int rillcc_check(program_t *p)
{
    prog = p;
    for (global_t *g = p->globals; g; g = g->next) {
        for (global_t *e = p->globals; e != g; e = e->next)
            if (strcmp(e->name, g->name) == 0)
                rillcc_error(g->loc, "global '%s' is declared twice (first at line %d)", g->name,
                             e->loc.line);
        if (!g->type[0])
            rillcc_error(g->loc, "global '%s' has an empty type", g->name);
        check_reserved(g->loc, g->name, "a global", false, has_cuda(NULL));
    }
    for (tclass_t *c = p->classes; c; c = c->next) {
        for (tclass_t *e = p->classes; e != c; e = e->next)
            if (strcmp(e->name, c->name) == 0)
                rillcc_error(c->loc, "task class '%s' is defined twice (first at line %d)", c->name,
                             e->loc.line);
        if (global_find(c->name))
            rillcc_error(c->loc, "task class '%s' has the name of a global", c->name);
        check_class(c);
    }
    /* on a program whose names and arities are right */
    if (rillcc_errors == 0)
        check_args_agree();
    if (!p->classes && rillcc_errors == 0)
        rillcc_warning((loc_t){ 1, 1 }, "no task class in this file");
    return rillcc_errors;
}
