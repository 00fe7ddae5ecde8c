/* One compilation: text in, diagnostics out (main.c for files, the fuzz target for bytes). */
#include <string.h>

#include "ast.h"

int yyparse(void);
void rillcc_lexer_begin(const char *src, size_t len);
void rillcc_lexer_end(void);
extern const char *rillcc_source;
extern size_t rillcc_source_len;

#define REVERSE_LIST(type, head)                                                                   \
    do {                                                                                           \
        type *prev_ = NULL, *cur_ = (head);                                                        \
        while (cur_) {                                                                             \
            type *next_ = cur_->next;                                                              \
            cur_->next = prev_;                                                                    \
            prev_ = cur_;                                                                          \
            cur_ = next_;                                                                          \
        }                                                                                          \
        (head) = prev_;                                                                            \
    } while (0)

int rillcc_compile(const char *name, const char *src, size_t len, FILE *dump)
{
    memset(&rillcc_prog, 0, sizeof(rillcc_prog));
    rillcc_errors = 0;
    rillcc_prog.file = name;
    rillcc_source = src;
    rillcc_source_len = len;
    if (len > RILLCC_MAX_INPUT) {
        rillcc_error((loc_t){ 1, 1 }, "the input is %zu bytes: at most %u (16 MiB) of source", len,
                     RILLCC_MAX_INPUT);
        return rillcc_errors;
    }
    const char *nul = memchr(src, '\0', len);
    if (nul) {
        size_t at = (size_t)(nul - src);
        loc_t l = { 1, 1 };
        for (size_t i = 0; i < at; i++, l.col++)
            if (src[i] == '\n') {
                l.line++;
                l.col = 0;
            }
        rillcc_error(l, "a NUL byte (offset %zu): a .rill file is text", at);
        return rillcc_errors;
    }
    rillcc_lexer_begin(src, len);
    int rc = yyparse();
    rillcc_lexer_end();
    if (rc != 0 && rillcc_errors == 0)
        rillcc_error((loc_t){ 1, 1 }, "the parser stopped (out of memory?)");
    if (rillcc_errors == 0) {
        REVERSE_LIST(global_t, rillcc_prog.globals);
        REVERSE_LIST(tclass_t, rillcc_prog.classes);
        rillcc_check(&rillcc_prog);
    }
    if (rillcc_errors == 0 && dump)
        rillcc_dump(&rillcc_prog, dump);
    rillcc_source = NULL;
    rillcc_source_len = 0;
    return rillcc_errors;
}
