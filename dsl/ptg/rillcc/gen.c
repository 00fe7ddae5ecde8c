/* rillcc's code generator: C that defines the program's task classes for the PTG runtime
 * (include/rill/ptg.h) and a header with the globals' struct and NAME_taskpool_create. Run
 * on a checked program only. Expressions are C: names become v[i] (a parameter or local)
 * or G->name (a global). Bodies keep #line directives into the .rill file. */
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "parser.h"

static FILE *out;
/* replaced by '#line N "FILE.c"' once the file is written (its lines counted) */
#define LINE_MARK "#line RILLCC_HERE"
static const program_t *prog;
static const char *pname; /* the program's C name */

static int def_index(const tclass_t *c, const char *name)
{
    int i = 0;
    for (const def_t *d = c->defs; d; d = d->next, i++)
        if (!strcmp(d->name, name))
            return i;
    return -1;
}

static int class_index(const char *name)
{
    int i = 0;
    for (const tclass_t *c = prog->classes; c; c = c->next, i++)
        if (!strcmp(c->name, name))
            return i;
    return -1;
}

static const tclass_t *class_at(int k)
{
    const tclass_t *c = prog->classes;
    while (c && k-- > 0)
        c = c->next;
    return c;
}

static int flow_index(const tclass_t *c, const char *name)
{
    int i = 0;
    for (const flow_t *f = c->flows; f; f = f->next, i++)
        if (!strcmp(f->name, name))
            return i;
    return -1;
}

static const global_t *global_named(const char *name)
{
    for (const global_t *g = prog->globals; g; g = g->next)
        if (!strcmp(g->name, name))
            return g;
    return NULL;
}

/* Whether e is computed on integers in the generated C (its / and % then go through
 * rill_ptg_div): integers, parameters and locals (int64_t), globals of an integer type. */
static bool is_integer(const expr_t *e, const tclass_t *c)
{
    switch (e->kind) {
    case E_INT:
        return true;
    case E_FLOAT:
        return false;
    case E_ID: {
        if (c && def_index(c, e->text) >= 0)
            return true;
        for (const global_t *g = prog->globals; g; g = g->next)
            if (!strcmp(g->name, e->text))
                return global_is_integer(g);
        return false;
    }
    case E_UN:
        return e->op == '!' || is_integer(e->a, c);
    case E_BIN:
        if (e->op != '+' && e->op != '-' && e->op != '*' && e->op != '/' && e->op != '%')
            return true; /* comparisons, && and || give an int */
        return is_integer(e->a, c) && is_integer(e->b, c);
    case E_TERN:
        return is_integer(e->b, c) && is_integer(e->c, c);
    case E_CALL: /* (int64_t)f(...) */
        return true;
    }
    return false;
}

/* e's text as written (fully parenthesised below the top), at most cap - 1 bytes into
 * buf at *o; "..." marks a cut. The recursion is as deep as the tree (bounded). */
