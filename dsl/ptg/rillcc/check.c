/* rillcc's semantic checks (docs/ptg.md, "What rillcc checks"): names, scopes, the order of
 * definitions, collections against values, and that the two sides of every dependency
 * between tasks agree. Each problem is reported at its place; checking goes on so one run
 * reports them all. */
#include <limits.h>
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
                             "expression (a tile of it is written %s(m, n) in a dependency)",
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
                         "'rill_matrix_t *' names tiles",
                         t->name, g->type);
            return;
        }
        if (f->kind == F_CTL)
            rillcc_error(t->loc,
                         "a control flow (CTL) carries no data: it cannot %s a tile "
                         "of %s",
                         d->dir == '<' ? "read" : "write", t->name);
        if (t->nargs != 2)
            rillcc_error(t->loc, "a tile of %s has 2 indices (row, column), not %d", t->name,
                         t->nargs);
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
                     "tile of a global of type 'rill_matrix_t *'",
                     c->aff_name, g->type);
    else if (c->aff_nargs != 2)
        rillcc_error(c->aff_loc, "a tile of %s has 2 indices (row, column), not %d", c->aff_name,
                     c->aff_nargs);
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
    if (!p->classes && rillcc_errors == 0)
        rillcc_warning((loc_t){ 1, 1 }, "no task class in this file");
    return rillcc_errors;
}
