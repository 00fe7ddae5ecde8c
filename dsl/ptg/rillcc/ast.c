/* rillcc's tree constructors and diagnostics. */
#include "ast.h"
#include "parser.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

program_t rillcc_prog;
int rillcc_errors;

/* the source's lines, for the line printed under a message (main.c sets them) */
const char *rillcc_source;
size_t rillcc_source_len;

/* every node of one compilation, freed together (rillcc_free_all): a header before each */
typedef struct block {
    struct block *next;
    max_align_t align[];
} block_t;
static block_t *blocks;

void *rillcc_alloc(size_t size)
{
    block_t *b = calloc(1, sizeof(block_t) + (size ? size : 1));
    if (!b) {
        fprintf(stderr, "rillcc: out of memory\n");
        exit(2);
    }
    b->next = blocks;
    blocks = b;
    return b->align;
}

void rillcc_free_all(void)
{
    while (blocks) {
        block_t *b = blocks;
        blocks = b->next;
        free(b);
    }
}

char *rillcc_strdup(const char *s)
{
    size_t n = strlen(s);
    char *d = rillcc_alloc(n + 1);
    memcpy(d, s, n + 1);
    return d;
}

expr_t *expr_new(expr_kind_t kind, loc_t loc)
{
    expr_t *e = rillcc_alloc(sizeof(*e));
    e->kind = kind;
    e->loc = loc;
    e->depth = 1;
    return e;
}

/* the source line number line (1-based) and a caret under column col */
static void show_line(int line, int col)
{
    if (!rillcc_source || line < 1)
        return;
    const char *p = rillcc_source, *end = rillcc_source + rillcc_source_len;
    for (int l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int len = (int)((nl ? nl : end) - p);
    if (len > 200)
        len = 200;
    fprintf(stderr, "    %.*s\n    ", len, p);
    for (int i = 1; i < col && i <= len; i++)
        fputc(p[i - 1] == '\t' ? '\t' : ' ', stderr);
    fprintf(stderr, "^\n");
}

static void report(const char *what, loc_t loc, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s:%d:%d: %s: ", rillcc_prog.file ? rillcc_prog.file : "<input>", loc.line,
            loc.col, what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    show_line(loc.line, loc.col);
}

void rillcc_error(loc_t loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error", loc, fmt, ap);
    va_end(ap);
    rillcc_errors++;
}

void rillcc_warning(loc_t loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("warning", loc, fmt, ap);
    va_end(ap);
}

const char *rillcc_op_text(int op, char one[2])
{
    switch (op) {
    case LE:
        return "<=";
    case GE:
        return ">=";
    case EQ:
        return "==";
    case NE:
        return "!=";
    case AND:
        return "&&";
    case OR:
        return "||";
    default:
        one[0] = (char)op;
        one[1] = '\0';
        return one;
    }
}