static void expr_text(const expr_t *e, char *buf, size_t cap, size_t *o, bool top)
{
    if (*o + 1 >= cap)
        return;
    char one[2];
    switch (e->kind) {
    case E_INT:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%lld", e->ival);
        break;
    case E_FLOAT:
    case E_ID:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%s", e->text);
        break;
    case E_UN:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%c", e->op);
        expr_text(e->a, buf, cap, o, false);
        break;
    case E_BIN:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%s", top ? "" : "(");
        expr_text(e->a, buf, cap, o, false);
        if (*o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, " %s ", rillcc_op_text(e->op, one));
        expr_text(e->b, buf, cap, o, false);
        if (!top && *o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, ")");
        break;
    case E_CALL:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%s(", e->text);
        for (const arg_t *a = e->args; a; a = a->next) {
            expr_text(a->lo, buf, cap, o, true);
            if (*o + 1 < cap)
                *o += (size_t)snprintf(buf + *o, cap - *o, "%s", a->next ? ", " : ")");
        }
        if (!e->args && *o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, ")");
        break;
    case E_TERN:
        *o += (size_t)snprintf(buf + *o, cap - *o, "%s", top ? "" : "(");
        expr_text(e->a, buf, cap, o, false);
        if (*o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, " ? ");
        expr_text(e->b, buf, cap, o, false);
        if (*o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, " : ");
        expr_text(e->c, buf, cap, o, false);
        if (!top && *o + 1 < cap)
            *o += (size_t)snprintf(buf + *o, cap - *o, ")");
        break;
    }
    if (*o >= cap)
        *o = cap - 1;
}

/* the .rill file's name without its directories, for the run time's messages */
static const char *file_base(void)
{
    const char *b = strrchr(prog->file, '/');
    return b ? b + 1 : prog->file;
}

/* a C string literal of s into f (the file's name may hold any character: a '"' or a '\\'
 * is escaped, a control or non-ASCII byte written in octal; #line takes such a literal) */
static void c_string_to(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 32 || ch >= 127)
            fprintf(f, "\\%03o", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void c_string(const char *s)
{
    c_string_to(out, s);
}

/* s inside a comment into f: a "*" "/" in it (a path 'c*' '/o.rill') would end the comment, so
 * it is written "*" "\\/" */
static void comment_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        fputc(*s, f);
        if (s[0] == '*' && s[1] == '/')
            fputc('\\', f);
    }
}

/* The C of e. Names become v[i] (a parameter or local) or G->name (a global). An integer
 * / or % goes through rill_ptg_div, which reports a divisor 0 or INT64_MIN / -1 (naming the
 * class, the .rill line and the expression) instead of trapping; the generated function
 * has G and bad_. */
static void expr(const expr_t *e, const tclass_t *c)
{
    switch (e->kind) {
    case E_INT:
        fprintf(out, "%lldLL", e->ival);
        return;
    case E_FLOAT:
        fprintf(out, "%s", e->text);
        return;
    case E_ID: {
        int i = c ? def_index(c, e->text) : -1;
        if (i >= 0)
            fprintf(out, "v[%d]", i);
        else
            fprintf(out, "G->%s", e->text);
        return;
    }
    case E_UN:
        fprintf(out, "(%c", e->op);
        expr(e->a, c);
        fprintf(out, ")");
        return;
    case E_BIN: {
        /* a constant divisor other than 0 and -1 cannot trap: C's operator */
        bool safe = e->b->kind == E_INT && e->b->ival != 0 && e->b->ival != -1;
        if ((e->op == '/' || e->op == '%') && !safe && is_integer(e->a, c) && is_integer(e->b, c)) {
            fprintf(out, "rill_ptg_div(G, &bad_, (int64_t)(");
            expr(e->a, c);
            fprintf(out, "), (int64_t)(");
            expr(e->b, c);
            fprintf(out, "), '%c', ", e->op);
            char what[512], text[160];
            size_t o = 0;
            expr_text(e, text, sizeof(text), &o, true);
            snprintf(what, sizeof(what), "%s, %s:%d: %s%s", c ? c->name : "the program",
                     file_base(), e->loc.line, text, o + 1 >= sizeof(text) ? "..." : "");
            c_string(what);
            fprintf(out, ")");
            return;
        }
        char one[2]; /* on the stack: the operands' own calls must not overwrite it */
        const char *op = rillcc_op_text(e->op, one);
        fprintf(out, "(");
        expr(e->a, c);
        fprintf(out, " %s ", op);
        expr(e->b, c);
        fprintf(out, ")");
        return;
    }
    case E_CALL: /* a C function of the prologue; a global goes as it is (G->name) */
        fprintf(out, "((int64_t)%s(", e->text);
        for (const arg_t *a = e->args; a; a = a->next) {
            expr(a->lo, c);
            fprintf(out, "%s", a->next ? ", " : "");
        }
        fprintf(out, "))");
        return;
    case E_TERN:
        fprintf(out, "(");
        expr(e->a, c);
        fprintf(out, " ? ");
        expr(e->b, c);
        fprintf(out, " : ");
        expr(e->c, c);
        fprintf(out, ")");
        return;
    }
}

/* The checked range of parameter d (definition i) into lo_i, hi_i, st_i, in a block the
 * caller closes; on a bad range (rill_ptg_range reported it) or a bad division in its ends,
 * fail_stmt runs. */
static void range_open(const tclass_t *c, const def_t *d, int i, const char *indent,
                       const char *fail_stmt)
{
    fprintf(out, "%s{\n%s    const int64_t lo_%d = ", indent, indent, i);
    expr(d->lo, c);
    fprintf(out, ";\n%s    const int64_t hi_%d = ", indent, i);
    expr(d->hi ? d->hi : d->lo, c);
    fprintf(out, ";\n%s    const int64_t st_%d = ", indent, i);
    if (d->step)
        expr(d->step, c);
    else
        fprintf(out, "1");
    char what[256];
    snprintf(what, sizeof(what), "%s, parameter %s (%s:%d)", c->name, d->name, file_base(),
             d->loc.line);
    fprintf(out, ";\n%s    if (bad_ || !rill_ptg_range(G, &bad_, lo_%d, hi_%d, st_%d, ", indent, i,
            i, i);
    c_string(what);
    fprintf(out, "))\n%s        %s\n", indent, fail_stmt);
}

/* the prelude of a generated function: the globals and the variables */
static void fn_head(const char *ret, const tclass_t *c, const char *what, const char *args)
{
    fprintf(out, "static %s %s_%s(%s)\n{\n", ret, c->name, what, args);
    fprintf(out, "    const %s_globals_t *G = g;\n    (void)G;\n", pname);
    fprintf(out, "    int bad_ = 0; /* a division or a range reported (rill_ptg_div) */\n"
                 "    (void)bad_;\n");
    if (strstr(args, "int64_t *v") && !strstr(args, "visit"))
        fprintf(out, "    (void)v;\n");
    if (strstr(args, "*out"))
        fprintf(out, "    (void)out;\n");
}

/* loops over the ranges of a target's arguments (a broadcast), then body, then closing;
 * each range's hi is computed once and checked (at most INT64_MAX - 1: a++ cannot
 * overflow), a bad one reported and its loop skipped */
static int open_args(const target_t *t, const tclass_t *c, const char *indent)
{
    int k = 0, loops = 0;
    fprintf(out, "%s{\n%s    int64_t a[%d] = { 0 };\n%s    (void)a;\n", indent, indent,
            t->nargs > 0 ? t->nargs : 1, indent);
    for (const arg_t *a = t->args; a; a = a->next, k++)
        if (a->hi) {
            fprintf(out, "%s    const int64_t lo_a%d = ", indent, k);
            expr(a->lo, c);
            fprintf(out, ", hi_a%d = ", k);
            expr(a->hi, c);
            char what[256];
            snprintf(what, sizeof(what), "%s, argument %d of %s %s (%s:%d)", c->name, k + 1,
                     t->flow ? t->flow : "", t->name, file_base(), t->loc.line);
            fprintf(out, ";\n%s    const int ok_a%d = rill_ptg_range(G, &bad_, lo_a%d, hi_a%d, 1, ",
                    indent, k, k, k);
            c_string(what);
            fprintf(out, ");\n");
        }
    k = 0;
    for (const arg_t *a = t->args; a; a = a->next, k++) {
        if (a->hi) {
            fprintf(out, "%s    for (a[%d] = lo_a%d; ok_a%d && a[%d] <= hi_a%d; a[%d]++)\n", indent,
                    k, k, k, k, k, k);
            loops++;
        } else {
            fprintf(out, "%s    if ((a[%d] = ", indent, k);
            expr(a->lo, c);
            fprintf(out, "), 1)\n");
        }
    }
    return loops;
}

static void guard_open(const dep_t *d, const tclass_t *c, const target_t *t)
{
    if (!d->guard)
        fprintf(out, "    if (1) {\n");
    else {
        fprintf(out, "    if (%s", t == d->then ? "" : "!");
        expr(d->guard, c);
        fprintf(out, ") {\n");
    }
}

/* One body as a function NAME_body_KIND: the globals, parameters, locals and flows as
 * variables (and, in a CUDA body, task: the runtime's task, for rill/cuda.h); the body's
 * lines are the .rill file's (#line), then the C file's again */
static void gen_body(const tclass_t *c, const body_t *b, const char *kind)
{
    fprintf(out, "static rill_status_t %s_body_%s(rill_ptg_task_t *rill_t_)\n{\n", c->name, kind);
    fprintf(out, "    const %s_globals_t *G = rill_t_->globals;\n    (void)G;\n", pname);
    if (!strcmp(kind, "cuda"))
        fprintf(out, "    rill_task_t *const task = rill_ptg_core_task(rill_t_);\n"
                     "    (void)task;\n");
    for (const global_t *g = prog->globals; g; g = g->next)
        fprintf(out, "    %s %s = G->%s;\n    (void)%s;\n", g->type, g->name, g->name, g->name);
    int vi = 0;
    for (const def_t *d = c->defs; d; d = d->next, vi++)
        fprintf(out, "    const int64_t %s = rill_t_->v[%d];\n    (void)%s;\n", d->name, vi,
                d->name); /* (as the runtime has them: an int cut T(4294967303) to 7) */
    int fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        if (f->kind != F_CTL) { /* its data as its type says (double * by default), and its
                                 * bytes: RILL_BYTES(flow) */
            const char *type = f->type ? f->type : "double *";
            fprintf(out, "    %s %s = (%s)rill_t_->data[%d];\n    (void)%s;\n", type, f->name, type,
                    fi, f->name);
            fprintf(out,
                    "    const size_t rill_bytes_%s = rill_t_->size[%d];\n"
                    "    (void)rill_bytes_%s;\n",
                    f->name, fi, f->name);
        }
    fprintf(out, "#line %d ", b->code_line);
    c_string(prog->file);
    fprintf(out, "\n%s\n%s\n", b->code, LINE_MARK);
    fprintf(out, "    return RILL_SUCCESS;\n}\n");
}

/* A class's tables: the variable of each parameter, the mode of each flow. */
static void gen_tables(const tclass_t *c)
{
    fprintf(out, "\n/* ---------------------------------------------------------------- %s */\n",
            c->name);
    fprintf(out, "static const int %s_param_var[] = {", c->name);
    for (int k = 0; k < c->nparams; k++)
        fprintf(out, "%s%d", k ? ", " : " ", def_index(c, c->params[k]));
    fprintf(out, "%s};\n", c->nparams ? " " : " 0 ");
    fprintf(out, "static const uint8_t %s_flow_mode[] = {", c->name);
    for (const flow_t *f = c->flows; f; f = f->next)
        fprintf(out, " %s,",
                f->kind == F_READ    ? "RILL_PTG_READ"
                : f->kind == F_WRITE ? "RILL_PTG_WRITE"
                : f->kind == F_RW    ? "RILL_PTG_READ | RILL_PTG_WRITE"
                                     : "0");
    fprintf(out, " };\n");
    fprintf(out, "static const char *const %s_flow_names[] = {", c->name);
    for (const flow_t *f = c->flows; f; f = f->next) {
        fprintf(out, " ");
        c_string(f->name);
        fprintf(out, ",");
    }
    fprintf(out, " };\nstatic const int %s_flow_lines[] = {", c->name);
    for (const flow_t *f = c->flows; f; f = f->next)
        fprintf(out, " %d,", f->loc.line);
    fprintf(out, " };\n\n");
}

/* NAME_valid: the parameters in their ranges (each checked as enumerate does), the locals
 * computed; 0 for a division that cannot be computed too. */
static void gen_valid(const tclass_t *c)
{
    fn_head("int", c, "valid", "const void *g, int64_t *v");
    for (const def_t *d = c->defs; d; d = d->next) {
        int i = def_index(c, d->name);
        if (!d->is_param) {
            fprintf(out, "    v[%d] = ", i);
            expr(d->lo, c);
            fprintf(out, ";\n    if (bad_)\n        return 0;\n");
            continue;
        }
        range_open(c, d, i, "    ", "return 0;");
        /* v - lo as unsigned: v >= lo, so no overflow */
        fprintf(out,
                "        if (v[%d] < lo_%d || v[%d] > hi_%d ||\n"
                "            ((uint64_t)v[%d] - (uint64_t)lo_%d) %% (uint64_t)st_%d != 0)\n"
                "            return 0;\n    }\n",
                i, i, i, i, i, i, i);
    }
    fprintf(out, "    return 1;\n}\n\n");
}

/* NAME_enumerate: nested loops in definition order, each range checked before its loop (hi at
 * most INT64_MAX - step: v += step cannot overflow). */
static void gen_enumerate(const tclass_t *c)
{
    int nvars = 0;
    for (const def_t *d = c->defs; d; d = d->next)
        nvars++;
    fn_head("int", c, "enumerate",
            "const void *g, int (*visit)(void *arg, const int64_t *v), void *arg");
    fprintf(out, "    int64_t v[%d] = { 0 };\n", nvars > 0 ? nvars : 1);
    int depth = 0;
    for (const def_t *d = c->defs; d; d = d->next) {
        int i = def_index(c, d->name);
        int ind = 4 + 4 * depth;
        if (!d->is_param) {
            fprintf(out, "%*s{\n%*s    v[%d] = ", ind, "", ind, "", i);
            expr(d->lo, c);
            fprintf(out, ";\n%*s    if (bad_)\n%*s        return 1;\n", ind, "", ind, "");
        } else {
            char indent[64];
            snprintf(indent, sizeof(indent), "%*s", ind, "");
            range_open(c, d, i, indent, "return 1;");
            fprintf(out, "%*s    for (v[%d] = lo_%d; v[%d] <= hi_%d; v[%d] += st_%d) {\n", ind, "",
                    i, i, i, i, i, i);
        }
        depth++;
    }
    fprintf(out, "%*s    if (visit(arg, v))\n%*s        return 1;\n", 4 * depth, "", 4 * depth, "");
    int braces = nvars + c->nparams; /* a block per definition, a loop per parameter */
    while (braces-- > 0)
        fprintf(out, "%*s}\n", 4 + 2 * braces, "");
    fprintf(out, "    return 0;\n}\n\n");
}

/* ---------------------------------------------------------------- a flow's input
 *
 * A flow's input is the first of its input dependencies whose guard holds (as PaRSEC's
 * JDF): '<- (g) ? T' is taken when g holds, else the next one is tried; '<- (g) ? T : U'
 * and '<- T' always give one. Every function that looks at inputs (ninputs, sources,
 * data_inputs, takes) walks the same chain, so they agree on which one it is. */

/* What the chain does for one choice: t the target taken (NULL: no guard holds), fi the
 * flow's index, ind the indentation. */
typedef void (*alt_fn)(const tclass_t *c, const flow_t *f, int fi, const target_t *t,
                       const char *ind);

/* The chain of flow f's inputs (index fi): if (g1) { ... } else if (g2) { ... } else { ... },
 * each branch written by alt. Nothing for a flow without inputs. */
static void input_chain(const tclass_t *c, const flow_t *f, int fi, alt_fn alt)
{
    bool any = false, open = false;
    for (const dep_t *d = f->deps; d; d = d->next) {
        if (d->dir != '<')
            continue;
        any = true;
        if (!d->guard) { /* always: the chain ends */
            fprintf(out, "    %s{\n", open ? "} else " : "");
            alt(c, f, fi, d->then, "        ");
            fprintf(out, "    }\n");
            return;
        }
        fprintf(out, "    %sif (", open ? "} else " : "");
        expr(d->guard, c);
        fprintf(out, ") {\n");
        alt(c, f, fi, d->then, "        ");
        open = true;
        if (d->other) { /* one or the other: the chain ends */
            fprintf(out, "    } else {\n");
            alt(c, f, fi, d->other, "        ");
            fprintf(out, "    }\n");
            return;
        }
    }
    if (!any)
        return;
    fprintf(out, "    } else {\n"); /* no guard holds */
    alt(c, f, fi, NULL, "        ");
    fprintf(out, "    }\n");
}

static void alt_count(const tclass_t *c, const flow_t *f, int fi, const target_t *t,
                      const char *ind)
{
    (void)f;
    (void)fi;
    if (!t || t->kind != T_TASK)
        return;
    open_args(t, c, ind);
    fprintf(out, "%s        n++;\n%s}\n", ind, ind);
}

static void alt_visit(const tclass_t *c, const flow_t *f, int fi, const target_t *t,
                      const char *ind)
{
    (void)f;
    if (!t || t->kind != T_TASK)
        return;
    open_args(t, c, ind);
    fprintf(out, "%s        visit(arg, %d, %d, a);\n%s}\n", ind, fi, class_index(t->name), ind);
}

/* takes: whether the sender (class cls, flow from, parameters p) is the task the taken input
 * names (how many inputs that one gives: a gather's range counts each task), and what it
 * names, into want (for messages) */
static void alt_takes(const tclass_t *c, const flow_t *f, int fi, const target_t *t,
                      const char *ind)
{
    (void)f;
    (void)fi;
    if (!t) {
        fprintf(out,
                "%sif (want)\n%s    snprintf(want, cap, \"no input: none of its input guards "
                "holds\");\n",
                ind, ind);
        return;
    }
    if (t->kind != T_TASK) {
        fprintf(out, "%sif (want)\n%s    snprintf(want, cap, \"%%s (%%s:%%d)\", ", ind, ind);
        c_string(t->kind == T_DATA         ? "a tile or datum of its collection"
                 : !strcmp(t->name, "NEW") ? "NEW"
                                           : "NULL (no input)");
        fprintf(out, ", ");
        c_string(file_base());
        fprintf(out, ", %d);\n", t->loc.line);
        return;
    }
    /* its arguments: lo_k .. hi_k (one value: lo_k == hi_k) */
    int k = 0;
    for (const arg_t *a = t->args; a; a = a->next, k++) {
        fprintf(out, "%sconst int64_t lo_%d = ", ind, k);
        expr(a->lo, c);
        fprintf(out, ", hi_%d = ", k);
        expr(a->hi ? a->hi : a->lo, c);
        fprintf(out, ";\n");
    }
    /* "X P(1, 0 .. 3) (file.rill:12)" */
    fprintf(out, "%sif (want) {\n%s    size_t o_ = (size_t)snprintf(want, cap, \"%%s %%s(\", ", ind,
            ind);
    c_string(t->flow);
    fprintf(out, ", ");
    c_string(t->name);
    fprintf(out, ");\n");
    for (k = 0; k < t->nargs; k++)
        fprintf(out,
                "%s    if (o_ < cap)\n%s        o_ += (size_t)(lo_%d == hi_%d ? snprintf(want + "
                "o_, cap - o_, \"%s%%lld\", (long long)lo_%d) : snprintf(want + o_, cap - o_, "
                "\"%s%%lld .. %%lld\", (long long)lo_%d, (long long)hi_%d));\n",
                ind, ind, k, k, k ? ", " : "", k, k ? ", " : "", k, k);
    fprintf(out, "%s    if (o_ < cap)\n%s        snprintf(want + o_, cap - o_, \") (%%s:%%d)\", ",
            ind, ind);
    c_string(file_base());
    fprintf(out, ", %d);\n%s}\n", t->loc.line, ind);
    fprintf(out, "%sif (cls != %d || from != %d)\n%s    return 0;\n", ind, class_index(t->name),
            flow_index(class_at(class_index(t->name)), t->flow), ind);
    fprintf(out, "%sint64_t n_ = 1;\n", ind);
    for (k = 0; k < t->nargs; k++)
        fprintf(out,
                "%sif (p[%d] < lo_%d || p[%d] > hi_%d)\n%s    return 0;\n"
                "%sn_ *= hi_%d - lo_%d + 1;\n",
                ind, k, k, k, k, ind, ind, k, k);
    fprintf(out, "%sreturn n_;\n", ind);
}

/* NAME_rank, NAME_ninputs (inputs from tasks: ranges of a control gather count each task),
 * NAME_sources (the tasks of those inputs, as ninputs counts them) and NAME_takes (whether a
 * delivery comes from the task its flow's input names). */
static void gen_graph(const tclass_t *c)
{
    /* rank: the affinity's, checked (rill_ptg_tile_rank: a tile outside the collection is
     * reported naming the task) */
    fn_head("int", c, "rank", "const void *g, const int64_t *v");
    fprintf(out, "    const int64_t p_[] = {");
    for (int k = 0; k < c->nparams; k++)
        fprintf(out, " v[%d],", def_index(c, c->params[k]));
    fprintf(out, " 0 };\n");
    bool keyed = global_is_keyed(global_named(c->aff_name));
    fprintf(out, "    return rill_ptg_%s_rank(G, &bad_, G->%s, ", keyed ? "datum" : "tile",
            c->aff_name);
    if (keyed) {
        fprintf(out, "(uint64_t)(");
        expr(c->aff_args->lo, c);
        fprintf(out, ")");
    } else {
        expr(c->aff_args->lo, c);
        fprintf(out, ", ");
        expr(c->aff_args->next->lo, c);
    }
    fprintf(out, ", ");
    c_string(c->name);
    char where[400], text[300];
    size_t o = (size_t)snprintf(text, sizeof(text), "%s(", c->aff_name);
    for (const arg_t *a = c->aff_args; a; a = a->next) {
        expr_text(a->lo, text, sizeof(text), &o, true);
        if (o + 1 < sizeof(text))
            o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", a->next ? ", " : ")");
    }
    snprintf(where, sizeof(where), "%s (%s:%d)", text, file_base(), c->aff_loc.line);
    fprintf(out, ", p_, %d, ", c->nparams);
    c_string(where);
    fprintf(out, ");\n}\n\n");
    /* ninputs: the inputs from tasks, one per flow (a control gather: each task of its
     * range) */
    fn_head("int", c, "ninputs", "const void *g, const int64_t *v");
    fprintf(out, "    (void)v;\n    int n = 0;\n");
    int fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        input_chain(c, f, fi, alt_count);
    fprintf(out, "    return n;\n}\n\n");
    /* sources: the tasks of those inputs, as ninputs counts them */
    fn_head("void", c, "sources",
            "const void *g, const int64_t *v, void (*visit)(void *arg, int flow, int cls, "
            "const int64_t *params), void *arg");
    fprintf(out, "    (void)v;\n    (void)visit;\n    (void)arg;\n");
    fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        input_chain(c, f, fi, alt_visit);
    fprintf(out, "}\n\n");
    /* takes */
    fn_head("int64_t", c, "takes",
            "const void *g, const int64_t *v, int flow, int cls, int from, const int64_t *p, "
            "char *want, size_t cap");
    fprintf(out, "    (void)v;\n    (void)cls;\n    (void)from;\n    (void)p;\n");
    fprintf(out, "    if (want)\n        snprintf(want, cap, \"nothing (no such flow)\");\n"
                 "    switch (flow) {\n");
    fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++) {
        fprintf(out, "    case %d: {\n", fi);
        bool any = false;
        for (const dep_t *d = f->deps; d; d = d->next)
            any |= d->dir == '<';
        if (!any)
            fprintf(out, "    if (want)\n        snprintf(want, cap, \"no input: the flow has "
                         "none\");\n");
        input_chain(c, f, fi, alt_takes);
        fprintf(out, "    return 0;\n    }\n");
    }
    fprintf(out, "    }\n    return 0;\n}\n\n");
}

