/* rillcc --dump: the parsed program, one line per item, for tests and for people. */
#include "ast.h"

static void expr_print(const expr_t *e, FILE *out)
{
    if (!e) {
        fprintf(out, "?");
        return;
    }
    switch (e->kind) {
    case E_INT:
        fprintf(out, "%lld", e->ival);
        break;
    case E_FLOAT:
    case E_ID:
        fprintf(out, "%s", e->text);
        break;
    case E_UN:
        fprintf(out, "%c(", e->op);
        expr_print(e->a, out);
        fprintf(out, ")");
        break;
    case E_BIN: {
        fprintf(out, "(");
        expr_print(e->a, out);
        char one[2];
        fprintf(out, " %s ", rillcc_op_text(e->op, one));
        expr_print(e->b, out);
        fprintf(out, ")");
        break;
    }
    case E_CALL:
        fprintf(out, "%s(", e->text);
        for (const arg_t *a = e->args; a; a = a->next) {
            expr_print(a->lo, out);
            fprintf(out, "%s", a->next ? ", " : "");
        }
        fprintf(out, ")");
        break;
    case E_TERN:
        fprintf(out, "(");
        expr_print(e->a, out);
        fprintf(out, " ? ");
        expr_print(e->b, out);
        fprintf(out, " : ");
        expr_print(e->c, out);
        fprintf(out, ")");
        break;
    }
}

static void args_print(const arg_t *a, FILE *out)
{
    fprintf(out, "(");
    for (; a; a = a->next) {
        expr_print(a->lo, out);
        if (a->hi) {
            fprintf(out, " .. ");
            expr_print(a->hi, out);
        }
        if (a->next)
            fprintf(out, ", ");
    }
    fprintf(out, ")");
}

static void target_print(const target_t *t, FILE *out)
{
    if (t->kind == T_TASK)
        fprintf(out, "%s %s", t->flow, t->name);
    else
        fprintf(out, "%s", t->name);
    if (t->kind != T_NONE)
        args_print(t->args, out);
}

void rillcc_dump(const program_t *p, FILE *out)
{
    for (const global_t *g = p->globals; g; g = g->next)
        fprintf(out, "global %s : %s\n", g->name, g->type);
    static const char *const kinds[] = { "READ", "WRITE", "RW", "CTL" };
    for (const tclass_t *c = p->classes; c; c = c->next) {
        fprintf(out, "class %s(", c->name);
        for (int i = 0; i < c->nparams; i++)
            fprintf(out, "%s%s", i ? ", " : "", c->params[i]);
        fprintf(out, ")\n");
        for (const def_t *d = c->defs; d; d = d->next) {
            fprintf(out, "  %s %s = ", d->is_param ? "param" : "local", d->name);
            expr_print(d->lo, out);
            if (d->hi) {
                fprintf(out, " .. ");
                expr_print(d->hi, out);
            }
            if (d->step) {
                fprintf(out, " .. ");
                expr_print(d->step, out);
            }
            fprintf(out, "\n");
        }
        fprintf(out, "  affinity %s", c->aff_name);
        args_print(c->aff_args, out);
        fprintf(out, "\n");
        for (const flow_t *f = c->flows; f; f = f->next) {
            fprintf(out, "  flow %s %s\n", kinds[f->kind], f->name);
            for (const dep_t *d = f->deps; d; d = d->next) {
                fprintf(out, "    %s ", d->dir == '<' ? "<-" : "->");
                if (d->guard) {
                    expr_print(d->guard, out);
                    fprintf(out, " ? ");
                }
                target_print(d->then, out);
                if (d->other) {
                    fprintf(out, " : ");
                    target_print(d->other, out);
                }
                fprintf(out, "\n");
            }
        }
        if (c->priority) {
            fprintf(out, "  priority ");
            expr_print(c->priority, out);
            fprintf(out, "\n");
        }
        if (c->flops) {
            fprintf(out, "  flops ");
            expr_print(c->flops, out);
            fprintf(out, "\n");
        }
        if (c->urgent) {
            fprintf(out, "  urgent ");
            expr_print(c->urgent, out);
            fprintf(out, "\n");
        }
        for (const body_t *b = c->bodies; b; b = b->next)
            fprintf(out, "  body %s (line %d)\n", b->type ? b->type : "CPU", b->code_line);
    }
}
