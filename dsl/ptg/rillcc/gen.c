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
        char one[2]; /* on the stack: the operands' own calls must not overwrite it */
        const char *op = rillcc_op_text(e->op, one);
        fprintf(out, "(");
        expr(e->a, c);
        fprintf(out, " %s ", op);
        expr(e->b, c);
        fprintf(out, ")");
        return;
    }
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

/* the prelude of a generated function: the globals and the variables */
static void fn_head(const char *ret, const tclass_t *c, const char *what, const char *args)
{
    fprintf(out, "static %s %s_%s(%s)\n{\n", ret, c->name, what, args);
    fprintf(out, "    const %s_globals_t *G = g;\n    (void)G;\n", pname);
    if (strstr(args, "int64_t *v") && !strstr(args, "visit"))
        fprintf(out, "    (void)v;\n");
    if (strstr(args, "*out"))
        fprintf(out, "    (void)out;\n");
}

/* loops over the ranges of a target's arguments (a broadcast), then body, then closing */
static int open_args(const target_t *t, const tclass_t *c, const char *indent)
{
    int k = 0, loops = 0;
    fprintf(out, "%s{\n%s    int64_t a[%d] = { 0 };\n%s    (void)a;\n", indent, indent,
            t->nargs > 0 ? t->nargs : 1, indent);
    for (const arg_t *a = t->args; a; a = a->next, k++) {
        if (a->hi) {
            fprintf(out, "%s    for (a[%d] = ", indent, k);
            expr(a->lo, c);
            fprintf(out, "; a[%d] <= ", k);
            expr(a->hi, c);
            fprintf(out, "; a[%d]++)\n", k);
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
        fprintf(out, "    const int %s = (int)rill_t_->v[%d];\n    (void)%s;\n", d->name, vi,
                d->name);
    int fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        if (f->kind != F_CTL)
            fprintf(out, "    double *%s = (double *)rill_t_->data[%d];\n    (void)%s;\n", f->name,
                    fi, f->name);
    fprintf(out, "#line %d \"%s\"\n%s\n%s\n", b->code_line, prog->file, b->code, LINE_MARK);
    fprintf(out, "    return RILL_SUCCESS;\n}\n");
}

static void gen_class(const tclass_t *c, int ci)
{
    int nvars = 0, nflows = 0;
    for (const def_t *d = c->defs; d; d = d->next)
        nvars++;
    for (const flow_t *f = c->flows; f; f = f->next)
        nflows++;
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
    fprintf(out, " };\n\n");
    /* valid: the parameters in their ranges, the locals computed */
    fn_head("int", c, "valid", "const void *g, int64_t *v");
    for (const def_t *d = c->defs; d; d = d->next) {
        int i = def_index(c, d->name);
        if (!d->is_param) {
            fprintf(out, "    v[%d] = ", i);
            expr(d->lo, c);
            fprintf(out, ";\n");
            continue;
        }
        fprintf(out, "    if (v[%d] < ", i);
        expr(d->lo, c);
        if (d->hi) {
            fprintf(out, " || v[%d] > ", i);
            expr(d->hi, c);
        } else {
            fprintf(out, " || v[%d] > ", i);
            expr(d->lo, c);
        }
        fprintf(out, ")\n        return 0;\n");
        if (d->step) {
            fprintf(out, "    if ((v[%d] - ", i);
            expr(d->lo, c);
            fprintf(out, ") %% ");
            expr(d->step, c);
            fprintf(out, " != 0)\n        return 0;\n");
        }
    }
    fprintf(out, "    return 1;\n}\n\n");
    /* enumerate: nested loops in definition order */
    fn_head("void", c, "enumerate",
            "const void *g, void (*visit)(void *arg, const int64_t *v), void *arg");
    fprintf(out, "    int64_t v[%d] = { 0 };\n", nvars > 0 ? nvars : 1);
    int depth = 0;
    for (const def_t *d = c->defs; d; d = d->next) {
        int i = def_index(c, d->name);
        if (!d->is_param) {
            fprintf(out, "%*s{ v[%d] = ", 4 + 4 * depth, "", i);
            expr(d->lo, c);
            fprintf(out, ";\n");
        } else {
            fprintf(out, "%*sfor (v[%d] = ", 4 + 4 * depth, "", i);
            expr(d->lo, c);
            fprintf(out, "; v[%d] <= ", i);
            expr(d->hi ? d->hi : d->lo, c);
            fprintf(out, "; v[%d] += ", i);
            if (d->step)
                expr(d->step, c);
            else
                fprintf(out, "1");
            fprintf(out, ") {\n");
        }
        depth++;
    }
    fprintf(out, "%*svisit(arg, v);\n", 4 + 4 * depth, "");
    while (depth-- > 0)
        fprintf(out, "%*s}\n", 4 + 4 * depth, "");
    fprintf(out, "}\n\n");
    /* rank */
    fn_head("int", c, "rank", "const void *g, const int64_t *v");
    fprintf(out, "    (void)v;\n    return rill_matrix_tile_rank(G->%s, (int)(", c->aff_name);
    expr(c->aff_args->lo, c);
    fprintf(out, "), (int)(");
    expr(c->aff_args->next->lo, c);
    fprintf(out, "));\n}\n\n");
    /* ninputs: inputs from tasks (ranges of a control gather count each task) */
    fn_head("int", c, "ninputs", "const void *g, const int64_t *v");
    fprintf(out, "    (void)v;\n    int n = 0;\n");
    for (const flow_t *f = c->flows; f; f = f->next)
        for (const dep_t *d = f->deps; d; d = d->next) {
            if (d->dir != '<')
                continue;
            const target_t *ts[2] = { d->then, d->other };
            for (int k = 0; k < 2; k++) {
                if (!ts[k] || ts[k]->kind != T_TASK)
                    continue;
                guard_open(d, c, ts[k]);
                int loops = open_args(ts[k], c, "        ");
                fprintf(out, "            n++;\n        }\n    }\n");
                (void)loops;
            }
        }
    fprintf(out, "    return n;\n}\n\n");
    /* data_inputs: flows whose input is a tile */
    fn_head("void", c, "data_inputs", "const void *g, rill_ptg_task_t *t");
    fprintf(out, "    const int64_t *v = t->v;\n    (void)v;\n");
    int fi = 0;
    for (const flow_t *f = c->flows; f; f = f->next, fi++)
        for (const dep_t *d = f->deps; d; d = d->next) {
            if (d->dir != '<')
                continue;
            const target_t *ts[2] = { d->then, d->other };
            for (int k = 0; k < 2; k++) {
                if (ts[k] && ts[k]->kind == T_NONE && !strcmp(ts[k]->name, "NEW")) {
                    /* a fresh tile of the affinity tile's size */
                    guard_open(d, c, ts[k]);
                    fprintf(out, "        rill_ptg_new_tile(t, %d, G->%s, ", fi, c->aff_name);
                    expr(c->aff_args->lo, c);
                    fprintf(out, ", ");
                    expr(c->aff_args->next->lo, c);
                    fprintf(out, ");\n    }\n");
                    continue;
                }
                if (!ts[k] || ts[k]->kind != T_DATA)
                    continue;
                guard_open(d, c, ts[k]);
                fprintf(out, "        rill_ptg_tile_in(t, %d, G->%s, ", fi, ts[k]->name);
                expr(ts[k]->args->lo, c);
                fprintf(out, ", ");
                expr(ts[k]->args->next->lo, c);
                fprintf(out, ");\n    }\n");
            }
        }
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
                    fprintf(out, "        rill_ptg_write_tile(out, G->%s, ", ts[k]->name);
                    expr(ts[k]->args->lo, c);
                    fprintf(out, ", ");
                    expr(ts[k]->args->next->lo, c);
                    fprintf(out, ", %d);\n    }\n", fi);
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
    /* the bodies: globals, parameters, locals and flows as variables */
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
    (void)ci;
    (void)nflows;
}

static void gen_class_entry(const tclass_t *c)
{
    int nvars = 0, nflows = 0;
    for (const def_t *d = c->defs; d; d = d->next)
        nvars++;
    for (const flow_t *f = c->flows; f; f = f->next)
        nflows++;
    fprintf(out,
            "    { \"%s\", %d, %d, %d, %s_param_var, %s_flow_mode, %s_valid, %s_enumerate, "
            "%s_rank, %s_ninputs, %s_data_inputs, %s_release, ",
            c->name, c->nparams, nvars, nflows, c->name, c->name, c->name, c->name, c->name,
            c->name, c->name, c->name);
    if (c->priority)
        fprintf(out, "%s_priority, ", c->name);
    else
        fprintf(out, "NULL, ");
    if (c->flops)
        fprintf(out, "%s_flops, ", c->name);
    else
        fprintf(out, "NULL, ");
    if (c->urgent)
        fprintf(out, "%s_urgent, ", c->name);
    else
        fprintf(out, "NULL, ");
    bool cpu = false, cuda = false;
    for (const body_t *b = c->bodies; b; b = b->next) {
        cpu |= !b->type;
        cuda |= b->type && !strcmp(b->type, "CUDA");
    }
    if (cpu)
        fprintf(out, "%s_body_cpu, ", c->name);
    else
        fprintf(out, "NULL, ");
    if (cuda)
        fprintf(out,
                "\n#if RILL_HAVE_CUDA\n      %s_body_cuda\n#else\n      NULL\n#endif\n    },\n",
                c->name);
    else
        fprintf(out, "NULL },\n");
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
    /* the header */
    fprintf(h_out, "/* Generated by rillcc from %s: do not edit. */\n", p->file);
    fprintf(h_out, "#ifndef RILLCC_%s_H\n#define RILLCC_%s_H\n\n", name, name);
    fprintf(h_out, "#include \"rill/ptg.h\"\n\n");
    fprintf(h_out, "/** The globals of %s: set them, then %s_taskpool_create. */\n", p->file, name);
    fprintf(h_out, "typedef struct %s_globals {\n", name);
    for (const global_t *g = p->globals; g; g = g->next)
        fprintf(h_out, "    %s %s;\n", g->type, g->name);
    if (!p->globals)
        fprintf(h_out, "    int unused_;\n");
    fprintf(h_out, "} %s_globals_t;\n\n", name);
    fprintf(h_out, "extern const rill_ptg_program_t %s_program;\n\n", name);
    fprintf(h_out,
            "/** A taskpool that runs %s with globals g (copied); then rill_taskpool_wait. */\n",
            p->file);
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
    fprintf(out, "/* Generated by rillcc from %s: do not edit. */\n", p->file);
    fprintf(
        out,
        "#include <stddef.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    fprintf(out, "#include \"rill/config.h\" /* RILL_HAVE_CUDA, for the CUDA bodies */\n");
    if (p->prologue)
        fprintf(out, "#line %d \"%s\"\n%s\n", p->prologue_loc.line, p->file, p->prologue);
    fprintf(out, "#include \"%s\"\n", h_name);
    int ci = 0;
    for (const tclass_t *c = p->classes; c; c = c->next, ci++)
        gen_class(c, ci);
    fprintf(out, "\nstatic const rill_ptg_class_t %s_classes[] = {\n", name);
    for (const tclass_t *c = p->classes; c; c = c->next)
        gen_class_entry(c);
    /* the collections among the globals: the taskpool claims them while it runs */
    int ncoll = 0;
    fprintf(out, "};\n\nstatic const rill_ptg_global_t %s_collections[] = {", name);
    for (const global_t *g = p->globals; g; g = g->next)
        if (global_is_collection(g)) {
            fprintf(out, "\n    { \"%s\", offsetof(%s_globals_t, %s) },", g->name, name, g->name);
            ncoll++;
        }
    fprintf(out, "%s};\n", ncoll ? "\n" : " { NULL, 0 } ");
    fprintf(out,
            "\nconst rill_ptg_program_t %s_program = { \"%s\", %d, %s_classes, "
            "sizeof(%s_globals_t), %d, %s_collections };\n",
            name, name, ci, name, name, ncoll, name);
    fclose(out);
    int line = 1;
    for (char *p = buf; p && *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n == strlen(LINE_MARK) && !strncmp(p, LINE_MARK, n))
            fprintf(c_out, "#line %d \"%s\"\n", line + 1, c_name ? c_name : "rillcc.c");
        else
            fprintf(c_out, "%.*s\n", (int)n, p);
        line++;
        p = nl ? nl + 1 : p + n;
    }
    free(buf);
    return 0;
}