/* "        rill_ptg_in_tile(t, 2, G->A, m, n);" or, for a keyed collection, "..._datum(t, 2,
 * G->D, key);": fn's tile or datum form (rill_ptg_in, _new, _write), first its first
 * argument, then the flow (flow >= 0) or after the place the source flow (from >= 0) */
static void place_call(const char *fn, const char *first, int flow, const char *coll,
                       const arg_t *args, const tclass_t *c, int from)
{
    bool keyed = global_is_keyed(global_named(coll));
    fprintf(out, "        %s_%s(%s, ", fn, keyed ? "datum" : "tile", first);
    if (flow >= 0)
        fprintf(out, "%d, ", flow);
    fprintf(out, "G->%s, ", coll);
    if (keyed) {
        fprintf(out, "(uint64_t)(");
        expr(args->lo, c);
        fprintf(out, ")");
    } else {
        expr(args->lo, c);
        fprintf(out, ", ");
        expr(args->next->lo, c);
    }
    if (from >= 0)
        fprintf(out, ", %d", from);
    fprintf(out, ");\n");
}

/* data_inputs: a tile, a datum or NEW (a fresh tile of the affinity tile's size) */
static void alt_data(const tclass_t *c, const flow_t *f, int fi, const target_t *t, const char *ind)
{
    (void)f;
    (void)ind;
    if (t && t->kind == T_NONE && !strcmp(t->name, "NEW"))
        place_call("rill_ptg_new", "t", fi, c->aff_name, c->aff_args, c, -1);
    else if (t && t->kind == T_DATA)
        place_call("rill_ptg_in", "t", fi, t->name, t->args, c, -1);
    else if (!t && f->kind != F_CTL) /* its body would get NULL: '<- NULL' says it may */
        fprintf(out, "        rill_ptg_no_input(t, %d);\n", fi);
}

/* NAME_data_inputs (flows whose input is a tile) and NAME_release (outputs to tasks and
 * tiles). */
static void gen_data(const tclass_t *c)
{
    /* data_inputs: flows whose input is a tile or NEW */
    fn_head("void", c, "data_inputs", "const void *g, rill_ptg_task_t *t");
    fprintf(out, "    const int64_t *v = t->v;\n    (void)v;\n");
    int fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        input_chain(c, f, fi, alt_data);
    fprintf(out, "}\n\n");
    /* release: outputs to tasks and tiles */
    fn_head("void", c, "release", "const void *g, const rill_ptg_task_t *t, rill_ptg_out_t *out");
    fprintf(out, "    const int64_t *v = t->v;\n    (void)v;\n");
    fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        for (const dep_t *d = f->deps; d; d = d->next) {
            if (d->dir != '>')
                continue;
            const target_t *ts[2] = { d->then, d->other };
            for (int k = 0; k < 2; k++) {
                if (!ts[k] || ts[k]->kind == T_NONE)
                    continue;
                guard_open(d, c, ts[k]);
                if (ts[k]->kind == T_DATA) {
                    place_call("rill_ptg_write", "out", -1, ts[k]->name, ts[k]->args, c, fi);
                    fprintf(out, "    }\n");
                    continue;
                }
                int oc = class_index(ts[k]->name);
                int of = flow_index(class_at(oc), ts[k]->flow);
                open_args(ts[k], c, "        ");
                fprintf(out, "            rill_ptg_deliver(out, %d, a, %d, %d);\n", oc, of, fi);
                fprintf(out, "        }\n    }\n");
            }
        }
    fprintf(out, "}\n\n");
}

/* NAME_priority, NAME_flops, NAME_urgent, where the class has them. */
static void gen_scalars(const tclass_t *c)
{
    if (c->priority) {
        fn_head("int32_t", c, "priority", "const void *g, const int64_t *v");
        fprintf(out, "    (void)v;\n    return (int32_t)(");
        expr(c->priority, c);
        fprintf(out, ");\n}\n\n");
    }
    if (c->flops) {
        fn_head("double", c, "flops", "const void *g, const int64_t *v");
        fprintf(out, "    (void)v;\n    return (double)(");
        expr(c->flops, c);
        fprintf(out, ");\n}\n\n");
    }
    if (c->urgent) {
        fn_head("int", c, "urgent", "const void *g, const int64_t *v");
        fprintf(out, "    (void)v;\n    return (");
        expr(c->urgent, c);
        fprintf(out, ") != 0;\n}\n\n");
    }
}

/* The bodies: globals, parameters, locals and flows as variables. */
static void gen_bodies(const tclass_t *c)
{
    const body_t *cpu = NULL, *cuda = NULL;
    for (const body_t *b = c->bodies; b; b = b->next) {
        if (!b->type)
            cpu = b;
        else if (!strcmp(b->type, "CUDA"))
            cuda = b;
    }
    if (cpu)
        gen_body(c, cpu, "cpu");
    if (cuda) { /* only where Rill has CUDA: the code calls the toolkit's libraries */
        fprintf(out, "#if RILL_HAVE_CUDA\n");
        gen_body(c, cuda, "cuda");
        fprintf(out, "#endif\n");
    }
}

static void gen_class(const tclass_t *c)
{
    gen_tables(c);
    gen_valid(c);
    gen_enumerate(c);
    gen_graph(c);
    gen_data(c);
    gen_scalars(c);
    gen_bodies(c);
}

static void gen_class_entry(const tclass_t *c)
{
    int nvars = 0, nflows = 0;
    for (const def_t *d = c->defs; d; d = d->next)
        nvars++;
    for (const flow_t *f = c->flows; f; f = f->next)
        nflows++;
    const char *n = c->name;
    fprintf(out,
            "    { .name = \"%s\", .nparams = %d, .nvars = %d, .nflows = %d,\n"
            "      .param_var = %s_param_var, .flow_mode = %s_flow_mode,\n"
            "      .flow_names = %s_flow_names, .flow_lines = %s_flow_lines,\n"
            "      .valid = %s_valid, .enumerate = %s_enumerate, .rank = %s_rank,\n"
            "      .ninputs = %s_ninputs, .sources = %s_sources, .takes = %s_takes,\n"
            "      .data_inputs = %s_data_inputs, .release = %s_release,\n",
            n, c->nparams, nvars, nflows, n, n, n, n, n, n, n, n, n, n, n, n);
    if (c->priority)
        fprintf(out, "      .priority = %s_priority,\n", n);
    if (c->flops)
        fprintf(out, "      .flops = %s_flops,\n", n);
    if (c->urgent)
        fprintf(out, "      .urgent = %s_urgent,\n", n);
    bool cpu = false, cuda = false;
    for (const body_t *b = c->bodies; b; b = b->next) {
        cpu |= !b->type;
        cuda |= b->type && !strcmp(b->type, "CUDA");
    }
    if (cpu)
        fprintf(out, "      .body_cpu = %s_body_cpu,\n", n);
    if (cuda)
        fprintf(out, "#if RILL_HAVE_CUDA\n      .body_cuda = %s_body_cuda,\n#endif\n", n);
    fprintf(out, "    },\n");
}

int rillcc_generate(const program_t *p, const char *name, FILE *c_out, FILE *h_out,
                    const char *h_name, const char *c_name)
{
    prog = p;
    pname = name;
    int bad = 0;
    for (const tclass_t *c = p->classes; c; c = c->next) {
    }
    if (bad)
        return bad;
    /* a header whose name #include cannot take */
    if (strpbrk(h_name, "\"\\\n")) {
        rillcc_error((loc_t){ 1, 1 },
                     "the generated header's name '%s' holds a '\"', a '\\' or a newline, which "
                     "#include \"...\" cannot take: name it otherwise (-H)",
                     h_name);
        return 1;
    }
    /* the header */
    fprintf(h_out, "/* Generated by rillcc from ");
    comment_text(h_out, p->file);
    fprintf(h_out, ": do not edit. */\n");
    fprintf(h_out, "#ifndef RILLCC_%s_H\n#define RILLCC_%s_H\n\n", name, name);
    fprintf(h_out, "#include \"rill/ptg.h\"\n\n");
    fprintf(h_out, "/** The globals of ");
    comment_text(h_out, p->file);
    fprintf(h_out, ": set them, then %s_taskpool_create. */\n", name);
    fprintf(h_out, "typedef struct %s_globals {\n", name);
    for (const global_t *g = p->globals; g; g = g->next)
        fprintf(h_out, "    %s %s;\n", g->type, g->name);
    if (!p->globals)
        fprintf(h_out, "    int unused_;\n");
    fprintf(h_out, "} %s_globals_t;\n\n", name);
    fprintf(h_out, "extern const rill_ptg_program_t %s_program;\n\n", name);
    fprintf(h_out, "/** A taskpool that runs ");
    comment_text(h_out, p->file);
    fprintf(h_out, " with globals g (copied); then rill_taskpool_wait. */\n");
    fprintf(h_out,
            "static inline rill_status_t %s_taskpool_create(rill_context_t *ctx, const "
            "%s_globals_t *g,\n        rill_taskpool_t **tp)\n{\n    return "
            "rill_ptg_taskpool_create(ctx, &%s_program, g, tp);\n}\n\n#endif\n",
            name, name, name);
    /* the C file, in memory first: the marks after each body become #line directives */
    char *buf = NULL;
    size_t len = 0;
    out = open_memstream(&buf, &len);
    if (!out) {
        rillcc_error((loc_t){ 1, 1 }, "code generation: out of memory");
        return 1;
    }
    fprintf(out, "/* Generated by rillcc from ");
    comment_text(out, p->file);
    fprintf(out, ": do not edit. */\n");
    fprintf(out, "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include "
                 "<stdlib.h>\n#include "
                 "<string.h>\n\n");
    fprintf(out, "#include \"rill/config.h\" /* RILL_HAVE_CUDA, for the CUDA bodies */\n");
    if (p->prologue) {
        fprintf(out, "#line %d ", p->prologue_loc.line);
        c_string(p->file);
        fprintf(out, "\n%s\n", p->prologue);
    }
    fprintf(out, "#include \"%s\"\n", h_name);
    fprintf(out,
            "/* a data flow's bytes, in a body */\n#define RILL_BYTES(flow) (rill_bytes_##flow)\n");
    int ci = 0; /* (the classes' count, in the program) */
    for (const tclass_t *c = p->classes; c; c = c->next, ci++)
        gen_class(c);
    fprintf(out, "\nstatic const rill_ptg_class_t %s_classes[] = {\n", name);
    for (const tclass_t *c = p->classes; c; c = c->next)
        gen_class_entry(c);
    /* the collections among the globals: the taskpool claims them while it runs */
    int ncoll = 0;
    fprintf(out, "};\n\nstatic const rill_ptg_global_t %s_collections[] = {", name);
    for (const global_t *g = p->globals; g; g = g->next)
        if (global_is_collection(g)) {
            fprintf(out, "\n    { \"%s\", offsetof(%s_globals_t, %s), %d },", g->name, name,
                    g->name, global_is_keyed(g));
            ncoll++;
        }
    fprintf(out, "%s};\n", ncoll ? "\n" : " { NULL, 0, 0 } ");
    fprintf(out, "\nconst rill_ptg_program_t %s_program = { .name = \"%s\", .file = ", name, name);
    c_string(file_base());
    fprintf(out,
            ", .nclasses = %d, .classes = %s_classes, .globals_size = sizeof(%s_globals_t), "
            ".ncollections = %d, .collections = %s_collections };\n",
            ci, name, name, ncoll, name);
    fclose(out);
    int line = 1;
    for (char *p = buf; p && *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n == strlen(LINE_MARK) && !strncmp(p, LINE_MARK, n)) {
            fprintf(c_out, "#line %d ", line + 1);
            c_string_to(c_out, c_name ? c_name : "rillcc.c");
            fputc('\n', c_out);
        } else
            fprintf(c_out, "%.*s\n", (int)n, p);
        line++;
        p = nl ? nl + 1 : p + n;
    }
    free(buf);
    return 0;
}
